"""The server's handler threads: the last to go idle takes the next call, up to max_workers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from memory_service.kernel.transport.worker_pool import LastIdleFirstPool


def test_it_is_a_thread_pool_executor() -> None:
    """gRPC takes a ThreadPoolExecutor (and checks for one where a method brings its own)."""
    pool = LastIdleFirstPool(2)
    try:
        assert isinstance(pool, ThreadPoolExecutor)
    finally:
        pool.shutdown()


def test_sequential_calls_run_on_the_thread_that_went_idle_last() -> None:
    """After a burst started several threads, one call at a time keeps to one of them, the
    last to go idle, instead of rotating through cold ones."""
    pool = LastIdleFirstPool(8, "t")
    release = threading.Event()
    try:
        burst = [pool.submit(release.wait, 10) for _ in range(8)]  # eight threads started
        release.set()
        for future in burst:
            assert future.result(10)
        names = {pool.submit(lambda: threading.current_thread().name).result(10)}
        last = names.pop()
        for _ in range(50):
            assert pool.submit(lambda: threading.current_thread().name).result(10) == last
    finally:
        pool.shutdown()


def test_work_beyond_max_workers_waits_and_runs_in_order() -> None:
    pool = LastIdleFirstPool(2)
    release = threading.Event()
    ran: list[int] = []
    try:
        busy = [pool.submit(release.wait, 10) for _ in range(2)]
        queued = [pool.submit(ran.append, n) for n in range(5)]
        assert not any(f.done() for f in queued)  # both threads are held
        release.set()
        for future in busy + queued:
            future.result(10)
        assert ran == [0, 1, 2, 3, 4]
        assert len({t.name for t in threading.enumerate() if t.name.startswith("pool_")}) <= 2
    finally:
        pool.shutdown()


def test_a_failure_reaches_the_future_and_the_thread_goes_on() -> None:
    pool = LastIdleFirstPool(1)
    try:
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(10)
        assert pool.submit(lambda: 2).result(10) == 2
    finally:
        pool.shutdown()


def test_shutdown_ends_the_threads_and_refuses_new_work() -> None:
    pool = LastIdleFirstPool(3, "ending")
    release = threading.Event()
    held = pool.submit(release.wait, 10)
    idle = [pool.submit(lambda: None) for _ in range(2)]
    for future in idle:
        future.result(10)
    release.set()
    pool.shutdown(wait=True)
    assert held.result(0)
    assert not [t for t in threading.enumerate() if t.name.startswith("ending_")]
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_a_thread_that_could_not_start_leaves_no_slot_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Out of threads (the process's limit, memory) a submit fails: that call is refused, but
    the pool must not count the thread that never ran, or after max_workers such failures every
    later call waits for ever behind threads that do not exist."""
    pool = LastIdleFirstPool(1)
    start = threading.Thread.start
    failures = iter([RuntimeError("can't start new thread")])

    def flaky_start(thread: threading.Thread) -> None:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        start(thread)

    try:
        monkeypatch.setattr(threading.Thread, "start", flaky_start)
        with pytest.raises(RuntimeError, match="start new thread"):
            pool.submit(lambda: "refused")
        assert pool.submit(lambda: "ran").result(10) == "ran"
    finally:
        monkeypatch.undo()
        pool.shutdown()
