"""Decision table: which search candidates recall keeps (docs/invariants.md I7, I8, I17).

The sidecar proposes memory ids and revision numbers; every candidate is re-read from the
records and kept only if live, applicable at the instant asked, in the caller's tenant and
scope, and visible to the caller. One the caller may not see is dropped without being counted.
Runs the real use case on the dict-backed fake unit of work.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from memory_service.kernel.domain.model import Identity, ProvenanceMethod, Scope, ScopeType
from memory_service.kernel.domain.ports import Candidate
from memory_service.memories.domain.recall import DropReason, ScopeHint
from tests.support.world import World, at

KEPT = "kept"
ANY_SCOPE = ScopeHint()
UNCOUNTED = "dropped without a trace"


@dataclass(frozen=True)
class Ask:
    memory: str  # which memory of the world below the sidecar proposes
    caller: str = "mara"  # "mara", "ben", "admin" (root, with the admin role)
    revision: int = 1  # the revision the index matched
    instant: float = 10.0  # hours after T0
    hint: ScopeHint = ANY_SCOPE


@pytest.fixture(scope="module")
def world_and_ids() -> tuple[World, dict[str, str]]:
    """mara's own memory, ben's, two customers' (mara holds a grant for globex), the
    organization's, a deleted one, a corrected one, one effective only from hour 48, an
    inferred candidate, and a memory of another tenant."""
    world = World()
    world.grant("mara", "globex")
    mara, ben = world.who("mara"), world.who("ben")
    root = world.who("root", admin=True)
    ids: dict[str, str] = {}

    def remember(
        name: str,
        caller: Identity,
        scope: Scope | None = None,
        method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT,
        valid_from: datetime | None = None,
    ) -> None:
        said = world.say(caller, f"I prefer {name} meetings", conversation=name)
        value = f"prefers {name} meetings"
        memory, _ = world.create(
            caller, said, value, scope=scope, method=method, valid_from=valid_from, key=name
        )
        ids[name] = memory.id

    remember("own", mara)
    remember("bens", ben)
    remember("granted", mara, Scope(ScopeType.CUSTOMER, "globex"))
    remember("ungranted", root, Scope(ScopeType.CUSTOMER, "initech"))
    remember("organization", root, Scope(ScopeType.ORGANIZATION, ""))
    remember("deleted", root, Scope(ScopeType.ORGANIZATION, ""))
    remember("later", root, Scope(ScopeType.ORGANIZATION, ""), valid_from=at(48))
    remember("inferred", mara, Scope(ScopeType.USER, "mara"), method=ProvenanceMethod.IMPORT)
    remember("elsewhere", world.who("mara", tenant="other"))
    deleted = ids["deleted"]
    world.write(root, lambda uow: world.memories.delete(uow, root, deleted, None, at(1)))
    # "corrected": revision 2 applies from hour 5, and revision 3 from hour 48
    said = world.say(root, "I prefer corrected meetings", conversation="corrected")
    memory, _ = world.create(
        root, said, "prefers corrected meetings", scope=Scope(ScopeType.ORGANIZATION, ""),
        key="corrected",
    )  # fmt: skip
    for hour, start in ((5.0, None), (6.0, at(48))):
        said = world.say(root, "I prefer later corrected meetings", when=at(hour))
        memory, _ = world.correct(
            root, memory, said, "prefers later corrected meetings", valid_from=start
        )
    ids["corrected"] = memory.id
    ids["unknown"] = "f" * 32
    return world, ids


RECALL: dict[str, tuple[Ask, str | DropReason]] = {
    "own memory": (Ask("own"), KEPT),
    "organization memory": (Ask("organization"), KEPT),
    "customer memory, granted": (Ask("granted"), KEPT),
    "customer memory, not granted": (Ask("ungranted"), UNCOUNTED),
    "customer memory, as admin": (Ask("ungranted", caller="admin"), KEPT),
    "another user's memory": (Ask("bens"), UNCOUNTED),
    "another user's memory, by its user": (Ask("bens", caller="ben"), KEPT),
    "another user's memory, as admin": (Ask("bens", caller="admin"), KEPT),
    "deleted": (Ask("deleted"), DropReason.DELETED),
    "another tenant's memory": (Ask("elsewhere"), DropReason.NOT_FOUND),
    "an id nobody has": (Ask("unknown"), DropReason.NOT_FOUND),
    "not yet effective": (Ask("later"), DropReason.NOT_APPLICABLE),
    "effective by then": (Ask("later", instant=50), KEPT),
    "a candidate, never applicable": (Ask("inferred"), DropReason.NOT_APPLICABLE),
    "superseded revision": (Ask("corrected", revision=1), DropReason.STALE_REVISION),
    "revision in force": (Ask("corrected", revision=2), KEPT),
    "revision not yet in force": (Ask("corrected", revision=3), DropReason.STALE_REVISION),
    "a past instant, its revision then": (Ask("corrected", instant=2), KEPT),
    "outside the scope asked for": (
        Ask("own", hint=ScopeHint(ScopeType.ORGANIZATION)), DropReason.OUT_OF_SCOPE,
    ),
    "inside the scope asked for": (Ask("own", hint=ScopeHint(ScopeType.USER, "mara")), KEPT),
}  # fmt: skip


@pytest.mark.parametrize(("ask", "expected"), RECALL.values(), ids=RECALL.keys())
def test_recall_validation(
    world_and_ids: tuple[World, dict[str, str]], ask: Ask, expected: str | DropReason
) -> None:
    """Every row reads one world, built once: validation never writes."""
    world, ids = world_and_ids
    caller = world.who("root" if ask.caller == "admin" else ask.caller, admin=ask.caller == "admin")
    candidate = Candidate(ids[ask.memory], 0.9, ask.revision)
    result = world.read(
        caller,
        lambda uow: world.recall.validate(
            uow, caller, [candidate], at(ask.instant), ask.hint, limit=10
        ),
    )
    kept = [memory.id for memory, _ in result.memories]
    if expected == KEPT:
        assert kept == [candidate.memory_id]
        assert result.candidate_count == 1
        assert result.dropped_count == 0
    elif expected == UNCOUNTED:
        assert kept == []
        assert result.candidate_count == 0  # nothing tells the caller it matched (I17)
        assert result.dropped_count == 0
    else:
        assert kept == []
        assert result.candidate_count == 1
        assert dict(result.dropped) == {expected: 1}
