"""RecallMemories' reads on real SQLite and PostgreSQL: a caller's recall builds the search's
filter from what they could see at their last one and validates in a single read, which reads
their customer grants again; a grant given or revoked since sends the search again with the
filter as it now is, so nothing is answered from a filter older than the validation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event

from memory_service.kernel.app.transactions import Transactions
from memory_service.kernel.domain.model import Identity, Memory, Scope, ScopeType
from memory_service.kernel.domain.ports import Candidate, Visibility
from memory_service.memories.app.recall import Recaller, SeenVisibility
from memory_service.memories.domain.recall import RecallResult, RecallUseCases
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.support.world import World, at

USER_SCOPE = ("USER", "mara")
GLOBEX = ("CUSTOMER", "globex")
ORGANIZATION = ("ORGANIZATION", "")


class _Search:
    """A sidecar that honours the filter it is sent, as the real one does: a stale filter
    misses (or still proposes) what it names."""

    search_timeout = 1.0

    def __init__(self) -> None:
        self.indexed: list[Memory] = []
        self.filters: list[list[tuple[str, str]]] = []

    def refusal(self) -> str | None:
        return None

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Candidate]:
        self.filters.append(list(scopes))
        wanted = set(scopes)
        return [
            Candidate(m.id, 0.9, 1)
            for m in self.indexed
            if (m.scope.type.value, m.scope.id) in wanted
            or (m.scope.type.value, "") in wanted
            or not wanted
        ][:limit]


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The statements sent meanwhile, as 'VERB table'; BEGIN and ROLLBACK as themselves."""
    sent: list[str] = []

    def record(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        words = statement.replace("\n", " ").split()
        sent.append(f"{words[0]} {words[words.index('FROM') + 1]}" if "FROM" in words else words[0])

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


class _Counted:
    """The unit-of-work factory, counting the units of work opened."""

    def __init__(self, units: SqlUnitOfWorkFactory) -> None:
        self._units = units
        self.opened = 0

    def __call__(self, tenant_id: str, *, write: bool) -> Any:
        self.opened += 1
        return self._units(tenant_id, write=write)


@pytest.fixture
def setup(units: SqlUnitOfWorkFactory) -> tuple[World, Recaller, _Search, _Counted, Identity]:
    world = World(units)
    mara = world.who("mara")
    own, _ = world.create(mara, world.say(mara, "I prefer mornings"), "mornings")
    world.grant("mara", "globex")
    globex = Scope(ScopeType.CUSTOMER, "globex")
    said = world.say(mara, "Globex pays by card", conversation="c2")
    customer, _ = world.create(mara, said, "pays by card", scope=globex, key="payment")
    world.write(world.who("root", admin=True), lambda uow: uow.grants.remove("mara", "globex"))
    search = _Search()
    search.indexed = [own, customer]
    counted = _Counted(units)
    recaller = Recaller(
        Transactions(counted, timedelta(hours=1)), RecallUseCases(world.policy), search
    )
    return world, recaller, search, counted, mara


def _recall(recaller: Recaller, who: Identity) -> RecallResult:
    outcome = recaller.run(who, "what do I prefer?", 5, at(10), None)
    assert isinstance(outcome, RecallResult)
    return outcome


def _kept(result: RecallResult) -> list[str]:
    return sorted(m.key for m, _ in result.memories)


def test_a_callers_next_recall_is_one_read(
    setup: tuple[World, Recaller, _Search, _Counted, Identity], engine: Engine
) -> None:
    """Fails on previous main: every recall read the grants in a transaction of its own before
    the search, then validated in a second one."""
    _, recaller, search, counted, mara = setup
    with statements(engine) as sent:
        assert _kept(_recall(recaller, mara)) == ["meeting_time"]
    assert counted.opened == 2  # the first: what mara may see, then the validation
    assert [s for s in sent if s.startswith("SELECT")] == [
        "SELECT customer_grants",
        "SELECT memories",
    ]
    with statements(engine) as sent:
        assert _kept(_recall(recaller, mara)) == ["meeting_time"]
    assert counted.opened == 3
    selects = [s for s in sent if s.startswith("SELECT")]
    assert selects == ["SELECT memories", "SELECT customer_grants"]
    assert search.filters == [[USER_SCOPE, ORGANIZATION]] * 2


def test_a_grant_given_since_the_last_recall_is_searched_at_once(
    setup: tuple[World, Recaller, _Search, _Counted, Identity],
) -> None:
    world, recaller, search, _, mara = setup
    assert _kept(_recall(recaller, mara)) == ["meeting_time"]
    world.grant("mara", "globex")
    assert _kept(_recall(recaller, mara)) == ["meeting_time", "payment"]
    # the filter mara last had, then the one the validation read
    assert search.filters[1:] == [[USER_SCOPE, ORGANIZATION], [USER_SCOPE, GLOBEX, ORGANIZATION]]
    assert _kept(_recall(recaller, mara)) == ["meeting_time", "payment"]
    assert search.filters[3:] == [[USER_SCOPE, GLOBEX, ORGANIZATION]]


def test_a_revoked_grant_is_neither_answered_nor_counted_and_searched_again(
    setup: tuple[World, Recaller, _Search, _Counted, Identity],
) -> None:
    world, recaller, search, _, mara = setup
    world.grant("mara", "globex")
    assert _kept(_recall(recaller, mara)) == ["meeting_time", "payment"]
    world.write(world.who("root", admin=True), lambda uow: uow.grants.remove("mara", "globex"))
    result = _recall(recaller, mara)
    assert _kept(result) == ["meeting_time"]
    assert (result.candidate_count, result.dropped_count) == (1, 0)  # nothing tells of globex
    assert search.filters[1:] == [[USER_SCOPE, GLOBEX, ORGANIZATION], [USER_SCOPE, ORGANIZATION]]


def test_an_empty_search_under_an_old_filter_is_not_answered_without_a_read(
    setup: tuple[World, Recaller, _Search, _Counted, Identity],
) -> None:
    """Nothing found under what mara could last see says nothing until the grants are read."""
    world, recaller, search, _, mara = setup
    own = search.indexed.pop(0)
    assert _kept(_recall(recaller, mara)) == []
    world.grant("mara", "globex")
    assert _kept(_recall(recaller, mara)) == ["payment"]
    search.indexed.insert(0, own)


def test_what_was_seen_is_bounded_by_the_customer_ids_it_holds() -> None:
    seen = SeenVisibility(customer_ids=10)
    callers = [Identity("acme", f"user-{n}") for n in range(4)]
    for caller in callers:
        seen.put(caller, Visibility(frozenset({caller.user_id}), frozenset({"a", "b"})))
    assert [seen.get(c) is not None for c in callers] == [False, True, True, True]
    big = Visibility(frozenset({"x"}), frozenset(f"c{n}" for n in range(10)))
    seen.put(callers[1], big)  # more than the whole budget: not kept, nor its old entry
    assert seen.get(callers[1]) is None
    assert [seen.get(c) is not None for c in callers] == [False, False, True, True]
