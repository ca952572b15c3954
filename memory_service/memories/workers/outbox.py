"""Drains the transactional outbox into the search index, with retries and backoff.

Each item only says "memory X changed"; the worker reads the memory's current state from SQL
and sends that, so repeated, reordered or late items converge on the records (I10). A tenant
item (rebuild or resync) turns into one refill item per live memory.

Two kinds of failure back off differently. When the index is unreachable (the sidecar is down,
restarting or hung) nothing is wrong with the items: their leases are released untouched and the
whole drain waits, briefly, until the sidecar reports SERVING again (`wake()`), so catch-up after
a restart takes embedding time, not each item's own grown backoff. When the index refuses
particular items, those items back off on their own.

An idle drain costs nothing between polls: a commit in this process that queues work due now
wakes it at once (`work_queued()`), so the idle poll (`poll_seconds`, long) only bounds how late
work queued otherwise is noticed: by another process (a replica, a command), left leased by a
crashed drain, or coming due later (a retry, a correction effective at a future instant). A
lease is a write transaction, so polling often while idle would spend a good share of the
process's work, and of the writer lock, on finding nothing.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation

from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import (
    TENANT_KINDS,
    OutboxItem,
    OutboxKind,
    OutboxStore,
    UnitOfWorkFactory,
)
from memory_service.kernel.workers.outage import DatabaseOutage
from memory_service.memories.domain.indexing import (
    IndexDocument,
    IndexUnavailable,
    boundaries_to_queue,
    index_document,
)

log = logging.getLogger("memory_service.workers.outbox")
tracer = trace.get_tracer("memory_service.outbox")
meter = metrics.get_meter("memory_service.outbox")
lag_histogram = meter.create_histogram(
    "crmmem.outbox.lag", unit="s", description="from a change's commit to its index write"
)


# A batch is one upsert call: embedding 128 short texts takes well under a second on two cores,
# several on a busy machine; the lease covers that with room, and is all that a drain killed
# mid-batch holds back from other replicas.
BATCH_SIZE = 128
LEASE_SECONDS = 15.0
# Index calls stop this long before the lease ends, so items are never written after another
# replica may have leased them.
LEASE_MARGIN = 2.0
MIN_BATCH = 8
# Batches in flight at once: the next is leased, read and queued at the embedder while the
# previous one embeds.
IN_FLIGHT = 2
BACKOFF_FIRST = 0.25
BACKOFF_MAX = 5.0
# An idle drain woken by a commit waits this long before it leases, so the commits just behind
# it go in the same batch: each batch costs two write transactions (lease, complete), a read
# and an index call whatever its size, all in the process that serves the writes, so one
# batch per commit would about double the CPU each correction costs.
GATHER_SECONDS = 0.05
# How long the drain waits for a batch in flight before it looks again (a batch finishing wakes
# it sooner): short, so a second batch goes out while the index works on the first.
IN_FLIGHT_POLL_SECONDS = 0.1
# The idle poll's default: commits in this process wake the drain, so this is only how late
# other work is noticed (see the module's docstring).
POLL_SECONDS = 1.0


class IndexSink(Protocol):
    """Index writes; `deadline` is a `time.monotonic()` instant. Raises `IndexUnavailable`
    when the index as a whole cannot be reached."""

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None: ...
    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        """`versions`: each memory's version as read (0 for a memory no longer stored); the
        index refuses a later upsert of a lower one (a write sent before this removal and
        applied after it)."""

    def delete_tenant(self, tenant_id: str, deadline: float | None = None) -> None: ...


@dataclass
class _Batch:
    """Leased items on their way to the index."""

    items: list[OutboxItem]
    leased: int  # with the tenant items
    deadline: float
    documents: list[IndexDocument] = field(default_factory=list)
    removals: dict[str, dict[str, int]] = field(default_factory=dict)  # id -> version read
    lags: list[float] = field(default_factory=list)  # seconds from each change to its write
    # (tenant, memory) -> its next boundaries, each queued on completion unless already queued
    ahead: dict[tuple[str, str], list[datetime]] = field(default_factory=dict)

    @property
    def memory_ids(self) -> set[str]:
        return {item.memory_id for item in self.items}


class OutboxWorker:
    def __init__(
        self,
        store: OutboxStore,
        units: UnitOfWorkFactory,
        sink: IndexSink,
        poll_seconds: float = POLL_SECONDS,
        batch_size: int = BATCH_SIZE,
        lease_seconds: float = LEASE_SECONDS,
        gather_seconds: float = GATHER_SECONDS,
    ) -> None:
        self._store = store
        self._units = units
        self._sink = sink
        self._poll = poll_seconds
        self._batch = batch_size
        self._lease = lease_seconds
        self._gather = gather_seconds
        self._backoff = 0.0
        self._lease_size = batch_size  # halves while the index is unreachable or too slow
        self._owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._wake = threading.Event()  # new work, the index back, or stop
        self._index_back = threading.Event()  # the index back, or stop: ends a backoff
        self._thread = threading.Thread(target=self._run, name="outbox-worker", daemon=True)
        self._outage = DatabaseOutage("outbox drain", log)

    def start(self) -> None:
        meter.create_observable_gauge(
            "crmmem.outbox.depth", [self._observe_depth], description="due outbox items"
        )
        meter.create_observable_gauge(
            "crmmem.outbox.oldest_age",
            [self._observe_age],
            unit="s",
            description="age of the oldest due outbox item",
        )
        self._thread.start()

    def _observe_depth(self, _options: CallbackOptions) -> list[Observation]:
        return [Observation(self._store.depth(utcnow())[0])]

    def _observe_age(self, _options: CallbackOptions) -> list[Observation]:
        now = utcnow()
        oldest = self._store.depth(now)[1]
        return [Observation((now - oldest).total_seconds() if oldest else 0.0)]

    def wake(self) -> None:
        """Drain now: the index is back (the sidecar reports SERVING, or it just answered an
        index check); ends a backoff early."""
        self._index_back.set()
        self._wake.set()

    def work_queued(self) -> None:
        """A commit queued index work: drain now, unless the index is being waited for. A
        backoff is not cut short by new work, or an unreachable index would be retried (and
        the failure logged) after every write."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the batch in hand, then hand back whatever this worker still leases, so
        another replica need not wait for the lease to run out."""
        self._stop.set()
        self._index_back.set()
        self._wake.set()
        self._thread.join(timeout=10)
        try:
            self._store.release(self._owner, None, "the worker stopped")
        except Exception:
            log.exception("could not release the outbox leases of a stopping worker")

    def _run(self) -> None:
        """Up to `IN_FLIGHT` batches at once: the next batch is leased and read while the
        index embeds the previous one, so the embedder does not idle between batches. After a
        partial batch (the drain has caught up) the next lease waits `gather_seconds`, as an
        idle drain woken by a commit does: commits one by one are drained a few at a time."""
        in_flight: deque[tuple[_Batch, Future[BaseException | None]]] = deque()
        waited = False  # the backoff has been waited out: the next lease is the retry
        gathering_until = 0.0  # after a partial batch the next lease waits for more work
        with ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="outbox-send") as sending:
            while not self._stop.is_set():
                drained: int | None = None
                try:
                    for entry in [entry for entry in in_flight if entry[1].done()]:
                        in_flight.remove(entry)
                        self._settle(entry[0], entry[1].result())
                    ready = time.monotonic() >= gathering_until
                    if len(in_flight) < IN_FLIGHT and (not self._backoff or waited) and ready:
                        waited = False
                        drained = self._start_next(in_flight, sending)
                        if 0 < drained < self._lease_size:
                            gathering_until = time.monotonic() + self._gather
                    self._outage.answered()
                except Exception as error:
                    if not self._outage.failed(error):
                        log.exception("outbox drain failed")
                    drained = 0
                if in_flight:
                    if drained is not None and drained >= self._lease_size:
                        continue  # a full batch: more may be waiting
                    futures = [future for _, future in in_flight]
                    timeout = min(self._poll, IN_FLIGHT_POLL_SECONDS)
                    wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
                elif self._backoff:
                    self._index_back.wait(self._backoff)
                    self._index_back.clear()
                    self._wake.clear()
                    waited = True
                elif drained is None or drained < self._lease_size:
                    pause = gathering_until - time.monotonic()
                    if pause > 0:
                        self._stop.wait(pause)
                        continue
                    if self._wake.wait(self._poll) and self._gather:
                        self._stop.wait(self._gather)  # the commits right behind join in
                    self._wake.clear()
            while in_flight:
                try:
                    self._settle_next(in_flight)
                except Exception:
                    log.exception("could not settle an outbox batch of a stopping worker")

    def _start_next(
        self,
        in_flight: deque[tuple[_Batch, Future[BaseException | None]]],
        sending: ThreadPoolExecutor,
    ) -> int:
        """Leases and reads a batch and sends it without waiting. A batch that touches a memory
        an earlier batch in flight is writing (or holds tenant work) first waits for every
        batch in flight: per memory, index writes stay in the order of the changes, so a
        removal is never overtaken by an older upsert."""

        def settle_all() -> None:
            while in_flight:
                self._settle_next(in_flight)

        batch = self._prepare(settle_all)
        if batch is None:
            return 0
        busy = {memory_id for earlier, _ in in_flight for memory_id in earlier.memory_ids}
        if busy & batch.memory_ids:
            settle_all()
        in_flight.append((batch, sending.submit(self._send, batch)))
        return batch.leased

    def _settle_next(self, in_flight: deque[tuple[_Batch, Future[BaseException | None]]]) -> None:
        batch, future = in_flight.popleft()
        self._settle(batch, future.result())

    def _prepare(self, before_tenant_work: Callable[[], None] = lambda: None) -> _Batch | None:
        """Leases due items and reads what each memory should look like in the index now; tenant
        items are turned into refills here, once `before_tenant_work` has run (it waits for
        the batches in flight)."""
        started = time.monotonic()
        leased = self._store.lease(self._owner, self._lease_size, utcnow(), self._lease)
        if not leased:
            return None
        deadline = started + self._lease - LEASE_MARGIN
        items = [item for item in leased if item.kind not in TENANT_KINDS]
        tenant_items = [item for item in leased if item.kind in TENANT_KINDS]
        if tenant_items:
            before_tenant_work()
        for item in tenant_items:
            self._refill_tenant(item, deadline)
        batch = _Batch(items, len(leased), deadline)
        if not items:
            return batch
        by_tenant: dict[str, list[OutboxItem]] = defaultdict(list)
        for item in items:
            by_tenant[item.tenant_id].append(item)
        try:
            for tenant_id, tenant_items_ in by_tenant.items():
                self._read_tenant(batch, tenant_id, tenant_items_)
        except Exception:
            self._store.retry(self._owner, items, "could not read the memories", utcnow())
            raise
        return batch

    def _send(self, batch: _Batch) -> BaseException | None:
        """The batch's index writes; returns the failure instead of raising it, for `_settle`."""
        if not batch.items:
            return None
        with tracer.start_as_current_span("outbox.drain") as span:
            span.set_attribute("crmmem.outbox.items", len(batch.items))
            try:
                for tenant_id, removals in batch.removals.items():
                    self._sink.delete(
                        tenant_id, list(removals), batch.deadline, versions=list(removals.values())
                    )
                if batch.documents:
                    # One upsert across tenants: the embedder batches, and each document
                    # carries its own tenant, so nothing mixes.
                    self._sink.upsert(batch.documents, batch.deadline)
            except Exception as error:
                span.record_exception(error)
                return error
            done = utcnow()
            batch.lags = [
                (done - max(i.create_time, i.due_time)).total_seconds() for i in batch.items
            ]
            span.set_attribute("crmmem.outbox.lag_seconds", max(batch.lags))
        return None

    def _settle(self, batch: _Batch, error: BaseException | None) -> int:
        """Completes, releases or retries the batch's items after its index writes."""
        items = batch.items
        if not items:
            return batch.leased
        if isinstance(error, IndexUnavailable):
            self._backoff = min(BACKOFF_MAX, max(BACKOFF_FIRST, self._backoff * 2))
            # A batch that timed out would time out again: try smaller ones.
            self._lease_size = max(MIN_BATCH, self._lease_size // 2)
            log.warning(
                "index unreachable, %d items wait for it (next try in %.2fs): %s",
                len(items),
                self._backoff,
                error,
            )
            self._store.release(self._owner, [item.id for item in items], str(error))
            return 0
        if error is not None:
            log.warning("index write failed, will retry %d items: %s", len(items), error)
            self._store.retry(self._owner, items, str(error), utcnow())
            return 0
        self._backoff = 0.0
        self._lease_size = min(self._batch, self._lease_size * 2)
        self._store.complete(self._owner, [item.id for item in items], batch.ahead)
        for lag in batch.lags:
            lag_histogram.record(lag)
        return batch.leased

    def _refill_tenant(self, item: OutboxItem, deadline: float) -> None:
        """A rebuild wipes the tenant's points first; both then queue every live memory, and
        the item is completed in the same transaction that queues them. A failure anywhere
        leaves the item to be retried whole: wiping twice is harmless, refilling is idempotent."""
        with tracer.start_as_current_span("outbox.refill") as span:
            span.set_attribute("crmmem.outbox.kind", item.kind.value)
            try:
                if item.kind is OutboxKind.REBUILD:
                    self._sink.delete_tenant(item.tenant_id, deadline)
                with self._units(item.tenant_id, write=False) as uow:
                    ids = list(uow.memories.live_versions())
                if self._store.expand(self._owner, item, ids, utcnow()):
                    log.info(
                        "%s of tenant %s queued %d memories", item.kind, item.tenant_id, len(ids)
                    )
            except IndexUnavailable as error:  # nothing wrong with the item: hand it back
                span.record_exception(error)
                self._store.release(self._owner, [item.id], str(error))
            except Exception as error:
                span.record_exception(error)
                log.warning(
                    "%s of tenant %s failed, will retry: %s", item.kind, item.tenant_id, error
                )
                self._store.retry(self._owner, [item], str(error), utcnow())

    def _read_tenant(self, batch: _Batch, tenant_id: str, items: list[OutboxItem]) -> None:
        """What must not be searchable now (removals) and the documents to upsert."""
        ids = sorted({item.memory_id for item in items})
        with self._units(tenant_id, write=False) as uow:
            memories = uow.memories.get_many(ids)
        # What applies is decided on a clock read after the records: a correction this read
        # sees took its start from a clock read before it committed. On a clock read before,
        # the new version would go out with the old revision's text.
        now = utcnow()
        removals = {}
        for memory_id in ids:
            memory = memories.get(memory_id)
            document = index_document(memory, now) if memory is not None else None
            if document is None:
                removals[memory_id] = memory.version if memory is not None else 0
            else:
                batch.documents.append(document)
            # The memory's next boundaries, queued where missing when the batch completes:
            # writes, restores and refills queue only their change (`boundaries_to_queue`).
            if memory is not None and (instants := boundaries_to_queue(memory, now)):
                batch.ahead[(tenant_id, memory_id)] = instants
        if removals:
            batch.removals[tenant_id] = removals
