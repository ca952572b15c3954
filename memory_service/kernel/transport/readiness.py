"""Health follows the database: NOT_SERVING while it does not answer, SERVING once it does, so
balancers and readiness probes route around an outage instead of sending calls that can only
fail. After graceful shutdown began, the health servicer ignores these updates."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from grpc_health.v1 import health, health_pb2

log = logging.getLogger("memory_service.transport.readiness")
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class DatabaseWatch:
    def __init__(
        self,
        reachable: Callable[[], bool],
        servicer: health.HealthServicer,
        services: Sequence[str],
        interval: float,
    ) -> None:
        self._reachable = reachable
        self._servicer = servicer
        self._services = tuple(services)
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="database-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        serving = True
        while not self._stopped.wait(self._interval):
            answered = self._reachable()
            if answered == serving:
                continue
            serving = answered
            if serving:
                log.warning("the database answers again: SERVING")
            else:
                log.warning("the database does not answer: NOT_SERVING until it does")
            for name in self._services:
                self._servicer.set(name, SERVING if serving else NOT_SERVING)
