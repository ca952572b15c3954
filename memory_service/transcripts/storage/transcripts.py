"""The transcript repository: conversations, each one owner's, and the messages appended to
them in sequence (a message never changes once appended, and is never removed alone).

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import Conversation, Message
from memory_service.kernel.domain.ports import chunks
from memory_service.kernel.storage.models import ConversationRow, MessageRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK, SPEAKERS, TURN_STATUSES
from memory_service.kernel.storage.scoped import TenantScoped


class SqlTranscriptRepository(TenantScoped):
    def __init__(self, session: Session, tenant_id: str) -> None:
        super().__init__(session, tenant_id)
        self._known: dict[str, Message | None] = {}

    def preload_messages(
        self, message_ids: Collection[str], known: Collection[Message] = ()
    ) -> None:
        """Reads these messages in one statement; `get_message` then answers them (and the
        missing ones) without another. Messages never change once appended and are never
        removed, so those `known` from an earlier read of this tenant are not read again
        (only found ones: a message missing then may have been appended since)."""
        for message in known:
            if message.tenant_id == self._tenant_id:
                self._known.setdefault(message.id, message)
        wanted = sorted(set(message_ids) - self._known.keys())
        for ids in chunks(wanted, IN_CLAUSE_CHUNK):
            self._known.update(dict.fromkeys(ids))
            for row in self._run(
                "transcript.preload_messages",
                lambda p: p.select(MessageRow).where(
                    MessageRow.id.in_(bindparam("ids", expanding=True))
                ),
                ids=ids,
            ):
                self._known[row.id] = message_of(row)

    def get_conversation(self, owner_user_id: str, conversation_id: str) -> Conversation | None:
        row = self._run(
            "transcript.get_conversation",
            lambda p: p.select(ConversationRow).where(
                ConversationRow.owner_user_id == bindparam("owner"),
                ConversationRow.id == bindparam("id"),
            ),
            owner=owner_user_id,
            id=conversation_id,
        ).first()
        if row is None:
            return None
        return Conversation(row.tenant_id, row.id, row.owner_user_id, row.create_time)

    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        rows = self._session.execute(
            self._select(ConversationRow, ConversationRow.owner_user_id)
            .where(ConversationRow.id == conversation_id)
            .order_by(ConversationRow.owner_user_id)
            .limit(limit)
        )
        return [row.owner_user_id for row in rows]

    def add_conversation(self, conversation: Conversation) -> None:
        self._insert(
            ConversationRow,
            id=conversation.id,
            owner_user_id=conversation.owner_user_id,
            last_sequence=0,
            create_time=conversation.create_time,
        )

    def allocate_sequences(self, owner_user_id: str, conversation_id: str, count: int) -> int:
        """The row update also serializes concurrent appends to one conversation."""
        last = self._session.execute(
            self._update(ConversationRow)
            .where(
                ConversationRow.owner_user_id == owner_user_id,
                ConversationRow.id == conversation_id,
            )
            .values(last_sequence=ConversationRow.last_sequence + count)
            .returning(ConversationRow.last_sequence)
        ).scalar_one()
        return int(last) - count + 1

    def add_message(self, message: Message) -> None:
        self.add_messages([message])

    def add_messages(self, messages: Sequence[Message]) -> None:
        """One multi-row INSERT."""
        try:
            self._insert_many(
                MessageRow,
                [
                    {
                        "id": message.id,
                        "conversation_id": message.conversation_id,
                        "sequence": message.sequence,
                        "speaker": message.speaker.value,
                        "text": message.text,
                        "status": message.status.value,
                        "author_user_id": message.author_user_id,
                        "create_time": message.create_time,
                    }
                    for message in messages
                ],
            )
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def recent_messages(
        self, owner_user_id: str, conversation_id: str, count: int
    ) -> list[Message]:
        rows = self._run(
            "transcript.recent_messages",
            lambda p: (
                p.select(MessageRow)
                .where(
                    MessageRow.author_user_id == bindparam("owner"),
                    MessageRow.conversation_id == bindparam("conversation"),
                )
                .order_by(MessageRow.sequence.desc())
                .limit(bindparam("count"))
            ),
            owner=owner_user_id,
            conversation=conversation_id,
            count=count,
        ).all()
        return [message_of(row) for row in reversed(rows)]

    def get_message(self, message_id: str) -> Message | None:
        if message_id in self._known:
            return self._known[message_id]
        row = self._run(
            "transcript.get_message",
            lambda p: p.select(MessageRow).where(MessageRow.id == bindparam("id")),
            id=message_id,
        ).first()
        return None if row is None else message_of(row)

    def list_messages(
        self, owner_user_id: str, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]:
        rows = self._session.execute(
            self._select(MessageRow)
            .where(
                MessageRow.author_user_id == owner_user_id,
                MessageRow.conversation_id == conversation_id,
                MessageRow.sequence > after_sequence,
            )
            .order_by(MessageRow.sequence)
            .limit(limit)
        )
        return [message_of(row) for row in rows]


def message_of(found: Any) -> Message:
    """Columns read through the row's mapping, as `memory_rows.memory_of` reads them: a batch
    of creates reads the message each memory cites inside the write transaction."""
    row = found._mapping
    return Message(
        id=row["id"],
        tenant_id=row["tenant_id"],
        conversation_id=row["conversation_id"],
        sequence=row["sequence"],
        speaker=SPEAKERS[row["speaker"]],
        text=row["text"],
        status=TURN_STATUSES[row["status"]],
        author_user_id=row["author_user_id"],
        create_time=row["create_time"],
    )
