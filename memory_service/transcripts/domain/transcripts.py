"""The audit transcript: messages appended to the caller's own conversations and read back.
It is evidence, never memory; who may append and read is kernel/domain/conversations.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from memory_service.kernel.domain import conversations, names
from memory_service.kernel.domain.errors import NotFound
from memory_service.kernel.domain.model import Identity, Message, Speaker, TurnStatus, new_id
from memory_service.kernel.domain.ports import UnitOfWork


class TranscriptUseCases:
    """The audit transcript: append-only evidence, never memory."""

    def get(
        self, uow: UnitOfWork, identity: Identity, conversation_id: str, message_id: str
    ) -> Message:
        message = conversations.readable_message(uow, identity, conversation_id, message_id)
        if message is None:
            raise NotFound(names.message(conversation_id, message_id))
        return message

    def append(
        self,
        uow: UnitOfWork,
        identity: Identity,
        conversation_id: str,
        speaker: Speaker,
        text: str,
        status: TurnStatus,
        now: datetime,
    ) -> Message:
        """Appends to the caller's own conversation of that id (kernel/domain/conversations.py)."""
        return self.append_many(uow, identity, [(conversation_id, speaker, text, status)], now)[0]

    def append_many(
        self,
        uow: UnitOfWork,
        identity: Identity,
        messages: Sequence[tuple[str, Speaker, str, TurnStatus]],
        now: datetime,
    ) -> list[Message]:
        """(conversation id, speaker, text, status) appended in order, each to the caller's own
        conversation of that id; each conversation's sequences are allocated at once."""
        counts = Counter(conversation_id for conversation_id, *_ in messages)
        next_sequence = {}
        for conversation_id, count in counts.items():
            owner = conversations.open_for_append(uow, identity, conversation_id, now)
            next_sequence[conversation_id] = uow.transcript.allocate_sequences(
                owner, conversation_id, count
            )
        appended = []
        for conversation_id, speaker, text, status in messages:
            sequence = next_sequence[conversation_id]
            next_sequence[conversation_id] = sequence + 1
            appended.append(
                Message(
                    id=new_id(),
                    tenant_id=uow.tenant_id,
                    conversation_id=conversation_id,
                    sequence=sequence,
                    speaker=speaker,
                    text=text,
                    status=status,
                    author_user_id=identity.user_id,
                    create_time=now,
                )
            )
        uow.transcript.add_messages(appended)
        return appended

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        conversation_id: str,
        after_sequence: int,
        limit: int,
    ) -> list[Message]:
        owner = conversations.owner_for_reading(uow, identity, conversation_id)
        return uow.transcript.list_messages(owner, conversation_id, after_sequence, limit)
