"""The bench's "recall with the sidecar down" row is met only when both halves were measured in
full and within budget: a half that is missing or short must never read as met."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bench.budgets import _down

MEASURED: dict[str, Any] = {
    "recall_sidecar_down": {
        "hung": {
            "callers": 4,
            "with_deadline_ms": [801.0, 803.5],
            "deadline_ms": 1000.0,
            "without_deadline_ms": [5001.2, 5003.9],
            "recall_timeout_ms": 5000.0,
            "refused_by_open_breaker": 0,
            "missed_deadline": 0,
        },
        "breaker_open": {"p50_ms": 0.7, "p95_ms": 0.9, "p99_ms": 1.1, "count": 300},
        "breaker_open_calls_wanted": 300,
        "breaker_open_server_cpu_ms_per_call": 0.4,
    }
}


def changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    result = copy.deepcopy(MEASURED)
    target = result["recall_sidecar_down"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


def test_both_halves_measured_within_budget_is_met() -> None:
    text, met = _down(MEASURED)
    assert met is True
    assert "4 of 4 callers waited" in text
    assert "without a deadline slowest 5004 ms of 5000 + 5 ms" in text


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        (("hung", "with_deadline_ms"), [], "2 of 4 callers waited"),
        (("hung", "without_deadline_ms"), [], "2 of 4 callers waited"),
        (("hung", "with_deadline_ms"), [801.0], "3 of 4 callers waited"),
        (("hung", "without_deadline_ms"), [5001.0, 5005.5], "slowest 5006 ms"),
        (("hung", "with_deadline_ms"), [801.0, 1006.0], "slowest 1006 ms"),
        (("hung", "missed_deadline"), 1, "1 missed their deadline"),
        (("breaker_open",), {}, "no call refused by it"),
        (("breaker_open", "count"), 12, "over 12 calls"),
        (("breaker_open", "p95_ms"), 2.4, "breaker open p95 2.4 ms"),
    ],
)
def test_a_missing_short_or_slow_half_is_not_met(
    path: tuple[str, ...], value: Any, shown: str
) -> None:
    text, met = _down(changed(path, value))
    assert met is False
    assert shown in text


def test_callers_refused_by_an_open_breaker_are_counted_not_sampled() -> None:
    result = changed(("hung", "with_deadline_ms"), [801.0])
    result["recall_sidecar_down"]["hung"]["refused_by_open_breaker"] = 1
    text, met = _down(result)
    assert met is False
    assert "3 of 4 callers waited (1 refused by an open breaker" in text
