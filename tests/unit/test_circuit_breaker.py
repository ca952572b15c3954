"""The breaker that makes degraded recall cheap once the sidecar is known to be down, without
letting a few late answers on a busy machine switch recall off."""

from __future__ import annotations

import time

import pytest

from memory_service.memories.adapters.retrieval_client import CircuitBreaker, Outcome, Permit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, **overrides: float) -> CircuitBreaker:
    settings: dict[str, float] = {
        "min_calls": 5,
        "failure_rate": 0.5,
        "window_seconds": 10,
        "reset_seconds": 2,
        "window_calls": 20,
        "misses_in_a_row": 2,
    }
    settings.update(overrides)
    return CircuitBreaker(
        min_calls=int(settings["min_calls"]),
        failure_rate=settings["failure_rate"],
        window_seconds=settings["window_seconds"],
        reset_seconds=settings["reset_seconds"],
        window_calls=int(settings["window_calls"]),
        misses_in_a_row=int(settings["misses_in_a_row"]),
        clock=clock,
    )


def call(b: CircuitBreaker, outcome: Outcome) -> None:
    """One call sent now, its outcome recorded now."""
    permit = b.allow()
    assert permit is not None
    assert not permit.trial
    b.record(permit, outcome)


def test_a_few_missed_deadlines_among_answers_never_open_it() -> None:
    """The busy-machine case: late answers now and then must not switch recall off."""
    clock = Clock()
    b = breaker(clock)
    for n in range(200):
        clock.now += 0.05
        call(b, Outcome.SLOW if n % 3 == 0 else Outcome.OK)
    assert not b.is_open
    # The window alone (no rule on misses in a row): a run of misses while most recent calls
    # still answer leaves it closed.
    b = breaker(clock, misses_in_a_row=0)
    for n in range(20):
        call(b, Outcome.SLOW if n % 3 == 0 else Outcome.OK)
    for _ in range(9):
        call(b, Outcome.SLOW)
    assert not b.is_open


def test_missed_deadlines_alone_open_it_when_every_call_misses() -> None:
    """A hung sidecar answers nothing: then degraded recall should cost nothing too."""
    clock = Clock()
    b = breaker(clock, misses_in_a_row=0)
    for _ in range(4):
        call(b, Outcome.SLOW)
        assert not b.is_open  # fewer than min_calls: not enough to judge
    call(b, Outcome.SLOW)
    assert b.is_open
    assert not b.allow()


def test_errors_open_it_at_the_failure_rate() -> None:
    clock = Clock()
    b = breaker(clock)
    for outcome in (Outcome.OK, Outcome.FAILED, Outcome.OK, Outcome.FAILED):
        call(b, outcome)
    assert not b.is_open
    call(b, Outcome.FAILED)  # 3 of 5 failed
    assert b.is_open


def test_old_outcomes_leave_the_window() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(4):
        call(b, Outcome.FAILED)
    clock.now = 11  # those four are older than the window now
    call(b, Outcome.FAILED)
    assert not b.is_open


def test_one_trial_after_reset_and_its_outcome_decides() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(5):
        call(b, Outcome.FAILED)
    assert b.is_open
    assert not b.allow()
    clock.now = 2.1
    trial = b.allow()  # the one trial
    assert trial is not None
    assert trial.trial
    assert not b.allow()  # no second trial while the first runs
    b.record(trial, Outcome.SLOW)
    assert b.is_open
    assert not b.allow()
    clock.now = 4.2
    trial = b.allow()
    assert trial is not None
    b.record(trial, Outcome.OK)
    assert not b.is_open
    # Closed again with a clean window: one failure does not re-open it.
    call(b, Outcome.FAILED)
    assert not b.is_open
    assert b.allow()


def test_the_sidecar_reporting_serving_lets_the_trial_through_at_once() -> None:
    clock = Clock()
    b = breaker(clock, reset_seconds=30)
    b.trip()  # its health watch saw it go away
    assert b.is_open
    assert not b.allow()
    b.serving()
    trial = b.allow()
    assert trial is not None
    assert trial.trial
    b.record(trial, Outcome.OK)
    assert not b.is_open


def test_serving_does_not_close_a_breaker_by_itself() -> None:
    """Only a successful call closes it: SERVING from a sidecar that still fails must not flap."""
    clock = Clock()
    b = breaker(clock, reset_seconds=30)
    b.trip()
    b.serving()
    assert b.is_open
    trial = b.allow()
    assert trial is not None
    b.record(trial, Outcome.FAILED)
    assert not b.allow()


def test_once_open_a_refusal_costs_microseconds() -> None:
    b = breaker(Clock(), reset_seconds=30)
    b.trip()
    # This thread's CPU time: a busy machine's waits for a core are not the refusal's cost.
    started = time.thread_time()
    for _ in range(10_000):
        assert not b.allow()
    assert (time.thread_time() - started) / 10_000 < 0.0002


def test_a_health_poll_that_keeps_tripping_holds_the_trial_back() -> None:
    """A stuck sidecar: every trial would cost its caller a whole timeout, so none goes out
    while the health poll still says so, however long past `reset_seconds`."""
    clock = Clock()
    b = breaker(clock, reset_seconds=2)
    for _ in range(20):
        b.trip()
        clock.now += 1.2  # one poll whose check timed out
        assert not b.allow()
    b.serving()
    trial = b.allow()
    assert trial is not None
    assert trial.trial
    b.record(trial, Outcome.OK)
    assert not b.is_open


def test_refuses_says_what_allow_would_without_taking_the_trial() -> None:
    """Recall asks `refuses()` before any other work; only `allow()` may start the trial."""
    clock = Clock()
    b = breaker(clock)
    assert not b.refuses()
    for _ in range(5):
        call(b, Outcome.FAILED)
    assert b.refuses()
    clock.now += 2
    assert not b.refuses()  # a trial is due
    assert not b.refuses()  # and asking again does not take it
    trial = b.allow()
    assert trial is not None
    assert b.refuses()  # the trial is out: everybody else is refused
    b.record(trial, Outcome.OK)
    assert not b.refuses()


def test_missed_timeouts_in_a_row_open_it_however_few_calls_the_window_holds() -> None:
    """One caller at a time against a sidecar that answers its health but no search: each
    miss of the service's own timeout takes seconds, so the window never holds `min_calls` of
    them; two in a row with no answer between them are enough."""
    clock = Clock()
    b = breaker(clock)
    call(b, Outcome.SLOW)
    clock.now += 5
    assert not b.is_open
    call(b, Outcome.SLOW)
    assert b.is_open


def test_an_answer_between_two_missed_timeouts_keeps_it_closed() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(10):
        call(b, Outcome.SLOW)
        clock.now += 5
        call(b, Outcome.OK)
    assert not b.is_open
    # A failure is no answer: it does not break the run.
    call(b, Outcome.SLOW)
    call(b, Outcome.FAILED)
    assert not b.is_open
    call(b, Outcome.SLOW)
    assert b.is_open


def test_the_run_of_misses_starts_again_after_the_trial_closes_it() -> None:
    clock = Clock()
    b = breaker(clock)
    call(b, Outcome.SLOW)
    call(b, Outcome.SLOW)
    assert b.is_open
    clock.now += 2
    trial = b.allow()
    assert trial is not None
    b.record(trial, Outcome.OK)
    assert not b.is_open
    clock.now += 1
    call(b, Outcome.SLOW)  # one miss after the trial's answer: not two in a row
    assert not b.is_open


@pytest.mark.parametrize("misses", [0, 3])
def test_the_run_it_takes_is_a_setting(misses: int) -> None:
    clock = Clock()
    b = breaker(clock, misses_in_a_row=misses)
    for _ in range(2):
        call(b, Outcome.SLOW)
        clock.now += 5
    assert not b.is_open
    call(b, Outcome.SLOW)
    assert b.is_open is (misses == 3)


def sent(b: CircuitBreaker) -> Permit:
    """A call sent now whose outcome comes later."""
    permit = b.allow()
    assert permit is not None
    return permit


def test_misses_of_calls_sent_before_an_answered_one_do_not_count() -> None:
    """One tenant's slow searches sent side by side, while other tenants' later searches are
    answered: they finish next to each other, but say nothing about the sidecar."""
    clock = Clock()
    b = breaker(clock)
    for _ in range(3):
        slow = [sent(b) for _ in range(20)]  # side by side
        clock.now += 0.01
        call(b, Outcome.OK)  # another tenant's, sent later, answered
        clock.now += 5
        for permit in slow:
            b.record(permit, Outcome.SLOW)
        assert not b.is_open  # neither the run nor the window (20 misses of 21 calls)


def test_misses_sent_after_the_last_answer_count_in_any_order() -> None:
    clock = Clock()
    b = breaker(clock)
    call(b, Outcome.OK)
    clock.now += 0.01
    first, second = sent(b), sent(b)
    clock.now += 0.01
    late_answer = sent(b)
    clock.now += 5
    b.record(second, Outcome.SLOW)
    b.record(late_answer, Outcome.OK)  # sent after both: the sidecar answers
    b.record(first, Outcome.SLOW)
    assert not b.is_open
    clock.now += 0.01
    third, fourth = sent(b), sent(b)
    clock.now += 5
    b.record(fourth, Outcome.SLOW)
    b.record(third, Outcome.SLOW)
    assert b.is_open


def test_calls_sent_before_it_opened_do_not_decide_the_trial_or_reopen_it() -> None:
    clock = Clock()
    b = breaker(clock)
    in_flight = [sent(b) for _ in range(4)]
    b.trip()
    clock.now = 1.5
    b.record(in_flight[0], Outcome.SLOW)  # not the trial: the reset does not start again
    clock.now = 2.1
    trial = b.allow()
    assert trial is not None
    assert trial.trial
    b.record(in_flight[1], Outcome.OK)  # not the trial either: it decides nothing
    assert b.refuses()
    b.record(trial, Outcome.OK)
    assert not b.is_open
    clock.now = 5
    b.record(in_flight[2], Outcome.SLOW)  # sent before the trial's answer
    b.record(in_flight[3], Outcome.SLOW)
    assert not b.is_open


def test_a_trial_cut_short_by_its_caller_decides_nothing() -> None:
    """A caller whose own deadline is too short to judge the sidecar by takes the trial and
    misses: the breaker stays open, and the next caller may try at once."""
    clock = Clock()
    b = breaker(clock)
    b.trip()
    clock.now = 2.1
    for _ in range(50):
        trial = b.allow()
        assert trial is not None
        assert trial.trial
        b.record(trial, Outcome.UNJUDGED)
        clock.now += 0.002
    assert b.is_open
    trial = b.allow()
    assert trial is not None
    b.record(trial, Outcome.OK)
    assert not b.is_open


def test_misses_of_deadlines_cut_short_never_open_it() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(100):
        call(b, Outcome.UNJUDGED)
        clock.now += 0.01
    assert not b.is_open
    # and are no answer either: they do not break a run of misses
    call(b, Outcome.SLOW)
    call(b, Outcome.UNJUDGED)
    call(b, Outcome.SLOW)
    assert b.is_open
