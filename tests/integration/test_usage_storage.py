"""Usage times on real SQLite and PostgreSQL: batched upserts that only move forward, per tenant."""

from __future__ import annotations

from datetime import timedelta

from memory_service.kernel.domain.model import utcnow
from memory_service.unit_of_work import SqlUnitOfWorkFactory


def test_a_flush_keeps_the_latest_use_and_reads_stay_in_their_tenant(
    units: SqlUnitOfWorkFactory,
) -> None:
    store = units.usage_store()
    now = utcnow()
    store.record({("t1", "m1"): now, ("t1", "m2"): now, ("t2", "m1"): now - timedelta(hours=1)})
    # A late flush from another replica carries an older time: the newer one stays.
    store.record({("t1", "m1"): now - timedelta(days=1), ("t1", "m2"): now + timedelta(seconds=5)})
    with units("t1", write=False) as uow:
        assert uow.usage.last_used(["m1", "m2", "m3"]) == {
            "m1": now,
            "m2": now + timedelta(seconds=5),
        }
    with units("t2", write=False) as uow:
        assert uow.usage.last_used(["m1", "m2"]) == {"m1": now - timedelta(hours=1)}


def test_a_large_batch_is_written_whole(units: SqlUnitOfWorkFactory) -> None:
    now = utcnow()
    units.usage_store().record({("t1", f"m{i}"): now for i in range(1200)})
    with units("t1", write=False) as uow:
        assert len(uow.usage.last_used([f"m{i}" for i in range(1200)])) == 1200
