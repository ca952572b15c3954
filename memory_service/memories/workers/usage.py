"""Records when memories were used, off the read path.

A recall or a context build only notes the ids it returned in a dictionary (a lock and a few
assignments); this worker writes the notes in one batched upsert every
`MEMORY_USAGE_FLUSH_SECONDS`, and once more when the service stops. A process killed with
SIGKILL loses the notes of its last flush interval: a usage time is a hint for review ("unused
for N days"), never a record of truth, so seconds of loss are the price of a read path that
never writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import datetime

from crmmem_runtime.telemetry import failure_summary
from memory_service.kernel.domain.ports import UsageStore
from memory_service.kernel.workers.outage import DatabaseOutage
from memory_service.kernel.workers.thread import WorkerThread

log = logging.getLogger("memory_service.workers.usage")
# Notes waiting while the database is away are bounded: past this, new ones are dropped (and
# counted), so an outage cannot grow the process without limit.
MAX_PENDING = 200_000


class UsageRecorder(WorkerThread):
    def __init__(self, store: UsageStore, flush_seconds: float = 2.0) -> None:
        super().__init__("usage-flush")
        self._store = store
        self._flush_seconds = flush_seconds
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], datetime] = {}
        self.dropped = 0
        self._outage = DatabaseOutage("usage flush", log)

    def note(self, tenant_id: str, memory_ids: Iterable[str], when: datetime) -> None:
        """Remembers that these memories were used at `when`; never touches the database."""
        with self._lock:
            pending = self._pending
            for memory_id in memory_ids:
                key = (tenant_id, memory_id)
                known = pending.get(key)
                if known is None:
                    if len(pending) >= MAX_PENDING:
                        self.dropped += 1
                        continue
                    pending[key] = when
                elif when > known:
                    pending[key] = when

    def flush(self) -> int:
        """Writes what was noted since the last flush; on failure the notes are kept for the
        next one. Returns how many were written."""
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return 0
        try:
            self._store.record(batch)
        except Exception:
            with self._lock:  # put them back, keeping any later use noted meanwhile
                for key, when in batch.items():
                    known = self._pending.get(key)
                    if known is None or when > known:
                        self._pending[key] = when
            raise
        return len(batch)

    def stop(self) -> None:
        """Stops the worker and writes what is still pending."""
        super().stop()
        try:
            self.flush()
        except Exception as error:
            log.warning("usage times not written at shutdown: %s", failure_summary(error))

    def _run(self) -> None:
        while not self._stop.wait(self._flush_seconds):
            try:
                if self.flush():
                    self._outage.answered()
            except Exception as error:
                if not self._outage.failed(error):
                    log.warning("usage flush failed, retrying: %s", failure_summary(error))
