"""Drains the transactional outbox into the search index, with retries and backoff.

Each item only says "memory X changed"; the worker reads the memory's current state from SQL
and sends that, so repeated, reordered or late items converge on the records (I10).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation

from memory_service.domain.indexing import IndexDocument, index_document
from memory_service.domain.model import utcnow
from memory_service.domain.ports import OutboxItem, OutboxStore, UnitOfWorkFactory

log = logging.getLogger(__name__)
tracer = trace.get_tracer("memory_service.outbox")
meter = metrics.get_meter("memory_service.outbox")
lag_histogram = meter.create_histogram(
    "crmmem.outbox.lag", unit="s", description="from a change's commit to its index write"
)


class IndexSink(Protocol):
    def upsert(self, documents: Sequence[IndexDocument]) -> None: ...
    def delete(self, tenant_id: str, memory_ids: Sequence[str]) -> None: ...


class OutboxWorker:
    def __init__(
        self,
        store: OutboxStore,
        units: UnitOfWorkFactory,
        sink: IndexSink,
        poll_seconds: float = 0.1,
        batch_size: int = 512,
        lease_seconds: float = 60.0,
    ) -> None:
        self._store = store
        self._units = units
        self._sink = sink
        self._poll = poll_seconds
        self._batch = batch_size
        self._lease = lease_seconds
        self._owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox-worker", daemon=True)

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
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                drained = self.drain_once()
            except Exception:
                log.exception("outbox drain failed")
                drained = 0
            if drained < self._batch:
                self._wake.wait(self._poll)
                self._wake.clear()

    def drain_once(self) -> int:
        now = utcnow()
        items = self._store.claim(self._owner, self._batch, now, self._lease)
        if not items:
            return 0
        with tracer.start_as_current_span("outbox.drain") as span:
            span.set_attribute("crmmem.outbox.items", len(items))
            by_tenant: dict[str, list[OutboxItem]] = defaultdict(list)
            for item in items:
                by_tenant[item.tenant_id].append(item)
            try:
                documents: list[IndexDocument] = []
                for tenant_id, tenant_items in by_tenant.items():
                    documents.extend(self._sync_tenant(tenant_id, tenant_items))
                if documents:
                    # One upsert across tenants: the embedder batches, and each document
                    # carries its own tenant, so nothing mixes.
                    self._sink.upsert(documents)
            except Exception as error:
                span.record_exception(error)
                log.warning("index write failed, will retry %d items: %s", len(items), error)
                self._store.retry(self._owner, items, str(error), utcnow())
                return 0
            self._store.complete(self._owner, [item.id for item in items])
            done = utcnow()
            lags = [(done - max(i.create_time, i.due_time)).total_seconds() for i in items]
            for lag in lags:
                lag_histogram.record(lag)
            span.set_attribute("crmmem.outbox.lag_seconds", max(lags))
            return len(items)

    def _sync_tenant(self, tenant_id: str, items: list[OutboxItem]) -> list[IndexDocument]:
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
            self._sink.delete(tenant_id, removals)
        return documents
