"""Purges the history of ended tasks once their retention has passed.

Runs at start-up and then every `MEMORY_TASK_PURGE_SECONDS`, in its own thread like the other
workers. The purge is a pair of DELETEs by end time, so several replicas running it at once
only repeat each other's work.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from crmmem_runtime.telemetry import failure_summary
from memory_service.domain.model import utcnow
from memory_service.workers.outage import DatabaseOutage

log = logging.getLogger(__name__)


class TaskHistoryPurge:
    def __init__(
        self,
        purge: Callable[[datetime], int],
        retention: timedelta,
        every_seconds: float,
    ) -> None:
        """`purge(ended_before)` removes the tasks that ended before then, and their history."""
        self._purge = purge
        self._retention = retention
        self._every = every_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="task-purge", daemon=True)
        self._outage = DatabaseOutage("task purge", log)

    def run_once(self) -> int:
        purged = self._purge(utcnow() - self._retention)
        if purged:
            log.info("purged %d ended tasks past their retention", purged)
        return purged

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            try:
                self.run_once()
                self._outage.answered()
            except Exception as error:
                if not self._outage.failed(error):
                    log.warning("task history purge failed: %s", failure_summary(error))
            if self._stop.wait(self._every):
                return
