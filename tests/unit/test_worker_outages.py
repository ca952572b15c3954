"""Each background worker says once that the database cannot be reached and once that it answers
again, however many polls the outage lasts: no traceback per poll. Other failures are still
logged in full."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest

from memory_service.imports.workers.imports import ImportRunner
from memory_service.kernel.domain.errors import DatabaseUnavailable, OutcomeUnknown
from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import OutboxItem
from memory_service.kernel.workers.outage import DatabaseOutage, database_unreachable
from memory_service.memories.workers.outbox import OutboxWorker
from memory_service.memories.workers.usage import UsageRecorder
from memory_service.tasks.workers.retention import TaskHistoryPurge

POLLS_DOWN = 25  # failed polls per outage: far more than the lines an outage may log
POLL = 0.002


class Outages:
    """A database that fails `POLLS_DOWN` calls, answers, then fails again as many: two
    outages. `error` makes each failure."""

    def __init__(self, error: Callable[[], Exception]) -> None:
        self.error = error
        self.calls = 0
        self.done = threading.Event()
        self._script = [False] * POLLS_DOWN + [True] * 3 + [False] * POLLS_DOWN + [True] * 3

    def call(self) -> None:
        """One database round trip of the worker."""
        self.calls += 1
        if self.calls > len(self._script):
            self.done.set()
            return
        if not self._script[self.calls - 1]:
            raise self.error()


def lost_connection() -> Exception:
    """What storage raises on a connection-level failure."""
    error = DatabaseUnavailable()
    error.__cause__ = ConnectionRefusedError("connection refused")
    return error


class ImportQueue:
    def __init__(self, db: Outages) -> None:
        self.db = db

    def lease(self, owner: str, now: datetime, lease_seconds: float) -> tuple[str, str] | None:
        self.db.call()
        return None


class OutboxStore:
    def __init__(self, db: Outages) -> None:
        self.db = db

    def lease(self, owner: str, limit: int, now: datetime, lease: float) -> list[OutboxItem]:
        self.db.call()
        return []

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        pass

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        return 0, None


class UsageStore:
    def __init__(self, db: Outages) -> None:
        self.db = db

    def record(self, uses: Mapping[tuple[str, str], datetime]) -> None:
        self.db.call()


@contextmanager
def no_units(tenant_id: str, write: bool = False) -> Iterator[Any]:
    raise AssertionError("the fake queues hand out no work")
    yield


class Worker:
    def __init__(self, db: Outages, start: Callable[[], None], stop: Callable[[], None]) -> None:
        self.db, self.start, self.stop = db, start, stop


def import_worker(db: Outages) -> Worker:
    imports: Any = None  # the fake queue hands out no batch to process
    runner = ImportRunner(ImportQueue(db), no_units, imports, poll_seconds=POLL)
    return Worker(db, runner.start, runner.stop)


def outbox_worker(db: Outages) -> Worker:
    store: Any = OutboxStore(db)  # leases only: it hands out no item to index
    worker = OutboxWorker(store, no_units, None, poll_seconds=POLL)  # type: ignore[arg-type]
    return Worker(db, worker.start, worker.stop)


def usage_flush(db: Outages) -> Worker:
    recorder = UsageRecorder(UsageStore(db), flush_seconds=POLL)
    busy = threading.Event()

    def keep_noting() -> None:  # recalls go on during the outage: every flush has work
        while not busy.wait(POLL / 2):
            recorder.note("acme", ["m1"], utcnow())

    noter = threading.Thread(target=keep_noting, daemon=True)

    def start() -> None:
        noter.start()
        recorder.start()

    def stop() -> None:
        busy.set()
        noter.join()
        recorder.stop()

    return Worker(db, start, stop)


def task_purge(db: Outages) -> Worker:
    def purge(ended_before: datetime) -> int:
        db.call()
        return 0

    purger = TaskHistoryPurge(purge, timedelta(days=1), every_seconds=POLL)
    return Worker(db, purger.start, purger.stop)


WORKERS = {
    "import worker": import_worker,
    "outbox drain": outbox_worker,
    "usage flush": usage_flush,
    "task purge": task_purge,
}


def run(worker: Worker) -> None:
    worker.start()
    try:
        assert worker.db.done.wait(20), f"the worker polled only {worker.db.calls} times"
    finally:
        worker.stop()


@pytest.mark.parametrize("name", WORKERS)
def test_an_outage_is_two_lines_not_a_traceback_per_poll(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memory_service.workers")
    run(WORKERS[name](Outages(lost_connection)))

    lines = [r for r in caplog.records if r.name.startswith("memory_service.workers")]
    said = [r.getMessage() for r in lines]
    down = [m for m in said if m.startswith(f"{name}: the database cannot be reached")]
    back = [m for m in said if m == f"{name}: the database answers again"]
    assert len(down) == 2, said
    assert len(back) == 2, said
    assert len(said) == 4, said
    assert not [r for r in lines if r.exc_info], "a traceback was logged during an outage"
    assert "DatabaseUnavailable <- ConnectionRefusedError" in down[0]


@pytest.mark.parametrize("name", ["import worker", "outbox drain"])
def test_other_failures_are_still_logged_every_time(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memory_service.workers")
    run(WORKERS[name](Outages(lambda: RuntimeError("a bug"))))

    failed = [r for r in caplog.records if r.exc_info]
    assert len(failed) == 2 * POLLS_DOWN
    assert not [r for r in caplog.records if "database" in r.getMessage()]


def test_an_unknown_outcome_counts_as_the_database_away_but_other_errors_do_not() -> None:
    assert database_unreachable(OutcomeUnknown())
    assert database_unreachable(lost_connection())
    assert not database_unreachable(ConnectionRefusedError())
    bug = RuntimeError("raised while handling an outage")
    bug.__context__ = DatabaseUnavailable()
    assert not database_unreachable(bug)


def test_the_outage_state_is_per_worker(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("memory_service.workers.test")
    first, second = DatabaseOutage("first", log), DatabaseOutage("second", log)
    with caplog.at_level(logging.INFO, logger="memory_service.workers.test"):
        assert first.failed(DatabaseUnavailable())
        assert second.failed(DatabaseUnavailable())
        assert first.failed(DatabaseUnavailable())
        first.answered()
        first.answered()
    said = [r.getMessage() for r in caplog.records]
    assert [m.split(":")[0] for m in said] == ["first", "second", "first"]
    assert second.down
    assert not first.down
