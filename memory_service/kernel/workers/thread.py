"""The thread a periodic worker runs in: its own daemon thread, so a worker never holds the
process open, and one event that both ends its wait between rounds and asks it to stop."""

from __future__ import annotations

import threading


class WorkerThread:
    """`_run` loops until `_stop` is set, waiting on `_stop` between rounds."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Asks the worker to stop and waits a little for the round in hand (the thread is a
        daemon: one stuck on the database does not hold the process open)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
