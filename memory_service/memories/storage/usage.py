"""When memories were last used: read per tenant, written in batches across tenants."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from datetime import datetime

from sqlalchemy import case

from memory_service.kernel.domain.ports import chunks
from memory_service.kernel.storage.models import MemoryUsageRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK
from memory_service.kernel.storage.scoped import AllTenants, TenantScoped


class SqlUsageRepository(TenantScoped):
    def last_used(self, memory_ids: list[str]) -> dict[str, datetime]:
        found: dict[str, datetime] = {}
        for chunk in chunks(sorted(set(memory_ids)), IN_CLAUSE_CHUNK):
            rows = self._session.execute(
                self._select(
                    MemoryUsageRow, MemoryUsageRow.memory_id, MemoryUsageRow.last_used_time
                ).where(MemoryUsageRow.memory_id.in_(chunk))
            )
            found.update({row.memory_id: row.last_used_time for row in rows})
        return found


class SqlUsageStore:
    """Cross-tenant by design: one flush writes what every tenant's reads noted. A time only
    moves forward, so flushes from several replicas in any order keep the latest use."""

    def __init__(self, all_tenants: Callable[[], AbstractContextManager[AllTenants]]) -> None:
        self._all_tenants = all_tenants

    def record(self, uses: Mapping[tuple[str, str], datetime]) -> None:
        if not uses:
            return
        rows = [
            {"tenant_id": tenant, "memory_id": memory, "last_used_time": when}
            for (tenant, memory), when in sorted(uses.items())  # one lock order for all replicas
        ]
        with self._all_tenants() as everyone:
            statement = everyone.upsert(MemoryUsageRow)
            current = MemoryUsageRow.__table__.c.last_used_time
            later = case(
                (statement.excluded.last_used_time > current, statement.excluded.last_used_time),
                else_=current,
            )
            for start in range(0, len(rows), IN_CLAUSE_CHUNK):
                everyone.session.execute(
                    statement.on_conflict_do_update(
                        index_elements=["tenant_id", "memory_id"],
                        set_={"last_used_time": later},
                    ),
                    rows[start : start + IN_CLAUSE_CHUNK],
                )
