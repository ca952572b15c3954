"""SQLite's WAL copied back into the database file by a thread of its own.

Left to SQLite, the commit that takes the WAL past 1000 pages copies it back itself
(autocheckpoint): that one write, whichever request it was, waited 20-30 ms longer. Checkpointing
every `interval` seconds off the request path keeps the WAL short, so commits rarely reach that
mark. Autocheckpoint stays on as the backstop (a burst of writes faster than the thread, or a
process that runs no checkpointer), and durability is unchanged: a checkpoint only copies pages
already committed to the WAL. PASSIVE never waits for readers or writers."""

from __future__ import annotations

import logging
import sqlite3
import threading

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

log = logging.getLogger("memory_service.storage.checkpoint")
CHECKPOINT_INTERVAL_SECONDS = 0.5


class WalCheckpointer:
    def __init__(self, engine: Engine, interval: float = CHECKPOINT_INTERVAL_SECONDS) -> None:
        self._engine = engine
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)
        self.checkpoints = 0  # pages copied back, in total (tests read it)

    @staticmethod
    def wanted(engine: Engine) -> bool:
        """Only a SQLite file has a WAL to copy back."""
        return engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def checkpoint(self) -> int:
        """One PASSIVE checkpoint; the pages it copied back. Sent on the driver's connection,
        outside any transaction: through the engine it would start one, and a checkpoint
        cannot run inside a transaction (nor should it take the writer's lock)."""
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                row = cursor.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                cursor.close()
        finally:
            connection.close()
        copied = int(row[2]) if row and row[2] is not None and row[2] > 0 else 0
        self.checkpoints += copied
        return copied

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self.checkpoint()
            except (DBAPIError, sqlite3.Error) as error:  # an outage is the database watch's to
                # report; the next round tries again
                log.debug("WAL checkpoint failed: %s", error)
