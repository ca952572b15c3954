"""The outbox drain waits for an unreachable index as a whole, and hands its leases back."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest

from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import OutboxItem
from memory_service.memories.domain.indexing import IndexDocument, IndexUnavailable
from memory_service.memories.workers import outbox
from memory_service.memories.workers.outbox import OutboxWorker
from memory_service.testing.outbox import drain_once
from tests.unit import test_rules


class Store:
    def __init__(self, count: int) -> None:
        now = utcnow()
        self.items = [OutboxItem(i, "acme", f"{i:032x}", now, now, 0) for i in range(count)]
        self.leased: set[int] = set()
        self.retried: list[int] = []
        self.released: list[list[int] | None] = []
        self.completed: list[int] = []
        self.leases = 0

    def lease(self, owner: str, limit: int, now: datetime, lease: float) -> list[OutboxItem]:
        self.leases += 1
        free = [i for i in self.items if i.id not in self.leased][:limit]
        self.leased |= {i.id for i in free}
        return free

    def complete(self, owner: str, ids: list[int], ahead: object = None) -> None:
        self.completed += ids
        self.items = [i for i in self.items if i.id not in ids]
        self.leased -= set(ids)

    def retry(self, owner: str, items: list[OutboxItem], error: str, now: datetime) -> None:
        self.retried += [i.id for i in items]
        self.leased -= {i.id for i in items}

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        self.released.append(ids)
        self.leased -= set(ids) if ids is not None else set(self.leased)

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        return len(self.items), None


class Sink:
    """Deletes only (the fake store has no memories, so every item is a removal)."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None:
        raise AssertionError("nothing to upsert")

    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        self.calls += 1
        assert deadline is not None
        assert deadline > time.monotonic()
        if self.down:
            raise IndexUnavailable("index write failed: UNAVAILABLE")


class Memories:
    def get_many(self, ids: list[str]) -> dict[str, Any]:
        return {}


class Uow:
    memories = Memories()


@contextmanager
def units(tenant_id: str, write: bool = False) -> Iterator[Uow]:
    yield Uow()


def until(check: Callable[[], object], seconds: float) -> None:
    """Polls `check` until it holds or `seconds` pass; the caller's assertion says which."""
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_an_unreachable_index_releases_items_untouched_and_backs_off_the_whole_drain() -> None:
    store, sink = Store(20), Sink()
    worker = OutboxWorker(store, units, sink, batch_size=16)  # type: ignore[arg-type]
    assert drain_once(worker) == 0
    assert store.retried == []  # no item's own backoff grows
    assert store.released == [list(range(16))]
    assert store.leased == set()
    drain_once(worker)
    assert store.released[-1] == list(range(8))  # smaller batches while it is away
    sink.down = False
    assert drain_once(worker) == 8
    assert drain_once(worker) == 12  # and full ones again once it is back
    assert store.items == []


def test_wake_ends_the_backoff_at_once() -> None:
    store, sink = Store(4), Sink()
    worker = OutboxWorker(store, units, sink, poll_seconds=0.01)  # type: ignore[arg-type]
    for _ in range(6):
        drain_once(worker)  # backoff grows to its cap of seconds
    worker.start()
    try:
        time.sleep(0.3)  # its first drain fails too, and it waits
        sink.down = False
        time.sleep(0.3)
        assert store.items  # still backing off
        worker.wake()  # the sidecar reports SERVING
        until(lambda: not store.items, 2)
        assert store.items == []
    finally:
        worker.stop()


def test_new_work_does_not_cut_a_backoff_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every commit that queues index work wakes the drain; while the index is unreachable
    that must not turn each write into another failed attempt (and another logged failure).
    The backoff is made a minute long, so however slowly the writes below go (a busy machine)
    they all fall inside it, and only `wake()` may end it."""
    monkeypatch.setattr(outbox, "BACKOFF_MAX", 60.0)
    store, sink = Store(4), Sink()
    worker = OutboxWorker(store, units, sink, poll_seconds=0.01)  # type: ignore[arg-type]
    while worker._backoff < 60:
        drain_once(worker)  # each failure doubles the backoff, up to its cap
    attempts = sink.calls
    worker.start()
    try:
        for _ in range(50):
            worker.work_queued()  # fifty writes commit meanwhile
            time.sleep(0.01)
        assert sink.calls == attempts
        sink.down = False
        worker.wake()  # the sidecar reports SERVING
        until(lambda: not store.items, 10)
        assert store.items == []
    finally:
        worker.stop()


def test_new_work_wakes_an_idle_drain_at_once() -> None:
    store, sink = Store(0), Sink()
    sink.down = False
    worker = OutboxWorker(store, units, sink, poll_seconds=30)  # type: ignore[arg-type]
    worker.start()
    try:
        time.sleep(0.1)
        now = utcnow()
        store.items.append(OutboxItem(99, "acme", f"{99:032x}", now, now, 0))
        worker.work_queued()
        until(lambda: not store.items, 2)
        assert store.items == []
    finally:
        worker.stop()


def test_an_idle_drain_waits_for_a_commit_or_its_poll_without_leasing() -> None:
    """Idle, the drain leases (a write transaction) once per poll, not ten times a second:
    a commit in this process wakes it."""
    store, sink = Store(0), Sink()
    sink.down = False
    worker = OutboxWorker(store, units, sink, poll_seconds=30)  # type: ignore[arg-type]
    worker.start()
    try:
        until(lambda: store.leases, 10)
        time.sleep(0.5)
        assert store.leases == 1  # the lease at start, and none since
        now = utcnow()
        store.items.append(OutboxItem(7, "acme", f"{7:032x}", now, now, 0))
        worker.work_queued()
        until(lambda: not store.items, 10)
        assert store.items == []
    finally:
        worker.stop()


def test_work_nobody_signalled_is_drained_by_the_idle_poll() -> None:
    """Work queued by another process (a replica, a command), or left leased by a drain that
    crashed, wakes nothing here: the idle poll still finds it."""
    store, sink = Store(0), Sink()
    sink.down = False
    worker = OutboxWorker(store, units, sink, poll_seconds=0.2)  # type: ignore[arg-type]
    worker.start()
    try:
        until(lambda: store.leases, 10)
        now = utcnow()
        store.items.append(OutboxItem(8, "acme", f"{8:032x}", now, now, 0))  # no work_queued()
        until(lambda: not store.items, 10)
        assert store.items == []
    finally:
        worker.stop()


def test_stop_hands_back_what_the_worker_still_leases() -> None:
    store, sink = Store(4), Sink()
    worker = OutboxWorker(store, units, sink)  # type: ignore[arg-type]
    store.lease("someone", 2, utcnow(), 15)  # as if a batch were in hand
    worker._thread = threading.Thread(target=lambda: None)
    worker._thread.start()
    worker.stop()
    assert store.released[-1] is None
    assert store.leased == set()


class HeldSink(Sink):
    """Records when each delete starts and ends; the first one waits until released."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.release = threading.Event()
        self.events: list[tuple[str, int, frozenset[str]]] = []
        self._lock = threading.Lock()

    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        with self._lock:
            self.calls += 1
            call = self.calls
            self.events.append(("start", call, frozenset(memory_ids)))
        if call == 1:
            assert self.release.wait(5)
        with self._lock:
            self.events.append(("end", call, frozenset(memory_ids)))


def test_a_batch_never_overtakes_one_in_flight_for_the_same_memory() -> None:
    """A batch with a later change of a memory that a batch in flight is writing waits for
    that batch: the index sees each memory's changes in order, so a removal is never
    overtaken by an older write."""
    store, sink = Store(15), HeldSink()
    now = utcnow()
    store.items.insert(8, OutboxItem(15, "acme", f"{0:032x}", now, now, 0))  # memory 0 again
    worker = OutboxWorker(store, units, sink, poll_seconds=0.01, batch_size=8)  # type: ignore[arg-type]
    worker.start()
    try:
        time.sleep(0.5)  # time enough for the second batch to go out if nothing held it
        # batches: memories 0-7 (held by the index), then 0 again with 8-14
        assert [e[:2] for e in sink.events] == [("start", 1)]
        sink.release.set()
        until(lambda: not store.items, 5)
        assert store.items == []
        assert [e[:2] for e in sink.events] == [("start", 1), ("end", 1), ("start", 2), ("end", 2)]
        assert f"{0:032x}" in sink.events[-1][2]
    finally:
        sink.release.set()
        worker.stop()


def test_a_second_batch_goes_out_while_the_index_still_works_on_the_first() -> None:
    store, sink = Store(16), HeldSink()
    worker = OutboxWorker(store, units, sink, poll_seconds=0.01, batch_size=8)  # type: ignore[arg-type]
    worker.start()
    try:
        until(lambda: len(sink.events) >= 3, 5)
        assert [e[:2] for e in sink.events] == [("start", 1), ("start", 2), ("end", 2)]
        # The worker settles a finished batch on its next turn, a moment after the index
        # answered: wait for that, while the first batch is still held.
        until(lambda: store.completed, 5)
        assert store.completed == list(range(8, 16))  # settled without waiting for the first
        sink.release.set()
        until(lambda: not store.items, 5)
        assert store.items == []
    finally:
        sink.release.set()
        worker.stop()


def test_commits_arriving_one_by_one_are_drained_in_a_few_batches() -> None:
    """Forty commits 5 ms apart, each queueing one item and waking the drain, as corrections
    do: the drain gathers the ones right behind a partial batch instead of leasing, reading,
    sending and completing a batch per commit (each batch costs the serving process as much
    CPU as a correction)."""
    store, sink = Store(0), Sink()
    sink.down = False
    worker = OutboxWorker(store, units, sink, poll_seconds=30)  # type: ignore[arg-type]
    worker.start()
    try:
        for i in range(40):
            now = utcnow()
            store.items.append(OutboxItem(i, "acme", f"{i:032x}", now, now, 0))
            worker.work_queued()
            time.sleep(0.005)
        until(lambda: not store.items, 5)
        assert sorted(store.completed) == list(range(40))
        assert sink.calls <= 10  # one per commit before
    finally:
        worker.stop()


class Documents(Sink):
    """Takes upserts and keeps what it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[IndexDocument] = []

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None:
        self.documents += documents


def test_a_correction_committed_just_before_the_read_is_indexed_at_its_revision() -> None:
    """The drain reads a memory that a correction has just changed: the correction's clock
    (its revision's start) was read before it committed, the drain's read sees the commit, so
    the drain must decide what applies on a clock read after that, not before. On an earlier
    clock it sent the new version with the old revision's text, which the index kept."""
    store = Store(1)
    sink = Documents()

    class Corrected:
        def get_many(self, ids: list[str]) -> dict[str, Any]:
            # Committed just now, after the drain leased the item.
            corrected = test_rules.memory(test_rules.revision(1))
            corrected.id, corrected.version = ids[0], 2
            test_rules.correct(corrected, utcnow())
            return {ids[0]: corrected}

    class CorrectedUow:
        memories = Corrected()

    @contextmanager
    def corrected_units(tenant_id: str, write: bool = False) -> Iterator[CorrectedUow]:
        yield CorrectedUow()

    worker = OutboxWorker(store, corrected_units, sink)  # type: ignore[arg-type]
    assert drain_once(worker) == 1
    assert [(d.version, d.revision_number) for d in sink.documents] == [(2, 2)]
