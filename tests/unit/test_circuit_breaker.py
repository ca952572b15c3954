"""The breaker that makes degraded recall cheap once the sidecar is known to be down."""

from __future__ import annotations

from memory_service.transport.retrieval_client import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_consecutive_failures_and_lets_one_trial_through_after_reset() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=3, reset_seconds=5, clock=clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.failure()
    assert not breaker.is_open
    assert breaker.allow()
    breaker.failure()
    assert breaker.is_open
    assert not breaker.allow()
    clock.now = 5.1
    assert breaker.allow()  # the one trial
    assert not breaker.allow()  # no second trial while the first runs
    breaker.failure()
    assert not breaker.allow()  # re-opened from now
    clock.now = 10.2
    assert breaker.allow()
    breaker.success()
    assert not breaker.is_open
    assert breaker.allow()


def test_a_success_resets_the_failure_count() -> None:
    breaker = CircuitBreaker(failure_threshold=2, reset_seconds=5, clock=Clock())
    breaker.failure()
    breaker.success()
    breaker.failure()
    assert not breaker.is_open
