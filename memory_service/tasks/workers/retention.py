"""Purges the history of ended tasks once their retention has passed.

Runs at start-up and then every `MEMORY_TASK_PURGE_SECONDS`, in its own thread like the other
workers. The purge is a pair of DELETEs by end time, so several replicas running it at once
only repeat each other's work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from crmmem_runtime.telemetry import failure_summary
from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.workers.outage import DatabaseOutage
from memory_service.kernel.workers.thread import WorkerThread

log = logging.getLogger("memory_service.workers.retention")


class TaskHistoryPurge(WorkerThread):
    def __init__(
        self,
        purge: Callable[[datetime], int],
        retention: timedelta,
        every_seconds: float,
    ) -> None:
        """`purge(ended_before)` removes the tasks that ended before then, and their history."""
        super().__init__("task-purge")
        self._purge = purge
        self._retention = retention
        self._every = every_seconds
        self._outage = DatabaseOutage("task purge", log)

    def run_once(self) -> int:
        purged = self._purge(utcnow() - self._retention)
        if purged:
            log.info("purged %d ended tasks past their retention", purged)
        return purged

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
