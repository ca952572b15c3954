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
