"""The import queue on real databases: one replica holds a pending batch at a time, a dead
replica's lease expires, and every lease counts an attempt before the parse starts."""

from __future__ import annotations

import threading
from datetime import timedelta

from memory_service.kernel.domain.model import (
    ArchiveFormat,
    ImportBatch,
    ImportState,
    new_id,
    utcnow,
)
from memory_service.unit_of_work import SqlUnitOfWorkFactory


def pending(units: SqlUnitOfWorkFactory, count: int, tenant: str = "t1") -> list[str]:
    ids = []
    with units(tenant, write=True) as uow:
        for n in range(count):
            batch = ImportBatch(
                new_id(), tenant, "u1", ArchiveFormat.MEMORY_SUMMARY, f"{n:064x}",
                ImportState.PENDING, utcnow(),
            )  # fmt: skip
            uow.imports.add_batch(batch, b"- a\n")
            ids.append(batch.id)
        uow.commit()
    return ids


def test_replicas_lease_disjoint_batches(units: SqlUnitOfWorkFactory) -> None:
    ids = pending(units, 30)
    queue = units.import_queue()
    leased: dict[str, list[str]] = {}
    barrier = threading.Barrier(3)

    def replica(owner: str) -> None:
        barrier.wait()
        mine = []
        while (lease := queue.lease(owner, utcnow(), 600)) is not None:
            mine.append(lease[1])
        leased[owner] = mine

    threads = [threading.Thread(target=replica, args=(f"r{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [batch for batches in leased.values() for batch in batches]
    assert sorted(every) == sorted(ids)  # each once, none twice


def test_a_dead_replicas_lease_expires_and_each_lease_counts_an_attempt(
    units: SqlUnitOfWorkFactory,
) -> None:
    [batch_id] = pending(units, 1)
    queue = units.import_queue()
    now = utcnow()
    assert queue.lease("a", now, 60) == ("t1", batch_id)
    assert queue.lease("b", now, 60) is None  # leased to a
    assert queue.lease("b", now + timedelta(seconds=61), 60) == ("t1", batch_id)
    with units("t1", write=False) as uow:
        batch = uow.imports.get_batch(batch_id)
    assert batch is not None
    assert batch.attempts == 2
    assert batch.state is ImportState.PENDING
    with units("t1", write=True) as uow:
        batch.state = ImportState.FAILED
        uow.imports.update_batch(batch)
        uow.commit()
    assert queue.lease("c", now + timedelta(days=1), 60) is None  # finished batches stay put
