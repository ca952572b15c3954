"""Transcript and access use cases, one entry each. A write: the unit of work under the request
id, the domain's decision, the answer stored, commit. A read: one read unit of work, the
domain's answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from memory_service.app.transactions import Answer, RequestKey, Transactions
from memory_service.domain.access import AccessUseCases
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
from memory_service.domain.transcripts import TranscriptUseCases

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
        transaction: all or nothing (the transport names a refused item, `requests[i]`)."""

        def work(uow: UnitOfWork) -> Answer[A]:
            appended = self._transcript.append_many(
                uow,
                identity,
                [(conversation, *message) for conversation, message in messages],
                utcnow(),
            )
            return Answer.later(lambda: present(appended))

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


class TranscriptQueries:
    """Reading a conversation: whose it is and who may read it is `domain.conversations`."""

    def __init__(self, transactions: Transactions, transcript: TranscriptUseCases) -> None:
        self._tx = transactions
        self._transcript = transcript

    def messages(
        self, identity: Identity, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]:
        return self._tx.read(
            identity,
            lambda uow: self._transcript.list(
                uow, identity, conversation_id, after_sequence, limit
            ),
        )

    def get(self, identity: Identity, conversation_id: str, message_id: str) -> Message:
        return self._tx.read(
            identity,
            lambda uow: self._transcript.get(uow, identity, conversation_id, message_id),
        )


class AccessQueries:
    """Reading grants and customers; who may see which is `domain.access.AccessUseCases`."""

    def __init__(self, transactions: Transactions, access: AccessUseCases) -> None:
        self._tx = transactions
        self._access = access

    def grants(
        self, identity: Identity, user_id: str, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]:
        """`user_id` empty: the caller's own grants (admins: every user's)."""
        return self._tx.read(
            identity, lambda uow: self._access.list(uow, identity, user_id, after, limit)
        )

    def grant(self, identity: Identity, user_id: str, customer_id: str) -> CustomerGrant:
        return self._tx.read(
            identity, lambda uow: self._access.get_grant(uow, identity, user_id, customer_id)
        )

    def customer(self, identity: Identity, customer_id: str) -> Customer:
        return self._tx.read(
            identity, lambda uow: self._access.get_customer(uow, identity, customer_id)
        )

    def customers(self, identity: Identity, after_id: str, limit: int) -> list[Customer]:
        return self._tx.read(
            identity, lambda uow: self._access.list_customers(uow, identity, after_id, limit)
        )
