"""The outbox: index work queued in the transaction of the change it follows
(`SqlOutboxRepository`, one tenant's), and drained after the commit by the outbox worker
across tenants (`SqlOutboxStore`).

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`), or from
`AllTenants` for the drain."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.ports import (
    EMPTY_AHEAD,
    ON_ITS_WAY,
    OutboxItem,
    OutboxKind,
    chunks,
)
from memory_service.kernel.storage.models import OutboxRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK
from memory_service.kernel.storage.scoped import AllTenants, TenantScoped


class SqlOutboxRepository(TenantScoped):
    """Memory items are kept until the unit of work commits (or reads the outbox) and then go
    in as one multi-row INSERT, in the order they were queued: a batch of creates costs one
    statement for its index work, not one per memory and boundary."""

    queued_now = False

    def __init__(self, session: Session, tenant_id: str) -> None:
        super().__init__(session, tenant_id)
        self._queued: list[dict[str, Any]] = []

    def enqueue(self, memory_id: str, due_time: datetime, now: datetime) -> None:
        self.queued_now = self.queued_now or due_time <= now
        self._queued.append(
            {
                "memory_id": memory_id,
                "due_time": due_time,
                "create_time": now,
                "attempts": 0,
                "kind": OutboxKind.MEMORY.value,
            }
        )

    def flush(self) -> None:
        """Writes the queued items; the unit of work calls it before COMMIT."""
        rows, self._queued = self._queued, []
        try:
            self._insert_many(OutboxRow, rows)
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def enqueue_tenant(self, kind: OutboxKind, now: datetime) -> None:
        self.queued_now = True
        self.flush()  # after the memory items queued before it
        self._insert(
            OutboxRow, memory_id="", due_time=now, create_time=now, attempts=0, kind=kind.value
        )

    def queued_changes(self) -> dict[str, datetime]:
        self.flush()
        rows = self._session.execute(
            self._select(
                OutboxRow, OutboxRow.memory_id, OutboxRow.due_time, OutboxRow.attempts
            ).where(OutboxRow.kind == OutboxKind.MEMORY.value)
        )
        changes: dict[str, datetime] = {}
        for memory_id, due_time, attempts in rows:
            due = ON_ITS_WAY if attempts else due_time
            if memory_id not in changes or due < changes[memory_id]:
                changes[memory_id] = due
        return changes

    def tenant_work(self) -> bool:
        self.flush()
        found = self._session.scalar(
            self._select(OutboxRow, OutboxRow.id)
            .where(OutboxRow.kind != OutboxKind.MEMORY.value)
            .limit(1)
        )
        return found is not None


class SqlOutboxStore:
    """Cross-tenant by design: the drain worker serves every tenant. `FOR UPDATE SKIP LOCKED`
    lets several replicas lease disjoint items on PostgreSQL; SQLite serializes writers anyway."""

    def __init__(self, all_tenants: Callable[[], AbstractContextManager[AllTenants]]) -> None:
        self._all_tenants = all_tenants

    def lease(
        self, owner: str, limit: int, now: datetime, lease_seconds: float
    ) -> list[OutboxItem]:
        with self._all_tenants() as everyone:
            rows = list(
                everyone.session.scalars(
                    everyone.select(OutboxRow)
                    .where(
                        OutboxRow.due_time <= now,
                        or_(OutboxRow.lease_until.is_(None), OutboxRow.lease_until < now),
                    )
                    .order_by(OutboxRow.id)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
            )
            if not rows:
                return []
            everyone.session.execute(
                everyone.update(OutboxRow)
                .where(OutboxRow.id.in_([row.id for row in rows]))
                .values(lease_owner=owner, lease_until=now + timedelta(seconds=lease_seconds))
            )
            return [
                OutboxItem(
                    row.id,
                    row.tenant_id,
                    row.memory_id,
                    row.due_time,
                    row.create_time,
                    row.attempts,
                    OutboxKind(row.kind),
                )
                for row in rows
            ]

    def expand(self, owner: str, item: OutboxItem, memory_ids: list[str], now: datetime) -> bool:
        with self._all_tenants() as everyone:
            done = everyone.session.execute(
                everyone.delete(OutboxRow).where(
                    OutboxRow.id == item.id, OutboxRow.lease_owner == owner
                )
            )
            if not done.rowcount:  # type: ignore[attr-defined]
                return False
            everyone.insert_many(
                OutboxRow,
                [
                    {
                        "tenant_id": item.tenant_id,
                        "memory_id": memory_id,
                        "due_time": now,
                        "create_time": now,
                        "attempts": 0,
                        "kind": OutboxKind.REFILL.value,
                    }
                    for memory_id in memory_ids
                ],
            )
            return True

    def complete(
        self,
        owner: str,
        ids: list[int],
        ahead: Mapping[tuple[str, str], Sequence[datetime]] = EMPTY_AHEAD,
    ) -> None:
        with self._all_tenants() as everyone:
            completed: set[tuple[str, str]] = set()
            for chunk in chunks([str(i) for i in ids], IN_CLAUSE_CHUNK):
                mine = (OutboxRow.id.in_([int(i) for i in chunk]), OutboxRow.lease_owner == owner)
                if ahead:
                    rows = everyone.session.execute(
                        everyone.select(OutboxRow, OutboxRow.tenant_id, OutboxRow.memory_id)
                        .where(*mine)
                        .with_for_update()
                    )
                    completed.update((tenant_id, memory_id) for tenant_id, memory_id in rows)
                everyone.session.execute(everyone.delete(OutboxRow).where(*mine))
            # A memory whose items went to another drain (this lease expired) is that drain's
            # to follow: its read is newer than ours.
            mine_ahead = {key: instants for key, instants in ahead.items() if key in completed}
            if mine_ahead:
                _queue_missing(everyone, mine_ahead)

    def retry(self, owner: str, items: list[OutboxItem], error: str, now: datetime) -> None:
        with self._all_tenants() as everyone:
            for item in items:
                delay = min(60.0, 0.5 * 2**item.attempts) * random.uniform(0.8, 1.2)
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(OutboxRow.id == item.id, OutboxRow.lease_owner == owner)
                    .values(
                        attempts=item.attempts + 1,
                        due_time=now + timedelta(seconds=delay),
                        lease_owner=None,
                        lease_until=None,
                        last_error=error[:2000],
                    )
                )

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        with self._all_tenants() as everyone:
            values = {"lease_owner": None, "lease_until": None, "last_error": error[:2000]}
            if ids is None:
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(OutboxRow.lease_owner == owner)
                    .values(**values)
                )
                return
            for chunk in chunks([str(i) for i in ids], IN_CLAUSE_CHUNK):
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(
                        OutboxRow.id.in_([int(i) for i in chunk]), OutboxRow.lease_owner == owner
                    )
                    .values(**values)
                )

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        with self._all_tenants() as everyone:
            count, oldest = everyone.session.execute(
                everyone.select(
                    OutboxRow, func.count(OutboxRow.id), func.min(OutboxRow.create_time)
                ).where(OutboxRow.due_time <= now)
            ).one()
        return int(count), (oldest.replace(tzinfo=UTC) if oldest is not None else None)


def _queue_missing(
    everyone: AllTenants, ahead: Mapping[tuple[str, str], Sequence[datetime]]
) -> None:
    """A MEMORY item for each boundary in `ahead` with none queued at that instant (found by
    the outbox's index on memory and due time). Two drains completing changes of one memory
    at the same moment can both queue an instant: the memory is then indexed twice at it."""
    queued: set[tuple[str, str, datetime]] = set()
    for chunk in chunks(sorted({memory_id for _, memory_id in ahead}), IN_CLAUSE_CHUNK):
        rows = everyone.session.execute(
            everyone.select(
                OutboxRow, OutboxRow.tenant_id, OutboxRow.memory_id, OutboxRow.due_time
            ).where(OutboxRow.memory_id.in_(chunk))
        )
        queued.update((tenant, memory, due) for tenant, memory, due in rows)
    everyone.insert_many(
        OutboxRow,
        [
            {
                "tenant_id": tenant_id,
                "memory_id": memory_id,
                "due_time": instant,
                "create_time": instant,  # its lag and age count from when it is due
                "attempts": 0,
                "kind": OutboxKind.MEMORY.value,
            }
            for (tenant_id, memory_id), instants in ahead.items()
            for instant in instants
            if (tenant_id, memory_id, instant) not in queued
        ],
    )
