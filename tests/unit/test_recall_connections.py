"""Recall never holds a database connection while it waits for the sidecar: the scopes are read
and released, the search runs with no unit of work open, then the candidates are validated in a
read of their own (fails on the previous main, where search ran inside the read transaction).
And validation asks for the candidates' customer grants at once, not one query each."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from memory_service.context.app.context import BuildContext
from memory_service.context.domain.context import Context, ContextRequest
from memory_service.kernel.app.transactions import Transactions
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import Identity, Scope, ScopeType, utcnow
from memory_service.kernel.domain.ports import Candidate, SearchUnavailable, Visibility
from memory_service.memories.app.recall import Recaller
from memory_service.memories.domain.recall import RecallResult, RecallUseCases, ScopeHint
from tests.support import records

IDENTITY = Identity("acme", "mara", frozenset())


class _Units:
    """A unit-of-work factory that only counts what is open."""

    def __init__(self) -> None:
        self.open = 0
        self.opened = 0

    @contextmanager
    def __call__(self, tenant_id: str, *, write: bool) -> Iterator[Any]:
        self.open += 1
        self.opened += 1
        try:
            yield object()
        finally:
            self.open -= 1


class _Search:
    search_timeout = 1.0

    def __init__(self, units: _Units, fail: bool = False, refused: str | None = None) -> None:
        self._units = units
        self._fail = fail
        self._refused = refused
        self.open_during_search: list[int] = []
        self.deadlines: list[tuple[float | None, bool]] = []

    def refusal(self) -> str | None:
        return self._refused

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Candidate]:
        self.open_during_search.append(self._units.open)
        self.deadlines.append((deadline, own_deadline))
        if self._fail:
            raise SearchUnavailable("sidecar down")
        return [Candidate("m-1", 0.9, 1)]

    def tenant_points(self, tenant_id: str) -> int:
        return 1


class _Recall:
    """The domain's two reads, recorded: each must run inside a unit of work."""

    def __init__(self, units: _Units) -> None:
        self._units = units
        self.calls: list[tuple[str, int]] = []

    def visibility(self, uow: object, identity: Identity) -> Visibility:
        self.calls.append(("scopes", self._units.open))
        return Visibility(frozenset({identity.user_id}), frozenset())

    @staticmethod
    def search_scopes(visibility: Visibility, hint: ScopeHint) -> list[Any]:
        return [("USER", user) for user in sorted(visibility.user_ids or ())]

    def validate(
        self, uow: object, identity: Identity, candidates: list[Candidate], *a: Any
    ) -> Any:
        self.calls.append(("validate", self._units.open))
        return RecallResult(candidate_count=len(candidates), visibility=a[-1])


def _recaller(units: _Units, search: _Search) -> tuple[Recaller, _Recall]:
    recall = _Recall(units)
    tx = Transactions(units, timedelta(hours=1))
    return Recaller(tx, recall, search), recall  # type: ignore[arg-type]


def test_recall_searches_with_no_unit_of_work_open() -> None:
    units = _Units()
    search = _Search(units)
    recaller, recall = _recaller(units, search)
    outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
    assert isinstance(outcome, RecallResult)
    assert outcome.candidate_count == 1
    assert search.open_during_search == [0]
    assert recall.calls == [("scopes", 1), ("validate", 1)]  # both inside a (short) read
    assert units.open == 0
    recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)  # what mara saw is known now
    assert search.open_during_search == [0, 0]
    assert recall.calls[2:] == [("validate", 1)]
    assert units.open == 0


def test_a_failing_search_is_degraded_without_a_connection_held() -> None:
    units = _Units()
    search = _Search(units, fail=True)
    recaller, recall = _recaller(units, search)
    outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
    assert isinstance(outcome, SearchUnavailable)
    assert search.open_during_search == [0]
    assert recall.calls == [("scopes", 1)]  # nothing to validate
    assert units.open == 0


def test_a_refused_search_answers_before_any_read() -> None:
    """The breaker open: degraded at once, no unit of work opened, the sidecar not asked.
    Fails on previous main, which read the caller's scopes first."""
    units = _Units()
    search = _Search(units, refused="circuit breaker open")
    recaller, recall = _recaller(units, search)
    outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
    assert isinstance(outcome, SearchUnavailable)
    assert outcome.reason == "circuit breaker open"
    assert (units.opened, recall.calls, search.open_during_search) == (0, [], [])


class _Builder:
    """A context of the caller's own scope, built inside a read that takes `reading` seconds."""

    def __init__(self, units: _Units, reading: float = 0.0) -> None:
        self._units = units
        self._reading = reading

    def build(self, uow: object, identity: Identity, request: ContextRequest) -> Context:
        assert self._units.open == 1
        time.sleep(self._reading)
        context = Context(request.instant)
        context.allowed = Visibility(frozenset({identity.user_id}), frozenset())
        return context


def test_build_context_searches_after_its_read_is_released() -> None:
    units = _Units()
    search = _Search(units)
    recaller, recall = _recaller(units, search)

    build = BuildContext(Transactions(units, timedelta(hours=1)), _Builder(units), recaller)  # type: ignore[arg-type]
    request = ContextRequest("", "", utcnow(), [], 10)
    built = build(IDENTITY, request, "meetings?", 5, None)
    assert isinstance(built.recall, RecallResult)
    assert search.open_during_search == [0]
    assert recall.calls == [("validate", 1)]  # the context's scopes, not read again
    assert units.opened == 2
    assert units.open == 0


class _Grants:
    """Counts how customer grants are asked for."""

    def __init__(self, granted: set[str]) -> None:
        self._granted = granted
        self.one_by_one = 0
        self.at_once = 0

    def get(self, user_id: str, customer_id: str) -> object | None:
        self.one_by_one += 1
        return object() if customer_id in self._granted else None

    def granted_among(self, user_id: str, customer_ids: Collection[str]) -> frozenset[str]:
        self.at_once += 1
        return frozenset(self._granted & set(customer_ids))


def test_validation_asks_for_every_candidates_customer_grant_in_one_query() -> None:
    """Fails on previous main: one grant lookup per customer candidate."""
    now = utcnow()
    memories = {}
    for n in range(12):
        memory = records.memory(
            records.revision(1, now - timedelta(days=1), memory_id=f"m-{n}"),
            created=now - timedelta(days=1),
            memory_id=f"m-{n}",
        )
        memory.scope = Scope(ScopeType.CUSTOMER, f"cust-{n % 6}")
        memories[memory.id] = memory
    grants = _Grants({"cust-0", "cust-1"})
    uow = SimpleNamespace(
        memories=SimpleNamespace(get_many=lambda ids: {i: memories[i] for i in ids}),
        grants=grants,
    )
    recall = RecallUseCases(AccessPolicy(GrantTableAuthorizer()))
    candidates = [Candidate(i, 0.5, 1) for i in memories]
    result = recall.validate(uow, IDENTITY, candidates, now, ScopeHint(), 20)  # type: ignore[arg-type]
    assert sorted(m.scope.id for m, _ in result.memories) == ["cust-0"] * 2 + ["cust-1"] * 2
    assert result.candidate_count == 4  # the others are somebody else's: not even counted
    assert (grants.at_once, grants.one_by_one) == (1, 0)


def test_a_caller_without_a_deadline_has_the_search_timeout_as_one() -> None:
    """Counted from its arrival, less the margin kept to reply, and marked the service's own,
    so missing it counts against the sidecar; a caller's deadline is not marked."""
    units = _Units()
    search = _Search(units)
    recaller, _ = _recaller(units, search)
    arrived = time.monotonic()
    recaller.run(IDENTITY, "meetings?", 5, utcnow(), None, arrived=arrived - 0.01)
    recaller.run(IDENTITY, "meetings?", 5, utcnow(), arrived + 0.5)
    (own_by, own), (callers_by, callers) = search.deadlines
    assert own is True
    due = arrived - 0.01 + search.search_timeout
    assert own_by == pytest.approx(due - recaller.margin.own_seconds(due - arrived), abs=0.005)
    assert callers is False
    assert callers_by is not None
    assert callers_by < arrived + 0.5


def test_slow_validations_do_not_starve_callers_without_a_deadline() -> None:
    """The margin before a caller's deadline grows with slow validations (twice their p95); the
    service's own deadline leaves them out, or a few slow reads would leave every later search
    no time at all, and nothing validated would ever bring the margin down."""
    units = _Units()
    search = _Search(units)
    recaller, _ = _recaller(units, search)
    for _ in range(20):
        recaller.margin.observe(search.search_timeout)
    arrived = time.monotonic()
    outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None, arrived=arrived)
    assert isinstance(outcome, RecallResult)
    ((own_by, own),) = search.deadlines
    assert own is True
    due = arrived + search.search_timeout
    assert own_by == pytest.approx(due - recaller.margin.own_seconds(due - arrived), abs=0.005)


@pytest.mark.parametrize("before_search", [0.3, 0.5])
def test_a_slow_read_before_the_search_leaves_it_the_rest_of_the_timeout(
    before_search: float,
) -> None:
    """A slow first read of what the caller may see eats into the timeout: the search still
    ends in time for the reply. (Whether its miss counts against the sidecar, the client
    judges by how much of the timeout the search had: tests/unit/test_hung_sidecar.py.)"""
    units = _Units()
    search = _Search(units)
    recaller, _ = _recaller(units, search)
    arrived = time.monotonic()
    recaller.run(IDENTITY, "meetings?", 5, utcnow(), None, arrived=arrived - before_search)
    ((own_by, own),) = search.deadlines
    assert own is True
    due = arrived - before_search + search.search_timeout
    assert own_by == pytest.approx(due - recaller.margin.own_seconds(due - arrived), abs=0.005)


def test_build_context_counts_the_timeout_from_before_its_context_read() -> None:
    units = _Units()
    search = _Search(units)
    recaller, _ = _recaller(units, search)

    slow = _Builder(units, reading=0.15)
    build = BuildContext(Transactions(units, timedelta(hours=1)), slow, recaller)  # type: ignore[arg-type]
    before = time.monotonic()
    build(IDENTITY, ContextRequest("", "", utcnow(), [], 10), "meetings?", 5, None)
    ((own_by, own),) = search.deadlines
    assert own is True  # 150 ms of a 1 s timeout: the search still had more than half
    due = before + search.search_timeout
    assert own_by == pytest.approx(due - recaller.margin.own_seconds(due - before - 0.15), abs=0.02)
