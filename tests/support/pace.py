"""How slow the machine is right now, for tests whose bounds are wall-clock deadlines.

A bound such as "answered within 200 ms" holds on a quiet machine and fails on one whose cores
are shared with other work, where any call, however little it does, can wait that long for a
core. A test sizes such a bound by what a call that does nothing in question costs now, under
the same concurrency, and keeps its own figure as the floor (so a quiet or faster machine runs
exactly the stated test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def slowest_round_trip(
    call: Callable[[], object], callers: int = 1, seconds: float = 1.0, pause: float = 0.02
) -> float:
    """The slowest of `call`'s round trips made by `callers` threads for `seconds`, each
    pausing `pause` between calls (as the test's own callers do)."""
    took: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def caller() -> None:
        while time.monotonic() < stop:
            began = time.perf_counter()
            call()
            with lock:
                took.append(time.perf_counter() - began)
            time.sleep(pause)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return max(took)


def deadline_for(stated: float, slowest: float, factor: float = 3.0, cap: float = 1.0) -> float:
    """`stated`, or `factor` times the slowest round trip seen when the machine is slower than
    that leaves room for; never above `cap` (the test's point must stay a short deadline)."""
    return min(cap, max(stated, factor * slowest))


class StallWatch:
    """A control caller making `call` (one that does nothing in question) over and over while
    the block runs: a call under test that was slow while a control call was as slow was caught
    in a stall of the whole machine, which says nothing about the service."""

    def __init__(self, call: Callable[[], object], pause: float = 0.02) -> None:
        self._call = call
        self._pause = pause
        self._done: list[tuple[float, float]] = []
        self._current: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.perf_counter()
            with self._lock:
                self._current = began
            self._call()
            with self._lock:
                self._done.append((began, time.perf_counter()))
                self._current = None
            self._stop.wait(self._pause)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(60)

    def stalled(self, began: float, ended: float, longer_than: float) -> bool:
        """Whether a control call overlapping `began`..`ended` (perf_counter instants) took
        `longer_than` seconds or more (one still running counts as lasting until now)."""
        with self._lock:
            calls = list(self._done)
            if self._current is not None:
                calls.append((self._current, time.perf_counter()))
        return any(b < ended and e > began and e - b >= longer_than for b, e in calls)

    @property
    def slowest(self) -> float:
        with self._lock:
            return max((e - b for b, e in self._done), default=0.0)
