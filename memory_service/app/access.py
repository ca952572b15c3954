"""Transcript and access write use cases, one entry each: the unit of work under the request
id, the domain's decision, the answer stored, commit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from memory_service.app.transactions import Answer, RequestKey, Transactions
from memory_service.domain.errors import batch_item
from memory_service.domain.model import (
    Customer,
    CustomerGrant,
    Identity,
    Message,
    Speaker,
    TurnStatus,
    utcnow,
)
from memory_service.domain.ports import UnitOfWork
from memory_service.domain.services import AccessUseCases, TranscriptUseCases

A = TypeVar("A")


class TranscriptCommands:
    def __init__(self, transactions: Transactions, transcript: TranscriptUseCases) -> None:
        self._tx = transactions
        self._transcript = transcript

    def append(
        self,
        identity: Identity,
        key: RequestKey[A],
        conversation_id: str,
        message: tuple[Speaker, str, TurnStatus],
        present: Callable[[Message], A],
    ) -> A:
        """Appends to the caller's own conversation of that id (created on first use)."""
        speaker, text, status = message

        def work(uow: UnitOfWork) -> Answer[A]:
            appended = self._transcript.append(
                uow, identity, conversation_id, speaker, text, status, utcnow()
            )
            return Answer(present(appended))

        return self._tx.write(identity, key, work)

    def batch_append(
        self,
        identity: Identity,
        key: RequestKey[A],
        messages: Sequence[tuple[str, tuple[Speaker, str, TurnStatus]]],
        present: Callable[[list[Message]], A],
    ) -> A:
        """Each (conversation id, message) appended as by `append`, in order, in one
        transaction: all or nothing, the first refusal naming its item (`requests[i]`)."""

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            appended = []
            for index, (conversation_id, (speaker, text, status)) in enumerate(messages):
                with batch_item("requests", index):
                    appended.append(
                        self._transcript.append(
                            uow, identity, conversation_id, speaker, text, status, now
                        )
                    )
            return Answer(present(appended))

        return self._tx.write(identity, key, work)


class AccessCommands:
    def __init__(self, transactions: Transactions, access: AccessUseCases) -> None:
        self._tx = transactions
        self._access = access

    def grant(
        self,
        identity: Identity,
        key: RequestKey[A],
        user_id: str,
        customer_id: str,
        present: Callable[[CustomerGrant], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            grant = self._access.grant(uow, identity, user_id, customer_id, utcnow())
            return Answer(present(grant))

        return self._tx.write(identity, key, work)

    def revoke(
        self,
        identity: Identity,
        key: RequestKey[A],
        user_id: str,
        customer_id: str,
        present: Callable[[bool], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._access.revoke(uow, identity, user_id, customer_id)))

        return self._tx.write(identity, key, work)

    def register_customer(
        self,
        identity: Identity,
        key: RequestKey[A],
        customer_id: str,
        display_name: str,
        present: Callable[[Customer], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            customer = self._access.register_customer(
                uow, identity, customer_id, display_name, utcnow()
            )
            return Answer(present(customer))

        return self._tx.write(identity, key, work)

    def delete_customer(
        self,
        identity: Identity,
        key: RequestKey[A],
        customer_id: str,
        present: Callable[[Customer], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._access.delete_customer(uow, identity, customer_id)))

        return self._tx.write(identity, key, work)
