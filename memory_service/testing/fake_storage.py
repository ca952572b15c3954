"""A unit of work over plain dicts that implements every port of `kernel/domain/ports.py`, so the
rules can be tested in milliseconds without a database.

It keeps the behaviour the use cases rely on from the SQL repositories: each unit of work sees
one tenant's rows only; reads return copies (changing a returned record changes nothing until a
repository call stores it); nothing is visible to others before `commit`; unique keys raise
`WriteConflict`; ordering and paging match the SQL queries.
`tests/integration/test_storage_congruence.py` runs one scenario on this fake, SQLite and
PostgreSQL and compares the results.

Here: the unit of work, its factory, the cross-tenant stores and the other ports (`fake_ports`).
The repositories are in `fake_memories.py` (memories, documents, the review queue),
`fake_records.py` (transcript, grants, request ids, outbox, overrides, customers, usage, tasks)
and `fake_imports.py` (import batches, restore), over the rows of `fake_tables.py`.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory_service.kernel.domain.model import ImportState
from memory_service.kernel.domain.ports import (
    EMPTY_AHEAD,
    Candidate,
    ImportQueue,
    ImportWork,
    OutboxItem,
    OutboxKind,
    OutboxStore,
    Search,
    SecretScanner,
    Thesaurus,
    UnitOfWorkFactory,
    UsageLog,
    UsageStore,
)
from memory_service.testing.fake_imports import FakeArchiveRepository, FakeImportRepository
from memory_service.testing.fake_memories import (
    FakeDocumentRepository,
    FakeMemoryRepository,
    FakeReviewRepository,
)
from memory_service.testing.fake_records import (
    FakeCustomerRepository,
    FakeGrantRepository,
    FakeIdempotencyRepository,
    FakeOutboxRepository,
    FakeOverrideRepository,
    FakeTaskRepository,
    FakeTranscriptRepository,
    FakeUsageRepository,
)
from memory_service.testing.fake_tables import FakeDatabase, OutboxEntry, TenantTables


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

    def _entries(self) -> Iterator[tuple[str, OutboxEntry]]:
        for tenant_id, tables in self._database.tenants.items():
            for entry in tables.outbox:
                yield tenant_id, entry

    def _leased(self, owner: str, ids: Collection[int] | None) -> list[OutboxEntry]:
        return [
            e for _, e in self._entries() if e.lease_owner == owner and (ids is None or e.id in ids)
        ]

    def lease(
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
                OutboxEntry(memory_id, instant, instant, OutboxKind.MEMORY)
                for instant in instants
                if instant not in queued
            )

    def expand(self, owner: str, item: OutboxItem, memory_ids: list[str], now: datetime) -> bool:
        leased = self._leased(owner, {item.id})
        if not leased:
            return False
        self._remove(leased)
        self._database.tenants[item.tenant_id].outbox.extend(
            OutboxEntry(memory_id, now, now, OutboxKind.REFILL) for memory_id in memory_ids
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

    def _remove(self, entries: list[OutboxEntry]) -> None:
        gone = {id(e) for e in entries}
        for tables in self._database.tenants.values():
            tables.outbox[:] = [e for e in tables.outbox if id(e) not in gone]


class FakeImportQueue:
    """Pending batches across tenants, oldest first, one lease at a time."""

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database

    def lease(self, owner: str, now: datetime, lease_seconds: float) -> tuple[str, str] | None:
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


@dataclass
class FakeThesaurus:
    """Lists the entries it was given (casefolded words, as the port's); no other word has one."""

    entries: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def entry(self, word: str) -> frozenset[str]:
        return self.entries.get(word, frozenset())


@dataclass(frozen=True)
class Ports:
    """One fake per port of `kernel/domain/ports.py`, typed as the port: mypy checks each fake here,
    and `tests/unit/test_fake_storage.py` checks that no port is left out."""

    units: UnitOfWorkFactory
    usage_store: UsageStore
    usage_log: UsageLog
    outbox_store: OutboxStore
    import_queue: ImportQueue
    search: Search
    secrets: SecretScanner
    import_work: ImportWork
    thesaurus: Thesaurus


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
        thesaurus=FakeThesaurus(),
    )
