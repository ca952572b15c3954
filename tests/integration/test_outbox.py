"""The outbox on real databases: leases keep concurrent drainers apart, failures back off."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import event

from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Identity, utcnow
from memory_service.kernel.domain.ports import OutboxKind, UnitOfWork
from memory_service.unit_of_work import SqlUnitOfWorkFactory


def enqueue(units: SqlUnitOfWorkFactory, count: int, tenant: str = "t1") -> None:
    now = utcnow()
    with units(tenant, write=True) as uow:
        for n in range(count):
            uow.outbox.enqueue(f"{n:032x}", now, now)
        uow.commit()


def test_concurrent_leases_never_share_an_item(units: SqlUnitOfWorkFactory) -> None:
    enqueue(units, 300)
    store = units.outbox_store()
    leased: dict[str, list[int]] = {}
    barrier = threading.Barrier(3)

    def drainer(owner: str) -> None:
        barrier.wait()
        mine: list[int] = []
        while batch := store.lease(owner, 20, utcnow(), 60):
            mine.extend(item.id for item in batch)
            store.complete(owner, [item.id for item in batch])
        leased[owner] = mine

    threads = [threading.Thread(target=drainer, args=(f"w{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [item for items in leased.values() for item in items]
    assert len(every) == 300
    assert len(set(every)) == 300
    assert store.depth(utcnow()) == (0, None)


def test_a_failed_item_backs_off_and_an_expired_lease_is_leased_again(
    units: SqlUnitOfWorkFactory,
) -> None:
    enqueue(units, 2)
    store = units.outbox_store()
    now = utcnow()
    first, second = store.lease("a", 10, now, lease_seconds=30)
    assert store.lease("b", 10, now, 30) == []  # leased
    store.retry("a", [first], "sidecar down", now)
    assert store.lease("b", 10, now, 30) == []  # backing off
    later = now + timedelta(seconds=31)
    leased_again = store.lease("b", 10, later, 30)
    assert {item.id for item in leased_again} == {first.id, second.id}
    assert next(i for i in leased_again if i.id == first.id).attempts == 1
    store.complete("a", [second.id])  # the old owner lost its lease: nothing happens
    assert store.depth(later)[0] == 2


def test_released_items_are_due_again_at_once_and_untouched(units: SqlUnitOfWorkFactory) -> None:
    """An unreachable index is nobody's fault: released items keep their attempts and due time,
    and a stopping worker's leases go back without waiting for them to run out."""
    enqueue(units, 3)
    store = units.outbox_store()
    now = utcnow()
    first, second, third = store.lease("a", 10, now, lease_seconds=30)
    store.release("a", [first.id], "index write failed: UNAVAILABLE")
    store.release("b", [second.id], "not b's to release")  # only the owner's leases go
    assert [i.id for i in store.lease("b", 10, now, 30)] == [first.id]
    store.release("a", None, "the worker stopped")  # everything a still holds
    again = store.lease("c", 10, now, 30)
    assert {i.id for i in again} == {second.id, third.id}
    assert all(i.attempts == 0 for i in again)


def test_a_tenant_item_turns_into_refills_and_completes_in_the_same_transaction(
    units: SqlUnitOfWorkFactory,
) -> None:
    """A rebuild is queued work: leased, it becomes one refill per memory and is gone at once;
    a worker whose lease was lost writes nothing."""
    now = utcnow()
    with units("t1", write=True) as uow:
        uow.outbox.enqueue_tenant(OutboxKind.REBUILD, now)
        uow.outbox.enqueue(f"{9:032x}", now, now)
        uow.commit()
    with units("t1", write=False) as uow:
        assert (uow.outbox.queued_changes(), uow.outbox.tenant_work()) == ({f"{9:032x}": now}, True)
    with units("t2", write=False) as uow:
        assert (uow.outbox.queued_changes(), uow.outbox.tenant_work()) == ({}, False)
    store = units.outbox_store()
    rebuild, change = store.lease("a", 10, now, 30)
    assert (rebuild.kind, change.kind) == (OutboxKind.REBUILD, OutboxKind.MEMORY)
    assert not store.expand("b", rebuild, [f"{1:032x}"], now)  # not b's lease
    assert store.expand("a", rebuild, [f"{n:032x}" for n in range(3)], now)
    assert not store.expand("a", rebuild, [f"{n:032x}" for n in range(3)], now)  # done once
    refills = store.lease("c", 10, now, 30)
    assert sorted((i.kind, i.memory_id) for i in refills) == [
        (OutboxKind.REFILL, f"{n:032x}") for n in range(3)
    ]
    with units("t1", write=False) as uow:
        # refilling is tenant work, not a change
        assert (len(uow.outbox.queued_changes()), uow.outbox.tenant_work()) == (1, True)
    store.complete("c", [i.id for i in refills])
    store.complete("a", [change.id])
    with units("t1", write=False) as uow:
        assert (uow.outbox.queued_changes(), uow.outbox.tenant_work()) == ({}, False)


def test_a_commit_that_queues_index_work_wakes_the_drain(units: SqlUnitOfWorkFactory) -> None:
    """Only writes whose index work is due now wake it: a future boundary waits for its poll,
    and a write without index work (or one that rolls back) wakes nothing."""
    woken: list[int] = []
    tx = Transactions(units, timedelta(hours=1), lambda: woken.append(1))
    key: RequestKey[None] = RequestKey("m", "", "", lambda _: b"", lambda _: None)
    identity = Identity("t1", "u1")

    def queue(due: timedelta) -> Callable[[UnitOfWork], Answer[None]]:
        def work(uow: UnitOfWork) -> Answer[None]:
            now = utcnow()
            uow.outbox.enqueue(f"{len(woken):032x}", now + due, now)
            return Answer(None)

        return work

    tx.write(identity, key, queue(timedelta(0)))
    assert woken == [1]
    tx.write(identity, key, queue(timedelta(days=1)))
    tx.write(identity, key, lambda uow: Answer(None))
    assert woken == [1]

    def fails(uow: UnitOfWork) -> Answer[None]:
        queue(timedelta(0))(uow)
        raise RuntimeError("refused before commit")

    with pytest.raises(RuntimeError):
        tx.write(identity, key, fails)
    assert woken == [1]


def test_a_unit_of_work_writes_its_memory_items_in_one_statement_in_order(
    units: SqlUnitOfWorkFactory,
) -> None:
    """A batch of creates queues an item per memory (and per future boundary): they go in as
    one INSERT at commit, in the order queued, and a unit of work that does not commit writes
    none. The tenant item queued after them keeps its place behind them."""
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if "index_outbox" in statement and statement.lstrip().upper().startswith("INSERT"):
            statements.append(statement)

    event.listen(units.engine, "before_cursor_execute", seen)
    try:
        now = utcnow()
        with units("t1", write=True) as uow:
            for n in range(50):
                uow.outbox.enqueue(f"{n:032x}", now, now)
            # never committed
        enqueue(units, 50)
        assert len(statements) == 1
        with units("t1", write=True) as uow:
            uow.outbox.enqueue(f"{99:032x}", now, now)
            uow.outbox.enqueue_tenant(OutboxKind.RESYNC, now)
            uow.commit()
    finally:
        event.remove(units.engine, "before_cursor_execute", seen)
    leased = units.outbox_store().lease("a", 100, utcnow(), 30)
    assert [item.memory_id for item in leased] == [f"{n:032x}" for n in (*range(50), 99)] + [""]
    assert leased[-1].kind is OutboxKind.RESYNC
