"""Parses large import archives off the request path, one leased batch at a time.

Batches are leased through the database like outbox items, so several replicas share the
queue and a replica that starts up does not resume everything: it takes the oldest batch no
live replica holds. The attempt is counted before the parse starts, so an archive whose parse
kills the process is given up after a few attempts instead of killing every restart.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from opentelemetry import trace

from crmmem_runtime.telemetry import failure_summary
from memory_service.imports.domain.service import ImportUseCases
from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import ImportQueue, UnitOfWorkFactory
from memory_service.kernel.workers.outage import DatabaseOutage

log = logging.getLogger("memory_service.workers.imports")
tracer = trace.get_tracer("memory_service.imports")
UNEXPECTED = (
    "archive: could not be processed (an unexpected error, logged by the service); submit it again"
)


def _libc_trim() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


_MALLOC_TRIM = _libc_trim()


def release_freed_memory() -> None:
    """Hands memory freed after a large archive back to the system (glibc keeps freed heap
    for reuse otherwise), so resident memory returns to its baseline between archives."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class ImportRunner:
    def __init__(
        self,
        queue: ImportQueue,
        units: UnitOfWorkFactory,
        imports: ImportUseCases,
        poll_seconds: float = 2.0,
        lease_seconds: float = 600.0,
        index_work_committed: Callable[[], None] = lambda: None,
    ) -> None:
        """`index_work_committed` runs after a batch's commit queued index work due now (a
        restore writes memories): it wakes the outbox drain, whose idle poll is long."""
        self._queue = queue
        self._units = units
        self._imports = imports
        self._poll = poll_seconds
        self._lease = lease_seconds
        self._index_work_committed = index_work_committed
        self._owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="import-worker", daemon=True)
        self._outage = DatabaseOutage("import worker", log)

    def start(self) -> None:
        self._thread.start()

    def submit(self, tenant_id: str, batch_id: str) -> None:
        """A batch was queued here; any replica may take it, this one just looks now."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once()
                self._outage.answered()
            except Exception as error:
                if not self._outage.failed(error):
                    log.exception("import queue poll failed")
                worked = False
            if not worked:
                self._wake.wait(self._poll)
                self._wake.clear()

    def run_once(self) -> bool:
        """Leases and processes one batch; False when none was waiting."""
        leased = self._queue.lease(self._owner, utcnow(), self._lease)
        if leased is None:
            return False
        tenant_id, batch_id = leased
        with tracer.start_as_current_span("import.parse") as span:
            span.set_attribute("crmmem.tenant_id", tenant_id)
            try:
                with self._units(tenant_id, write=True) as uow:
                    self._imports.process(uow, batch_id, utcnow())
                    uow.commit()
                    if uow.outbox.queued_now:
                        self._index_work_committed()
            except Exception as error:
                span.set_attribute("crmmem.error_type", type(error).__name__)
                log.error("import batch %s failed to process: %s", batch_id, failure_summary(error))
                with self._units(tenant_id, write=True) as uow:
                    self._imports.fail(uow, batch_id, UNEXPECTED, utcnow())
                    uow.commit()
            finally:
                release_freed_memory()
        return True
