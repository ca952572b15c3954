"""Transcript use cases, one entry each. A write: the unit of work under the request id,
the domain's decision, the answer stored, commit. A read: one read unit of work, the
domain's answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Identity, Message, Speaker, TurnStatus, utcnow
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.transcripts.domain.transcripts import TranscriptUseCases

A = TypeVar("A")


@dataclass(eq=False)
class TranscriptCommands:
    _tx: Transactions
    _transcript: TranscriptUseCases

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


@dataclass(eq=False)
class TranscriptQueries:
    """Reading a conversation: whose it is and who may read it is `domain.conversations`."""

    _tx: Transactions
    _transcript: TranscriptUseCases

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
