"""What export and restore need beyond the everyday repositories: paging through customers and
import batches, the cited messages in one query, and the id checks a restore makes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func

from memory_service.access.public import customer_of
from memory_service.imports.storage.imports import _batch
from memory_service.kernel.domain.model import Customer, ImportBatch, Memory, Message
from memory_service.kernel.domain.ports import chunks
from memory_service.kernel.storage.models import (
    ConversationRow,
    CustomerRow,
    ImportBatchRow,
    ImportItemRow,
    MemoryRow,
    MessageRow,
    RevisionRow,
)
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK
from memory_service.kernel.storage.scoped import TenantScoped
from memory_service.memories.public import SqlMemoryRepository
from memory_service.transcripts.public import SqlTranscriptRepository, message_of

# The tables whose primary key is an id alone: a restored id must be free in the whole store.
ID_TABLES: dict[str, Any] = {
    "memory": MemoryRow,
    "message": MessageRow,
    "import_batch": ImportBatchRow,
    "import_item": ImportItemRow,
}


class SqlArchiveRepository(TenantScoped):
    def has_memories(self) -> bool:
        """Any memory row of the tenant, deletion markers included."""
        row = self._session.execute(self._select(MemoryRow, MemoryRow.id).limit(1)).first()
        return row is not None

    def ids_in_use(self, kind: str, ids: list[str]) -> set[str]:
        """Which of `ids` some row of this kind already has, in ANY tenant: these tables are
        keyed by id alone. Only the ids come back, never whose they are."""
        taken: set[str] = set()
        for part in chunks(sorted(set(ids)), IN_CLAUSE_CHUNK):
            taken |= self._ids_in_any_tenant(ID_TABLES[kind], part)
        return taken

    def messages(self, ids: list[str]) -> dict[str, Message]:
        found: dict[str, Message] = {}
        for part in chunks(sorted(set(ids)), IN_CLAUSE_CHUNK):
            rows = self._session.execute(self._select(MessageRow).where(MessageRow.id.in_(part)))
            found.update((row.id, message_of(row)) for row in rows)
        return found

    def customers_after(self, after_id: str, since: datetime | None, limit: int) -> list[Customer]:
        statement = self._select(CustomerRow).where(CustomerRow.customer_id > after_id)
        if since is not None:
            statement = statement.where(CustomerRow.create_time >= since)
        rows = self._session.execute(statement.order_by(CustomerRow.customer_id).limit(limit))
        return [customer_of(row) for row in rows]

    def batches_after(
        self, user_id: str | None, after_id: str, since: datetime | None, limit: int
    ) -> list[ImportBatch]:
        statement = self._select(ImportBatchRow).where(ImportBatchRow.id > after_id)
        if user_id is not None:
            statement = statement.where(ImportBatchRow.user_id == user_id)
        if since is not None:
            statement = statement.where(ImportBatchRow.create_time >= since)
        rows = self._session.execute(statement.order_by(ImportBatchRow.id).limit(limit))
        return [_batch(row) for row in rows]

    def add_message(self, message: Message) -> None:
        """A restored message keeps its id and sequence; its conversation is made when missing
        and its sequence counter kept past every restored message."""
        owner, conversation_id = message.author_user_id, message.conversation_id
        exists = self._session.execute(
            self._select(ConversationRow, ConversationRow.id).where(
                ConversationRow.owner_user_id == owner, ConversationRow.id == conversation_id
            )
        ).first()
        if exists is None:
            self._insert(
                ConversationRow,
                id=conversation_id,
                owner_user_id=owner,
                last_sequence=message.sequence,
                create_time=message.create_time,
            )
        else:
            self._session.execute(
                self._update(ConversationRow)
                .where(
                    ConversationRow.owner_user_id == owner,
                    ConversationRow.id == conversation_id,
                    ConversationRow.last_sequence < message.sequence,
                )
                .values(last_sequence=message.sequence)
            )
        SqlTranscriptRepository(self._session, self._tenant_id).add_message(message)

    def sequence_taken(self, message: Message) -> bool:
        count = self._session.execute(
            self._select(MessageRow, func.count()).where(
                MessageRow.author_user_id == message.author_user_id,
                MessageRow.conversation_id == message.conversation_id,
                MessageRow.sequence == message.sequence,
            )
        ).scalar_one()
        return bool(count)

    def replace_memory(self, memory: Memory) -> None:
        """A merge brings a memory forward to the later state an archive holds: the row and
        every revision are written as the archive has them."""
        self._session.execute(
            self._update(MemoryRow)
            .where(MemoryRow.id == memory.id)
            .values(
                key=memory.key,
                key_context=memory.key_context,
                version=memory.version,
                live=None if memory.deleted else True,
                update_time=memory.update_time,
                delete_time=memory.delete_time,
                key_hash=memory.key_hash,
            )
        )
        self._session.execute(self._delete(RevisionRow).where(RevisionRow.memory_id == memory.id))
        revisions = SqlMemoryRepository(self._session, self._tenant_id)
        for revision in memory.revisions:
            revisions.add_revision(revision)
