"""The outbox on real databases: leases keep concurrent drainers apart, failures back off."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest
from sqlalchemy import event

from memory_service.app.transactions import Answer, RequestKey, Transactions
from memory_service.domain.indexing import SCHEDULED_AHEAD, IndexDocument
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import OutboxKind, UnitOfWork
from memory_service.storage.unit_of_work import SqlUnitOfWorkFactory
from memory_service.workers.outbox import OutboxWorker
from tests.support.world import World


def enqueue(units: SqlUnitOfWorkFactory, count: int, tenant: str = "t1") -> None:
    now = utcnow()
    with units(tenant, write=True) as uow:
        for n in range(count):
            uow.outbox.enqueue(f"{n:032x}", now, now)
        uow.commit()


def test_concurrent_claims_never_share_an_item(units: SqlUnitOfWorkFactory) -> None:
    enqueue(units, 300)
    store = units.outbox_store()
    claimed: dict[str, list[int]] = {}
    barrier = threading.Barrier(3)

    def drainer(owner: str) -> None:
        barrier.wait()
        mine: list[int] = []
        while batch := store.claim(owner, 20, utcnow(), 60):
            mine.extend(item.id for item in batch)
            store.complete(owner, [item.id for item in batch])
        claimed[owner] = mine

    threads = [threading.Thread(target=drainer, args=(f"w{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [item for items in claimed.values() for item in items]
    assert len(every) == 300
    assert len(set(every)) == 300
    assert store.depth(utcnow()) == (0, None)


def test_a_failed_item_backs_off_and_an_expired_lease_is_claimed_again(
    units: SqlUnitOfWorkFactory,
) -> None:
    enqueue(units, 2)
    store = units.outbox_store()
    now = utcnow()
    first, second = store.claim("a", 10, now, lease_seconds=30)
    assert store.claim("b", 10, now, 30) == []  # leased
    store.retry("a", [first], "sidecar down", now)
    assert store.claim("b", 10, now, 30) == []  # backing off
    later = now + timedelta(seconds=31)
    reclaimed = store.claim("b", 10, later, 30)
    assert {item.id for item in reclaimed} == {first.id, second.id}
    assert next(i for i in reclaimed if i.id == first.id).attempts == 1
    store.complete("a", [second.id])  # the old owner lost its lease: nothing happens
    assert store.depth(later)[0] == 2


def test_released_items_are_due_again_at_once_and_untouched(units: SqlUnitOfWorkFactory) -> None:
    """An unreachable index is nobody's fault: released items keep their attempts and due time,
    and a stopping worker's leases go back without waiting for them to run out."""
    enqueue(units, 3)
    store = units.outbox_store()
    now = utcnow()
    first, second, third = store.claim("a", 10, now, lease_seconds=30)
    store.release("a", [first.id], "index write failed: UNAVAILABLE")
    store.release("b", [second.id], "not b's to release")  # only the owner's leases go
    assert [i.id for i in store.claim("b", 10, now, 30)] == [first.id]
    store.release("a", None, "the worker stopped")  # everything a still holds
    again = store.claim("c", 10, now, 30)
    assert {i.id for i in again} == {second.id, third.id}
    assert all(i.attempts == 0 for i in again)


def test_a_tenant_item_turns_into_refills_and_completes_in_the_same_transaction(
    units: SqlUnitOfWorkFactory,
) -> None:
    """A rebuild is queued work: claimed, it becomes one refill per memory and is gone at once;
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
    rebuild, change = store.claim("a", 10, now, 30)
    assert (rebuild.kind, change.kind) == (OutboxKind.REBUILD, OutboxKind.MEMORY)
    assert not store.expand("b", rebuild, [f"{1:032x}"], now)  # not b's lease
    assert store.expand("a", rebuild, [f"{n:032x}" for n in range(3)], now)
    assert not store.expand("a", rebuild, [f"{n:032x}" for n in range(3)], now)  # done once
    refills = store.claim("c", 10, now, 30)
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
    claimed = units.outbox_store().claim("a", 100, utcnow(), 30)
    assert [item.memory_id for item in claimed] == [f"{n:032x}" for n in (*range(50), 99)] + [""]
    assert claimed[-1].kind is OutboxKind.RESYNC


class _Texts:
    """An index that keeps the text it was last sent for each memory, written by the drain."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None:
        self.texts.update((document.memory_id, document.text) for document in documents)

    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        for memory_id in memory_ids:
            self.texts.pop(memory_id, None)

    def delete_tenant(self, tenant_id: str, deadline: float | None = None) -> None:
        self.texts.clear()


def test_every_scheduled_change_reaches_the_index_however_many_a_memory_gathers(
    units: SqlUnitOfWorkFactory,
) -> None:
    """Fails on previous main: a write queued its memory's first four boundaries and nothing
    queued the rest, so from the fifth scheduled correction on the index kept the fourth's
    text (and recall searched words the memory no longer said)."""
    world = World(units)
    mara = world.who("mara")
    index = _Texts()
    drain = OutboxWorker(units.outbox_store(), units, index)  # type: ignore[arg-type]
    start = utcnow()
    memory, _ = world.create(
        mara, world.say(mara, "I prefer mornings", when=start), "mornings", now=start
    )
    steps = [start + timedelta(seconds=3 + 0.3 * n) for n in range(SCHEDULED_AHEAD + 2)]
    for n, valid_from in enumerate(steps, 1):
        said = world.say(mara, f"from then on, plan {n}", when=utcnow())
        memory, _ = world.correct(
            mara, memory, said, f"plan {n}", valid_from=valid_from, now=utcnow()
        )
    assert utcnow() < steps[0], "the corrections must all be scheduled before the first applies"
    seen = []
    while utcnow() < steps[-1] + timedelta(milliseconds=200):
        drain.drain_once()
        if memory.id in index.texts and (not seen or seen[-1] != index.texts[memory.id]):
            seen.append(index.texts[memory.id])
        time.sleep(0.02)
    drain.drain_once()
    assert index.texts[memory.id].endswith(": plan 6")
    assert seen[0].endswith(": mornings")
    with units("acme", write=False) as uow:
        assert uow.outbox.queued_changes() == {}  # nothing left behind
