"""A unit of work over plain dicts that implements every port of `domain/ports.py`, so the rules
can be tested in milliseconds without a database.

It keeps the behaviour the use cases rely on from the SQL repositories: each unit of work sees
one tenant's rows only; reads return copies (changing a returned record changes nothing until a
repository call stores it); nothing is visible to others before `commit`; unique keys raise
`WriteConflict`; ordering and paging match the SQL queries.
`tests/integration/test_storage_congruence.py` runs one scenario on this fake, SQLite and
PostgreSQL and compares the results.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from memory_service.domain.errors import WriteConflict
from memory_service.domain.model import (
    Conversation,
    Customer,
    CustomerGrant,
    DocumentVersion,
    EvidenceType,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
    Memory,
    Message,
    Override,
    ParentType,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Task,
    TaskCheckpoint,
)
from memory_service.domain.ports import (
    EMPTY_AHEAD,
    ON_ITS_WAY,
    Candidate,
    ImportQueue,
    ImportWork,
    MemoryQuery,
    OutboxItem,
    OutboxKind,
    OutboxStore,
    Search,
    SecretScanner,
    StoredResponse,
    UnitOfWorkFactory,
    UsageLog,
    UsageStore,
    Visibility,
)
from memory_service.domain.rules import applicable_revision, lineage_ref_hash, scoped_key_hash

_ids = itertools.count(1)  # outbox ids, ascending like a sequence


@dataclass
class _OutboxEntry:
    memory_id: str
    due_time: datetime
    create_time: datetime
    kind: OutboxKind
    attempts: int = 0
    id: int = field(default_factory=lambda: next(_ids))
    lease_owner: str | None = None
    lease_until: datetime | None = None
    last_error: str = ""


@dataclass
class TenantTables:
    """One tenant's rows."""

    memories: dict[str, Memory] = field(default_factory=dict)
    conversations: dict[tuple[str, str], Conversation] = field(default_factory=dict)
    sequences: dict[tuple[str, str], int] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    grants: dict[tuple[str, str], CustomerGrant] = field(default_factory=dict)
    requests: dict[tuple[str, str], StoredResponse] = field(default_factory=dict)
    shown: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    outbox: list[_OutboxEntry] = field(default_factory=list)
    overrides: dict[str, Override] = field(default_factory=dict)
    customers: dict[str, tuple[Customer, str]] = field(default_factory=dict)
    batches: dict[str, tuple[ImportBatch, bytes | None]] = field(default_factory=dict)
    items: dict[str, ImportItem] = field(default_factory=dict)
    usage: dict[str, datetime] = field(default_factory=dict)
    documents: dict[str, DocumentVersion] = field(default_factory=dict)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)
    checkpoints: dict[tuple[str, str], list[TaskCheckpoint]] = field(default_factory=dict)
    batch_leases: dict[str, datetime] = field(default_factory=dict)


class FakeMemoryRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, memory_id: str) -> Memory | None:
        memory = self._t.memories.get(memory_id)
        return None if memory is None else copy.deepcopy(memory)

    def get_many(self, memory_ids: list[str]) -> dict[str, Memory]:
        return {i: copy.deepcopy(self._t.memories[i]) for i in memory_ids if i in self._t.memories}

    def live_versions(self) -> dict[str, int]:
        live = sorted(i for i, m in self._t.memories.items() if not m.deleted)
        return {i: self._t.memories[i].version for i in live}

    def count_live(self) -> int:
        return len(self.live_versions())

    def count_searchable(self, instant: datetime) -> int:
        return sum(1 for m in self._t.memories.values() if applicable_revision(m, instant))

    def find_live(self, scope: Scope, key: str, key_context: str) -> Memory | None:
        for memory in self._t.memories.values():
            if (
                not memory.deleted
                and memory.scope == scope
                and (memory.key, memory.key_context) == (key, key_context)
            ):
                return copy.deepcopy(memory)
        return None

    def deletions(
        self, scope: Scope, key: str, key_context: str, lineage: str
    ) -> tuple[datetime | None, bool]:
        key_hash = scoped_key_hash(scope.type.value, scope.id, key, key_context)
        times = [
            m.delete_time
            for m in self._t.memories.values()
            if m.delete_time is not None and m.key_hash == key_hash
        ]
        return max(times, default=None), bool(lineage) and self.deleted_lineage(lineage)

    def deleted_lineage(self, evidence_ref: str) -> bool:
        hashed = lineage_ref_hash(evidence_ref)
        return any(
            r.status is RevisionStatus.DELETED and r.provenance.evidence.ref == hashed
            for m in self._t.memories.values()
            for r in m.revisions
        )

    def add(self, memory: Memory) -> None:
        if not memory.deleted and self.find_live(memory.scope, memory.key, memory.key_context):
            raise WriteConflict("a live memory with this scoped key exists")
        if memory.id in self._t.memories:
            raise WriteConflict("memory id exists")
        self._t.memories[memory.id] = copy.deepcopy(replace(memory, revisions=[]))
        for revision in memory.revisions:
            self.add_revision(revision)

    @contextmanager
    def preloaded(
        self, keys: Collection[tuple[Scope, str, str]], lineages: Collection[str] = ()
    ) -> Iterator[None]:
        """Nothing to read ahead; a clash on a unique key surfaces at `add` instead of at the
        end, which the caller cannot tell apart (the transaction fails either way)."""
        yield

    def add_revision(self, revision: Revision) -> None:
        memory = self._t.memories[revision.memory_id]
        if memory.revision(revision.number) is not None:
            raise WriteConflict("revision number exists")
        memory.revisions.append(copy.deepcopy(revision))
        memory.revisions.sort(key=lambda r: r.number)

    def update_revision(self, revision: Revision) -> None:
        memory = self._t.memories.get(revision.memory_id)
        if memory is None:
            return
        memory.revisions = [
            copy.deepcopy(revision) if r.number == revision.number else r for r in memory.revisions
        ]

    def claim_version(self, memory_id: str, expected_version: int, now: datetime) -> bool:
        memory = self._t.memories.get(memory_id)
        if memory is None or memory.version != expected_version:
            return False
        memory.version += 1
        memory.update_time = now
        return True

    def mark_deleted(self, memory_id: str, now: datetime, key_hash: str) -> None:
        memory = self._t.memories.get(memory_id)
        if memory is not None:
            memory.delete_time = memory.update_time = now
            memory.key, memory.key_context, memory.key_hash = "deleted", "", key_hash

    def list_after(self, query: MemoryQuery, after_id: str, limit: int) -> list[Memory]:
        found = [
            m
            for i, m in sorted(self._t.memories.items())
            if i > after_id and _visible(m, query.visibility) and _matches(m, query)
        ]
        return copy.deepcopy(found[:limit])

    def citing_document(self, uri: str) -> list[Memory]:
        return [
            copy.deepcopy(m)
            for _, m in sorted(self._t.memories.items())
            if not m.deleted
            and any(
                r.provenance.evidence.type is EvidenceType.DOCUMENT
                and r.provenance.evidence.ref == uri
                for r in m.revisions
            )
        ]

    def _live(self, visibility: Visibility, after_id: str) -> list[Memory]:
        """Live memories the caller may see, ascending by id after `after_id`."""
        return [
            m
            for i, m in sorted(self._t.memories.items())
            if i > after_id and not m.deleted and _visible(m, visibility)
        ]


class FakeDocumentRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, uri: str) -> DocumentVersion | None:
        return self._t.documents.get(uri)

    def put(self, document: DocumentVersion) -> None:
        self._t.documents[document.uri] = document

    def mark_source_changed(self, memory_id: str, number: int, now: datetime) -> bool:
        memory = self._t.memories.get(memory_id)
        revision = None if memory is None else memory.revision(number)
        if memory is None or revision is None or revision.source_change_time is not None:
            return False
        memory.revisions = [
            replace(r, source_change_time=now) if r.number == number else r
            for r in memory.revisions
        ]
        return True


class FakeReviewRepository(FakeMemoryRepository):
    def flagged(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        return self._having(
            visibility,
            after_id,
            limit,
            lambda r: r.source_change_time is not None and r.status is RevisionStatus.ACTIVE,
        )

    def with_candidates(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        return self._having(
            visibility, after_id, limit, lambda r: r.status is RevisionStatus.CANDIDATE
        )

    def sharing_keys(self, visibility: Visibility, limit: int) -> list[Memory]:
        live = self._live(visibility, "")
        scopes: dict[tuple[str, str], set[Scope]] = {}
        for memory in live:
            scopes.setdefault((memory.key, memory.key_context), set()).add(memory.scope)
        shared = [m for m in live if len(scopes[(m.key, m.key_context)]) > 1]
        return copy.deepcopy(shared[:limit])

    def unused_since(
        self, visibility: Visibility, cutoff: datetime, after_id: str, limit: int
    ) -> list[Memory]:
        unused = [
            m
            for m in self._live(visibility, after_id)
            if self._t.usage.get(m.id, m.create_time) < cutoff
        ]
        return copy.deepcopy(unused[:limit])

    def pending_items(self, user_id: str | None, after_id: str, limit: int) -> list[ImportItem]:
        pending = [
            copy.copy(item)
            for i, item in sorted(self._t.items.items())
            if i > after_id
            and item.review is ItemReview.PENDING
            and (user_id is None or item.user_id == user_id)
        ]
        return pending[:limit]

    def _having(
        self, visibility: Visibility, after_id: str, limit: int, test: Callable[[Revision], bool]
    ) -> list[Memory]:
        found = [m for m in self._live(visibility, after_id) if any(map(test, m.revisions))]
        return copy.deepcopy(found[:limit])


def _visible(memory: Memory, visibility: Visibility) -> bool:
    match memory.scope.type:
        case ScopeType.USER:
            return visibility.user_ids is None or memory.scope.id in visibility.user_ids
        case ScopeType.CUSTOMER:
            return visibility.customer_ids is None or memory.scope.id in visibility.customer_ids
        case ScopeType.ORGANIZATION:  # the tenant, under the empty id alone
            return visibility.organization and not memory.scope.id


def _matches(memory: Memory, query: MemoryQuery) -> bool:
    if query.scope_type is not None and memory.scope.type is not query.scope_type:
        return False
    if query.scope_type is not None and query.scope_id and memory.scope.id != query.scope_id:
        return False
    if query.key and memory.key != query.key:
        return False
    if query.kind is not None and memory.kind is not query.kind:
        return False
    if query.changed_since is not None and memory.update_time < query.changed_since:
        return False
    return query.show_deleted or not memory.deleted


class FakeTranscriptRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get_conversation(self, owner_user_id: str, conversation_id: str) -> Conversation | None:
        return self._t.conversations.get((owner_user_id, conversation_id))

    def add_conversation(self, conversation: Conversation) -> None:
        key = (conversation.owner_user_id, conversation.id)
        if key in self._t.conversations:
            raise WriteConflict("conversation exists")
        self._t.conversations[key] = conversation
        self._t.sequences[key] = 0

    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        return sorted(o for o, c in self._t.conversations if c == conversation_id)[:limit]

    def claim_sequences(self, owner_user_id: str, conversation_id: str, count: int) -> int:
        key = (owner_user_id, conversation_id)
        self._t.sequences[key] += count
        return self._t.sequences[key] - count + 1

    def add_messages(self, messages: Sequence[Message]) -> None:
        ids = [m.id for m in messages]
        if len(set(ids)) != len(ids) or any(i in self._t.messages for i in ids):
            raise WriteConflict("message id exists")  # and, as one INSERT, none is kept
        for message in messages:
            self._t.messages[message.id] = message

    def preload_messages(
        self, message_ids: Collection[str], known: Collection[Message] = ()
    ) -> None:
        """Nothing to read ahead: every message is at hand."""

    def get_message(self, message_id: str) -> Message | None:
        return self._t.messages.get(message_id)

    def _of(self, owner_user_id: str, conversation_id: str) -> list[Message]:
        return sorted(
            (
                m
                for m in self._t.messages.values()
                if (m.author_user_id, m.conversation_id) == (owner_user_id, conversation_id)
            ),
            key=lambda m: m.sequence,
        )

    def list_messages(
        self, owner_user_id: str, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]:
        messages = self._of(owner_user_id, conversation_id)
        return [m for m in messages if m.sequence > after_sequence][:limit]

    def recent_messages(
        self, owner_user_id: str, conversation_id: str, count: int
    ) -> list[Message]:
        return self._of(owner_user_id, conversation_id)[-count:] if count > 0 else []


class FakeGrantRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, user_id: str, customer_id: str) -> CustomerGrant | None:
        return self._t.grants.get((user_id, customer_id))

    def add(self, grant: CustomerGrant) -> None:
        key = (grant.user_id, grant.customer_id)
        if key in self._t.grants:
            raise WriteConflict("grant exists")
        self._t.grants[key] = grant

    def remove(self, user_id: str, customer_id: str) -> bool:
        return self._t.grants.pop((user_id, customer_id), None) is not None

    def customers_of(self, user_id: str) -> frozenset[str]:
        return frozenset(c for u, c in self._t.grants if u == user_id)

    def granted_among(self, user_id: str, customer_ids: Collection[str]) -> frozenset[str]:
        return self.customers_of(user_id) & frozenset(customer_ids)

    def list_after(
        self, user_id: str | None, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]:
        keys = sorted(k for k in self._t.grants if user_id is None or k[0] == user_id)
        return [self._t.grants[k] for k in keys if k > after][:limit]


class FakeIdempotencyRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, user_id: str, request_id: str) -> StoredResponse | None:
        return self._t.requests.get((user_id, request_id))

    def claim(
        self, user_id: str, request_id: str, stored: StoredResponse, expired: datetime | None
    ) -> None:
        key = (user_id, request_id)
        old = self._t.requests.get(key)
        if old is not None and (expired is None or old.create_time >= expired):
            raise WriteConflict("request id claimed")
        self._t.requests[key] = stored
        self._t.shown.pop(key, None)

    def record(self, user_id: str, request_id: str, response: bytes, shown: Sequence[str]) -> None:
        key = (user_id, request_id)
        if key in self._t.requests:
            self._t.requests[key] = replace(
                self._t.requests[key], response=response, memory_id=shown[0] if shown else ""
            )
            self._t.shown[key] = tuple(shown)

    def redact_shown(self, record_ids: list[str]) -> int:
        gone = set(record_ids)
        reached = [
            k
            for k, s in self._t.requests.items()
            if (s.memory_id and s.memory_id in gone) or gone & set(self._t.shown.get(k, ()))
        ]
        for key in reached:
            self._t.requests[key] = replace(self._t.requests[key], response=b"")
        return len(reached)


class FakeOutboxRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables
        self.queued_now = False

    def enqueue(self, memory_id: str, due_time: datetime, now: datetime) -> None:
        self.queued_now = self.queued_now or due_time <= now
        self._t.outbox.append(_OutboxEntry(memory_id, due_time, now, OutboxKind.MEMORY))

    def enqueue_tenant(self, kind: OutboxKind, now: datetime) -> None:
        self.queued_now = True
        self._t.outbox.append(_OutboxEntry("", now, now, kind))

    def queued_changes(self) -> dict[str, datetime]:
        changes: dict[str, datetime] = {}
        for e in self._t.outbox:
            if e.kind is OutboxKind.MEMORY:
                due = ON_ITS_WAY if e.attempts > 0 else e.due_time
                changes[e.memory_id] = min(due, changes.get(e.memory_id, due))
        return changes

    def tenant_work(self) -> bool:
        return any(e.kind is not OutboxKind.MEMORY for e in self._t.outbox)


class FakeOverrideRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def add(self, override: Override) -> None:
        if override.id in self._t.overrides:
            raise WriteConflict("override id exists")
        self._t.overrides[override.id] = override

    def active(
        self,
        parent_type: ParentType,
        parent_id: str,
        instant: datetime,
        after_id: str,
        limit: int,
        author_user_id: str | None,
    ) -> list[Override]:
        found = [
            o
            for i, o in sorted(self._t.overrides.items())
            if (o.parent_type, o.parent_id) == (parent_type, parent_id)
            and o.active_at(instant)
            and (author_user_id is None or o.author_user_id == author_user_id)
            and i > after_id
        ]
        return found[:limit]

    def get(self, override_id: str) -> Override | None:
        return self._t.overrides.get(override_id)

    def remove(self, override_id: str) -> bool:
        return self._t.overrides.pop(override_id, None) is not None


class FakeCustomerRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def upsert(self, customer: Customer, match_name: str) -> Customer:
        existing = self._t.customers.get(customer.customer_id)
        if existing is not None:
            customer = replace(customer, create_time=existing[0].create_time)
        self._t.customers[customer.customer_id] = (customer, match_name)
        return customer

    def get(self, customer_id: str) -> Customer | None:
        found = self._t.customers.get(customer_id)
        return None if found is None else found[0]

    def by_match_name(self, match_name: str) -> list[Customer]:
        return [c for _, (c, m) in sorted(self._t.customers.items()) if m == match_name]

    def list_after(
        self, after_id: str, limit: int, among: Collection[str] | None
    ) -> list[Customer]:
        return [
            c
            for i, (c, _) in sorted(self._t.customers.items())
            if i > after_id and (among is None or i in among)
        ][:limit]

    def remove(self, customer_id: str) -> bool:
        return self._t.customers.pop(customer_id, None) is not None


class FakeUsageRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def last_used(self, memory_ids: list[str]) -> dict[str, datetime]:
        return {i: self._t.usage[i] for i in memory_ids if i in self._t.usage}


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


class FakeTaskRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, owner_user_id: str, task_id: str, *, lock: bool = False) -> Task | None:
        task = self._t.tasks.get((owner_user_id, task_id))
        if task is None:
            return None
        latest = [
            c
            for c in self._t.checkpoints.get((owner_user_id, task_id), [])
            if c.sequence == task.checkpoint_count
        ]
        return replace(task, current=latest[0] if latest else None)

    def owners_of(self, task_id: str, limit: int) -> list[str]:
        return sorted(o for o, t in self._t.tasks if t == task_id)[:limit]

    def add(self, task: Task) -> None:
        key = (task.owner_user_id, task.id)
        if key in self._t.tasks:
            raise WriteConflict("task exists")
        self._t.tasks[key] = replace(task, current=None)
        self._t.checkpoints[key] = []

    def add_checkpoint(self, owner_user_id: str, task_id: str, checkpoint: TaskCheckpoint) -> None:
        stored = self._t.checkpoints.setdefault((owner_user_id, task_id), [])
        if any(c.sequence == checkpoint.sequence for c in stored):
            raise WriteConflict("checkpoint sequence taken")
        stored.append(checkpoint)
        stored.sort(key=lambda c: c.sequence)

    def update(self, task: Task, expected: Task) -> None:
        key = (task.owner_user_id, task.id)
        stored = self._t.tasks.get(key)
        if stored is None or (stored.state, stored.checkpoint_count) != (
            expected.state,
            expected.checkpoint_count,
        ):
            raise WriteConflict(f"tasks/{task.id} changed meanwhile")
        self._t.tasks[key] = replace(
            stored,
            state=task.state,
            checkpoint_count=task.checkpoint_count,
            update_time=task.update_time,
            end_time=task.end_time,
        )

    def list_checkpoints(
        self, owner_user_id: str, task_id: str, after_sequence: int, limit: int
    ) -> list[TaskCheckpoint]:
        stored = self._t.checkpoints.get((owner_user_id, task_id), [])
        return [c for c in stored if c.sequence > after_sequence][:limit]


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


class FakeUnitOfWork:
    """One tenant's tables, copied when the unit of work opens and kept only on `commit`."""

    def __init__(self, database: FakeDatabase, tenant_id: str) -> None:
        self._database = database
        self._tenant_id = tenant_id
        self._open(database.tenants.get(tenant_id) or TenantTables())

    def _open(self, tables: TenantTables) -> None:
        self._tables = copy.deepcopy(tables)
        self._memories = FakeMemoryRepository(self._tables)
        self._transcript = FakeTranscriptRepository(self._tables)
        self._grants = FakeGrantRepository(self._tables)
        self._idempotency = FakeIdempotencyRepository(self._tables)
        self._outbox = FakeOutboxRepository(self._tables)
        self._overrides = FakeOverrideRepository(self._tables)
        self._customers = FakeCustomerRepository(self._tables)
        self._imports = FakeImportRepository(self._tables)
        self._usage = FakeUsageRepository(self._tables)
        self._archive = FakeArchiveRepository(self._database, self._tenant_id, self._tables)
        self._documents = FakeDocumentRepository(self._tables)
        self._review = FakeReviewRepository(self._tables)
        self._tasks = FakeTaskRepository(self._tables)

    @property
    def tenant_id(self) -> str:
        return self._tenant_id

    @property
    def memories(self) -> FakeMemoryRepository:
        return self._memories

    @property
    def transcript(self) -> FakeTranscriptRepository:
        return self._transcript

    @property
    def grants(self) -> FakeGrantRepository:
        return self._grants

    @property
    def idempotency(self) -> FakeIdempotencyRepository:
        return self._idempotency

    @property
    def outbox(self) -> FakeOutboxRepository:
        return self._outbox

    @property
    def overrides(self) -> FakeOverrideRepository:
        return self._overrides

    @property
    def customers(self) -> FakeCustomerRepository:
        return self._customers

    @property
    def imports(self) -> FakeImportRepository:
        return self._imports

    @property
    def usage(self) -> FakeUsageRepository:
        return self._usage

    @property
    def archive(self) -> FakeArchiveRepository:
        return self._archive

    @property
    def documents(self) -> FakeDocumentRepository:
        return self._documents

    @property
    def review(self) -> FakeReviewRepository:
        return self._review

    @property
    def tasks(self) -> FakeTaskRepository:
        return self._tasks

    def commit(self) -> None:
        self._database.tenants[self._tenant_id] = self._tables
        self._open(self._tables)


@dataclass
class FakeDatabase:
    tenants: dict[str, TenantTables] = field(default_factory=dict)


class FakeUnitOfWorkFactory:
    """Opens fake units of work over one shared `FakeDatabase`."""

    def __init__(self, database: FakeDatabase | None = None) -> None:
        self.database = database or FakeDatabase()

    @contextmanager
    def __call__(self, tenant_id: str, *, write: bool) -> Iterator[FakeUnitOfWork]:
        yield FakeUnitOfWork(self.database, tenant_id)

    def usage_store(self) -> FakeUsageStore:
        return FakeUsageStore(self.database)

    def outbox_store(self) -> FakeOutboxStore:
        return FakeOutboxStore(self.database)

    def import_queue(self) -> FakeImportQueue:
        return FakeImportQueue(self.database)


class FakeUsageStore:
    """The usage flush across tenants: a stored time only moves forward."""

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database

    def record(self, uses: Mapping[tuple[str, str], datetime]) -> None:
        for (tenant_id, memory_id), when in uses.items():
            usage = self._database.tenants.setdefault(tenant_id, TenantTables()).usage
            usage[memory_id] = max(when, usage.get(memory_id, when))


class FakeUsageLog:
    """Notes go straight to the store: the fake has no flush interval to wait for."""

    def __init__(self, store: FakeUsageStore) -> None:
        self._store = store

    def note(self, tenant_id: str, memory_ids: Iterable[str], when: datetime) -> None:
        self._store.record({(tenant_id, memory_id): when for memory_id in memory_ids})


class FakeOutboxStore:
    """The outbox across tenants; each call is its own committed transaction, as in SQL. The
    retry backoff is the SQL store's without its jitter, so tests can name the next due time."""

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database

    def _entries(self) -> Iterator[tuple[str, _OutboxEntry]]:
        for tenant_id, tables in self._database.tenants.items():
            for entry in tables.outbox:
                yield tenant_id, entry

    def _leased(self, owner: str, ids: Collection[int] | None) -> list[_OutboxEntry]:
        return [
            e for _, e in self._entries() if e.lease_owner == owner and (ids is None or e.id in ids)
        ]

    def claim(
        self, owner: str, limit: int, now: datetime, lease_seconds: float
    ) -> list[OutboxItem]:
        due = sorted(
            (
                (e.id, tenant_id, e)
                for tenant_id, e in self._entries()
                if e.due_time <= now and (e.lease_until is None or e.lease_until < now)
            ),
            key=lambda found: found[0],
        )[:limit]
        for _, _, entry in due:
            entry.lease_owner = owner
            entry.lease_until = now + timedelta(seconds=lease_seconds)
        return [
            OutboxItem(e.id, tenant_id, e.memory_id, e.due_time, e.create_time, e.attempts, e.kind)
            for _, tenant_id, e in due
        ]

    def complete(
        self,
        owner: str,
        ids: list[int],
        ahead: Mapping[tuple[str, str], Sequence[datetime]] = EMPTY_AHEAD,
    ) -> None:
        leased = [
            (tenant_id, e)
            for tenant_id, e in self._entries()
            if e.lease_owner == owner and e.id in ids
        ]
        completed = {(tenant_id, e.memory_id) for tenant_id, e in leased}
        self._remove([e for _, e in leased])
        for (tenant_id, memory_id), instants in ahead.items():
            if (tenant_id, memory_id) not in completed:
                continue
            outbox = self._database.tenants[tenant_id].outbox
            queued = {e.due_time for e in outbox if e.memory_id == memory_id}
            outbox.extend(
                _OutboxEntry(memory_id, instant, instant, OutboxKind.MEMORY)
                for instant in instants
                if instant not in queued
            )

    def expand(self, owner: str, item: OutboxItem, memory_ids: list[str], now: datetime) -> bool:
        leased = self._leased(owner, {item.id})
        if not leased:
            return False
        self._remove(leased)
        self._database.tenants[item.tenant_id].outbox.extend(
            _OutboxEntry(memory_id, now, now, OutboxKind.REFILL) for memory_id in memory_ids
        )
        return True

    def retry(self, owner: str, items: list[OutboxItem], error: str, now: datetime) -> None:
        for item in items:
            for entry in self._leased(owner, {item.id}):
                entry.attempts = item.attempts + 1
                entry.due_time = now + timedelta(seconds=min(60.0, 0.5 * 2**item.attempts))
                entry.lease_owner, entry.lease_until = None, None
                entry.last_error = error[:2000]

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        for entry in self._leased(owner, None if ids is None else set(ids)):
            entry.lease_owner, entry.lease_until = None, None
            entry.last_error = error[:2000]

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        due = [e.create_time for _, e in self._entries() if e.due_time <= now]
        return len(due), min(due, default=None)

    def _remove(self, entries: list[_OutboxEntry]) -> None:
        gone = {id(e) for e in entries}
        for tables in self._database.tenants.values():
            tables.outbox[:] = [e for e in tables.outbox if id(e) not in gone]


class FakeImportQueue:
    """Pending batches across tenants, oldest first, one lease at a time."""

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database

    def claim(self, owner: str, now: datetime, lease_seconds: float) -> tuple[str, str] | None:
        waiting = sorted(
            (
                (batch.create_time, tenant_id, batch)
                for tenant_id, tables in self._database.tenants.items()
                for batch, _ in tables.batches.values()
                if batch.state is ImportState.PENDING
                and tables.batch_leases.get(batch.id, now - timedelta(seconds=1)) < now
            ),
            key=lambda found: found[0],
        )
        if not waiting:
            return None
        _, tenant_id, batch = waiting[0]
        tables = self._database.tenants[tenant_id]
        batch.attempts += 1
        tables.batch_leases[batch.id] = now + timedelta(seconds=lease_seconds)
        return tenant_id, batch.id


class FakeSearch:
    """The search port over the fake's committed records: every live memory of the asked
    scopes whose current value shares a word with the query, best overlap first. The rules
    then decide what a candidate may show, as with the real index."""

    search_timeout = 1.0

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database

    def refusal(self) -> str | None:
        return None

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Candidate]:
        words = set(query.lower().split())
        tables = self._database.tenants.get(tenant_id, TenantTables())
        found = []
        for memory in tables.memories.values():
            latest = memory.latest
            if memory.deleted or latest is None:
                continue
            if scopes and (memory.scope.type.value, memory.scope.id) not in scopes:
                continue
            shared = len(words & set(latest.value.lower().split()))
            if shared:
                found.append(Candidate(memory.id, shared / len(words), latest.number))
        found.sort(key=lambda c: (-c.score, c.memory_id))
        return found[:limit]

    def tenant_points(self, tenant_id: str) -> int:
        tables = self._database.tenants.get(tenant_id, TenantTables())
        return sum(1 for m in tables.memories.values() if not m.deleted)


@dataclass
class FakeSecretScanner:
    """Finds the strings it was given, naming them "test-secret"."""

    secrets: tuple[str, ...] = ()

    def find(self, text: str) -> str:
        return "test-secret" if any(secret in text for secret in self.secrets) else ""


@dataclass
class FakeImportWork:
    """Remembers which batches were queued; a test runs them when it wants."""

    submitted: list[tuple[str, str]] = field(default_factory=list)

    def submit(self, tenant_id: str, batch_id: str) -> None:
        self.submitted.append((tenant_id, batch_id))


@dataclass(frozen=True)
class Ports:
    """One fake per port of `domain/ports.py`, typed as the port: mypy checks each fake here,
    and `tests/unit/test_fake_storage.py` checks that no port is left out."""

    units: UnitOfWorkFactory
    usage_store: UsageStore
    usage_log: UsageLog
    outbox_store: OutboxStore
    import_queue: ImportQueue
    search: Search
    secrets: SecretScanner
    import_work: ImportWork


def fake_ports(database: FakeDatabase | None = None) -> Ports:
    """Every port over one `FakeDatabase`."""
    factory = FakeUnitOfWorkFactory(database)
    return Ports(
        units=factory,
        usage_store=factory.usage_store(),
        usage_log=FakeUsageLog(factory.usage_store()),
        outbox_store=factory.outbox_store(),
        import_queue=factory.import_queue(),
        search=FakeSearch(factory.database),
        secrets=FakeSecretScanner(),
        import_work=FakeImportWork(),
    )
