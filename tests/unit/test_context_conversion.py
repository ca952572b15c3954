"""BuildContext's conversion reads the applicable revision the domain worked out; it decides
nothing itself (before, it re-evaluated it for the memory, each conflict and each shadowed
default)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_service.context.app.context import BuiltContext
from memory_service.context.domain.context import (
    Applicability,
    Applying,
    Conflict,
    Context,
    ShadowedOverride,
)
from memory_service.context.transport import convert_context
from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import (
    Override,
    ParentType,
    Scope,
    ScopeType,
    new_id,
    utcnow,
)
from memory_service.memories.domain import authority
from memory_service.memories.domain.shown import show_memory
from tests.integration.test_storage import make_memory


def test_context_conversion_never_evaluates_a_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    now = utcnow()
    mine, theirs = make_memory("t1", "mara"), make_memory("t1", "mara")
    first, second = (
        Applying(show_memory(mine, now, mine.revisions[0]), Applicability.USER),
        Applying(show_memory(theirs, now, theirs.revisions[0]), Applicability.USER),
    )
    override = Override(
        new_id(),
        "t1",
        ParentType.CONVERSATION,
        "c1",
        mine.key,
        "",
        Scope(ScopeType.USER, "mara"),
        "afternoons today",
        now + timedelta(hours=1),
        now,
        "mara",
    )
    context = Context(
        now,
        memories=[first, second],
        conflicts=[Conflict(mine.key, "", [first, second])],
        overrides=[ShadowedOverride(override, first)],
    )

    def evaluated(*_args: object) -> None:
        raise AssertionError("conversion evaluated a revision")

    monkeypatch.setattr(rules, "applicable_revision", evaluated)
    monkeypatch.setattr(rules, "state_at", evaluated)
    monkeypatch.setattr(authority, "inferred", evaluated)
    reply = convert_context.context_proto(BuiltContext(context, None))
    assert [m.memory.applicable_revision.value for m in reply.memories] == ["prefers mornings"] * 2
    assert list(reply.conflicts[0].values) == ["prefers mornings", "prefers mornings"]
    assert reply.overrides[0].shadowed_value == "prefers mornings"
