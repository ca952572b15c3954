"""Waiting for something the services do in the background (indexing, flushing, purging):
one polling loop for every test, so each says only what it waits for and why it failed."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(
    check: Callable[[], object],
    timeout: float = 30,
    message: str = "condition never held",
    interval: float = 0.1,
) -> float:
    """Calls `check` until it returns something truthy and returns the monotonic time it first
    did; fails with `message` once `timeout` seconds pass without it."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return time.monotonic()
        if time.monotonic() >= deadline:
            raise AssertionError(message)
        time.sleep(interval)
