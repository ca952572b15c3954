"""The fake repositories of import batches and of restore's reads and writes (the archive),
which alone looks across tenants: an id restored must be free in the whole store."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import datetime

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import (
    Conversation,
    Customer,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
    Memory,
    Message,
)
from memory_service.testing.fake_records import FakeTranscriptRepository
from memory_service.testing.fake_tables import FakeDatabase, TenantTables


class FakeImportRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def find_batch(self, user_id: str, archive_sha256: str) -> ImportBatch | None:
        for batch, _ in self._t.batches.values():
            if (batch.user_id, batch.archive_sha256) == (user_id, archive_sha256):
                return copy.copy(batch)
        return None

    def get_batch(self, batch_id: str) -> ImportBatch | None:
        found = self._t.batches.get(batch_id)
        return None if found is None else copy.copy(found[0])

    def add_batch(self, batch: ImportBatch, archive: bytes | None) -> None:
        if batch.id in self._t.batches or self.find_batch(batch.user_id, batch.archive_sha256):
            raise WriteConflict("batch exists")
        self._t.batches[batch.id] = (copy.copy(batch), archive)

    def remove_batch(self, batch_id: str) -> None:
        self._t.batches.pop(batch_id, None)
        for item_id in self.item_ids(batch_id):
            del self._t.items[item_id]

    def update_batch(self, batch: ImportBatch) -> None:
        if batch.id in self._t.batches:
            self._t.batches[batch.id] = (copy.copy(batch), None)

    def archive_of(self, batch_id: str) -> bytes | None:
        found = self._t.batches.get(batch_id)
        return None if found is None else found[1]

    def add_items(self, items: list[ImportItem]) -> None:
        for item in items:
            self._t.items[item.id] = copy.copy(item)

    def get_item(self, item_id: str) -> ImportItem | None:
        item = self._t.items.get(item_id)
        return None if item is None else copy.copy(item)

    def update_item(self, item: ImportItem) -> None:
        stored = self._t.items.get(item.id)
        if stored is not None:
            stored.review, stored.memory_id = item.review, item.memory_id

    def list_items(
        self, batch_id: str, outcome: ItemOutcome | None, after_ordinal: int, limit: int
    ) -> list[ImportItem]:
        found = sorted(
            (
                i
                for i in self._t.items.values()
                if i.batch_id == batch_id
                and i.ordinal > after_ordinal
                and (outcome is None or i.outcome is outcome)
            ),
            key=lambda i: i.ordinal,
        )
        return [copy.copy(i) for i in found[:limit]]

    def known_lineage(self, user_id: str, hashes: list[str]) -> set[str]:
        wanted = set(hashes)
        return {
            i.lineage_hash
            for i in self._t.items.values()
            if i.user_id == user_id and i.lineage_hash in wanted
        }

    def cancel_pending(self, user_id: str, lineage_hashes: list[str]) -> int:
        if not user_id or not lineage_hashes:
            return 0
        count = 0
        for item in self._t.items.values():
            if (
                item.user_id == user_id
                and item.lineage_hash in lineage_hashes
                and item.review is ItemReview.PENDING
            ):
                item.review = ItemReview.REJECTED
                count += 1
        return count

    def blank_text(self, user_id: str, lineage_hashes: list[str], memory_id: str) -> list[str]:
        blanked = []
        for item in self._t.items.values():
            reached = item.memory_id == memory_id or (
                bool(user_id and lineage_hashes)
                and item.user_id == user_id
                and item.lineage_hash in lineage_hashes
            )
            if reached and item.text:
                item.text = ""
                blanked.append(item.id)
        return blanked

    def item_ids(self, batch_id: str) -> list[str]:
        return [i for i, item in self._t.items.items() if item.batch_id == batch_id]

    def count_items(self, batch_id: str) -> tuple[int, int]:
        items = [i for i in self._t.items.values() if i.batch_id == batch_id]
        return len(items), sum(1 for i in items if i.review is ItemReview.CONFIRMED)

    def count_pending(self, user_id: str) -> int:
        return sum(
            1
            for batch, _ in self._t.batches.values()
            if batch.user_id == user_id and batch.state is ImportState.PENDING
        )


class FakeArchiveRepository:
    def __init__(self, database: FakeDatabase, tenant_id: str, tables: TenantTables) -> None:
        self._database = database
        self._tenant_id = tenant_id
        self._t = tables

    def has_memories(self) -> bool:
        return bool(self._t.memories)

    def ids_in_use(self, kind: str, ids: list[str]) -> set[str]:
        """Across every tenant (committed), and this unit of work's own writes."""
        others = [t for i, t in self._database.tenants.items() if i != self._tenant_id]
        wanted = set(ids)
        return {i for tables in [*others, self._t] for i in _ids_of(tables, kind) if i in wanted}

    def messages(self, ids: list[str]) -> dict[str, Message]:
        return {i: self._t.messages[i] for i in ids if i in self._t.messages}

    def customers_after(self, after_id: str, since: datetime | None, limit: int) -> list[Customer]:
        return [
            c
            for i, (c, _) in sorted(self._t.customers.items())
            if i > after_id and (since is None or c.create_time >= since)
        ][:limit]

    def batches_after(
        self, user_id: str | None, after_id: str, since: datetime | None, limit: int
    ) -> list[ImportBatch]:
        return [
            copy.copy(b)
            for i, (b, _) in sorted(self._t.batches.items())
            if i > after_id
            and (user_id is None or b.user_id == user_id)
            and (since is None or b.create_time >= since)
        ][:limit]

    def add_message(self, message: Message) -> None:
        key = (message.author_user_id, message.conversation_id)
        if key not in self._t.conversations:
            self._t.conversations[key] = Conversation(
                self._tenant_id,
                message.conversation_id,
                message.author_user_id,
                message.create_time,
            )
        self._t.sequences[key] = max(self._t.sequences.get(key, 0), message.sequence)
        FakeTranscriptRepository(self._t).add_messages([message])

    def sequence_taken(self, message: Message) -> bool:
        return any(
            (m.author_user_id, m.conversation_id, m.sequence)
            == (message.author_user_id, message.conversation_id, message.sequence)
            for m in self._t.messages.values()
        )

    def replace_memory(self, memory: Memory) -> None:
        if memory.id in self._t.memories:
            self._t.memories[memory.id] = copy.deepcopy(memory)


def _ids_of(tables: TenantTables, kind: str) -> Iterable[str]:
    match kind:
        case "memory":
            return tables.memories
        case "message":
            return tables.messages
        case "import_batch":
            return tables.batches
        case "import_item":
            return tables.items
    raise ValueError(kind)
