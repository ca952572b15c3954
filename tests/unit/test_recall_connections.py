"""Recall never holds a database connection while it waits for the sidecar: the scopes are read
and released, the search runs with no unit of work open, then the candidates are validated in a
read of their own (fails on the previous main, where search ran inside the read transaction)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from memory_service.app.context import BuildContext
from memory_service.app.recall import Recaller
from memory_service.app.transactions import Transactions
from memory_service.domain.context import Context, ContextRequest
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import SearchUnavailable, Visibility
from memory_service.domain.recall import Candidate, RecallResult, ScopeHint

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

    def __init__(self, units: _Units, fail: bool = False) -> None:
        self._units = units
        self._fail = fail
        self.open_during_search: list[int] = []

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
    ) -> list[Candidate]:
        self.open_during_search.append(self._units.open)
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

    def search_scopes(self, uow: object, identity: Identity, hint: ScopeHint) -> list[Any]:
        self.calls.append(("scopes", self._units.open))
        return [("USER", identity.user_id)]

    def validate(
        self, uow: object, identity: Identity, candidates: list[Candidate], *a: Any
    ) -> Any:
        self.calls.append(("validate", self._units.open))
        return RecallResult(candidate_count=len(candidates))


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


def test_a_failing_search_is_degraded_without_a_connection_held() -> None:
    units = _Units()
    search = _Search(units, fail=True)
    recaller, recall = _recaller(units, search)
    outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
    assert isinstance(outcome, SearchUnavailable)
    assert search.open_during_search == [0]
    assert recall.calls == [("scopes", 1)]  # nothing to validate
    assert units.open == 0


def test_build_context_searches_after_its_read_is_released() -> None:
    units = _Units()
    search = _Search(units)
    recaller, recall = _recaller(units, search)

    class _Builder:
        def build(self, uow: object, identity: Identity, request: ContextRequest) -> Context:
            assert units.open == 1
            context = Context(request.instant)
            context.allowed = Visibility(frozenset({identity.user_id}), frozenset())
            return context

    build = BuildContext(Transactions(units, timedelta(hours=1)), _Builder(), recaller)  # type: ignore[arg-type]
    request = ContextRequest("", "", utcnow(), [], 10)
    built = build(IDENTITY, request, "meetings?", 5, None)
    assert isinstance(built.recall, RecallResult)
    assert search.open_during_search == [0]
    assert recall.calls == [("validate", 1)]  # the context's scopes, not read again
    assert units.opened == 2
    assert units.open == 0
