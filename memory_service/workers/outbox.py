"""Drains the transactional outbox into the search index, with retries and backoff.

Each item only says "memory X changed"; the worker reads the memory's current state from SQL
and sends that, so repeated, reordered or late items converge on the records (I10). A tenant
item (rebuild or resync) turns into one refill item per live memory.

Two kinds of failure back off differently. When the index is unreachable (the sidecar is down,
restarting or hung) nothing is wrong with the items: their leases are released untouched and the
whole drain waits, briefly, until the sidecar reports SERVING again (`wake()`), so catch-up after
a restart takes embedding time, not each item's own grown backoff. When the index refuses
particular items, those items back off on their own.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation

from memory_service.domain.indexing import IndexDocument, IndexUnavailable, index_document
from memory_service.domain.model import utcnow
from memory_service.domain.ports import (
    TENANT_KINDS,
    OutboxItem,
    OutboxKind,
    OutboxStore,
    UnitOfWorkFactory,
)
from memory_service.workers.outage import DatabaseOutage

log = logging.getLogger(__name__)
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
# replica may have claimed them.
LEASE_MARGIN = 2.0
MIN_BATCH = 8
BACKOFF_FIRST = 0.25
BACKOFF_MAX = 5.0


class IndexSink(Protocol):
    """Index writes; `deadline` is a `time.monotonic()` instant. Raises `IndexUnavailable`
    when the index as a whole cannot be reached."""

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None: ...
    def delete(
        self, tenant_id: str, memory_ids: Sequence[str], deadline: float | None = None
    ) -> None: ...
    def delete_tenant(self, tenant_id: str, deadline: float | None = None) -> None: ...


class OutboxWorker:
    def __init__(
        self,
        store: OutboxStore,
        units: UnitOfWorkFactory,
        sink: IndexSink,
        poll_seconds: float = 0.1,
        batch_size: int = BATCH_SIZE,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self._store = store
        self._units = units
        self._sink = sink
        self._poll = poll_seconds
        self._batch = batch_size
        self._lease = lease_seconds
        self._backoff = 0.0
        self._claim = batch_size  # halves while the index is unreachable or too slow
        self._owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._wake = threading.Event()
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
        """Drain now: the index is back, or there is new work; ends a backoff early."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the batch in hand, then hand back whatever this worker still leases, so
        another replica need not wait for the lease to run out."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)
        try:
            self._store.release(self._owner, None, "the worker stopped")
        except Exception:
            log.exception("could not release the outbox leases of a stopping worker")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                drained = self.drain_once()
                self._outage.answered()
            except Exception as error:
                if not self._outage.failed(error):
                    log.exception("outbox drain failed")
                drained = 0
            if self._backoff:
                self._wake.wait(self._backoff)
                self._wake.clear()
            elif drained < self._claim:
                self._wake.wait(self._poll)
                self._wake.clear()

    def drain_once(self) -> int:
        started = time.monotonic()
        claimed = self._store.claim(self._owner, self._claim, utcnow(), self._lease)
        if not claimed:
            return 0
        deadline = started + self._lease - LEASE_MARGIN
        items = [item for item in claimed if item.kind not in TENANT_KINDS]
        for item in claimed:
            if item.kind in TENANT_KINDS:
                self._refill_tenant(item, deadline)
        if not items:
            return len(claimed)
        with tracer.start_as_current_span("outbox.drain") as span:
            span.set_attribute("crmmem.outbox.items", len(items))
            by_tenant: dict[str, list[OutboxItem]] = defaultdict(list)
            for item in items:
                by_tenant[item.tenant_id].append(item)
            try:
                documents: list[IndexDocument] = []
                for tenant_id, tenant_items in by_tenant.items():
                    documents.extend(self._sync_tenant(tenant_id, tenant_items, deadline))
                if documents:
                    # One upsert across tenants: the embedder batches, and each document
                    # carries its own tenant, so nothing mixes.
                    self._sink.upsert(documents, deadline)
            except IndexUnavailable as error:
                span.record_exception(error)
                self._backoff = min(BACKOFF_MAX, max(BACKOFF_FIRST, self._backoff * 2))
                # A batch that timed out would time out again: try smaller ones.
                self._claim = max(MIN_BATCH, self._claim // 2)
                log.warning(
                    "index unreachable, %d items wait for it (next try in %.2fs): %s",
                    len(items),
                    self._backoff,
                    error,
                )
                self._store.release(self._owner, [item.id for item in items], str(error))
                return 0
            except Exception as error:
                span.record_exception(error)
                log.warning("index write failed, will retry %d items: %s", len(items), error)
                self._store.retry(self._owner, items, str(error), utcnow())
                return 0
            self._backoff = 0.0
            self._claim = min(self._batch, self._claim * 2)
            self._store.complete(self._owner, [item.id for item in items])
            done = utcnow()
            lags = [(done - max(i.create_time, i.due_time)).total_seconds() for i in items]
            for lag in lags:
                lag_histogram.record(lag)
            span.set_attribute("crmmem.outbox.lag_seconds", max(lags))
            return len(claimed)

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
                    ids = uow.memories.live_ids()
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

    def _sync_tenant(
        self, tenant_id: str, items: list[OutboxItem], deadline: float
    ) -> list[IndexDocument]:
        """Removes what must not be searchable now; returns the documents to upsert."""
        ids = sorted({item.memory_id for item in items})
        now = utcnow()
        with self._units(tenant_id, write=False) as uow:
            memories = uow.memories.get_many(ids)
        documents, removals = [], []
        for memory_id in ids:
            memory = memories.get(memory_id)
            document = index_document(memory, now) if memory is not None else None
            if document is None:
                removals.append(memory_id)
            else:
                documents.append(document)
        if removals:
            self._sink.delete(tenant_id, removals, deadline)
        return documents
