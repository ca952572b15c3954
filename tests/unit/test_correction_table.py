"""Decision tables for corrections and the stale-evidence rule on every write path
(docs/invariants.md I1, I3, I10, I15), on the dict-backed fake unit of work: milliseconds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from memory_service.context.domain.proposals import Decision
from memory_service.kernel.domain import rules
from memory_service.kernel.domain.errors import (
    Aborted,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from memory_service.kernel.domain.etags import etag_of
from memory_service.kernel.domain.model import Memory, ProvenanceMethod, RevisionStatus
from tests.support.world import World, at

MORNINGS = "prefers morning meetings"
EVENINGS = "prefers evening meetings"
AFTERNOONS = "prefers afternoon meetings"


def _statement(value: str) -> str:
    return "I " + value.replace("prefers", "prefer")


@dataclass(frozen=True)
class Correction:
    value: str = AFTERNOONS
    said: float = 2.0  # hours after T0; the memory was said at T0 and written then
    before: str = "live"  # "live", "deleted" (at hour 1), "superseded" (EVENINGS at hour 1)
    caller: str = "mara"  # "mara" (the subject), "ben", "admin" (another user, an admin)
    etag: int = 0  # added to the current version
    method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT
    valid_from: float | None = None
    valid_until: float | None = None


def _setup(world: World, before: str) -> Memory:
    mara = world.who("mara")
    memory, _ = world.create(mara, world.say(mara, _statement(MORNINGS)), MORNINGS)
    if before == "deleted":
        world.write(mara, lambda uow: world.memories.delete(uow, mara, memory.id, None, at(1)))
    if before == "superseded":
        said = world.say(mara, _statement(EVENINGS), when=at(1))
        memory, _ = world.correct(mara, memory, said, EVENINGS)
    return memory


def _hours(offset: float | None) -> datetime | None:
    return None if offset is None else at(offset)


CORRECT: dict[str, tuple[Correction, RevisionStatus | type[DomainError], str]] = {
    "current etag": (Correction(), RevisionStatus.ACTIVE, ""),
    "stale etag": (Correction(etag=-1), Aborted, "ETAG_MISMATCH"),
    "etag from the future": (Correction(etag=1), Aborted, "ETAG_MISMATCH"),
    "deleted memory": (Correction(before="deleted"), NotFound, "NOT_FOUND"),
    "another user's memory": (Correction(caller="ben"), NotFound, "NOT_FOUND"),
    "a user's memory, by an admin": (Correction(caller="admin"), PermissionDenied, ""),
    "inferred correction": (
        Correction(method=ProvenanceMethod.ASSISTANT_INFERENCE), RevisionStatus.CANDIDATE,
        "not the subject's own statement",
    ),
    "evidence older than the revision in force": (
        Correction(said=-1), FailedPrecondition, "STALE_EVIDENCE",
    ),
    "a superseded value, inferred again": (
        Correction(
            before="superseded", value=MORNINGS, method=ProvenanceMethod.ASSISTANT_INFERENCE
        ),
        FailedPrecondition, "STALE_EVIDENCE",
    ),
    "a superseded value, restated by the user": (
        Correction(before="superseded", value=MORNINGS), RevisionStatus.ACTIVE, "",
    ),
    "evidence between the superseded and the current revision": (
        Correction(before="superseded", said=0.5), FailedPrecondition, "STALE_EVIDENCE",
    ),
    "effective tomorrow": (Correction(valid_from=26), RevisionStatus.ACTIVE, ""),
    "ends before it starts": (
        Correction(valid_from=26, valid_until=25), InvalidArgument, "FIELD_INVALID",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("row", "expected", "reason"), CORRECT.values(), ids=CORRECT.keys())
def test_correct(
    row: Correction, expected: RevisionStatus | type[DomainError], reason: str
) -> None:
    world = World()
    memory = _setup(world, row.before)
    caller = world.who("root" if row.caller == "admin" else row.caller, admin=row.caller == "admin")
    evidence = world.say(caller, _statement(row.value), when=at(row.said))

    def correct() -> tuple[Memory, object]:
        return world.correct(
            caller,
            memory,
            evidence,
            row.value,
            version=memory.version + row.etag,
            method=row.method,
            valid_from=_hours(row.valid_from),
            valid_until=_hours(row.valid_until),
            now=at(3),
        )

    if not isinstance(expected, RevisionStatus):
        with pytest.raises(expected) as refused:
            correct()
        assert refused.value.reason.name == (reason or expected.reason.name)
        if expected is Aborted:
            assert refused.value.metadata["current_etag"] == etag_of(memory)
        return
    corrected, revision = correct()
    assert isinstance(revision, type(corrected.revisions[-1]))
    assert revision.status is expected
    assert revision.status_reason.startswith(reason)
    assert corrected.version == memory.version + 1
    in_force = rules.applicable_revision(corrected, at(row.valid_from or 3))
    expected_number = revision.number if expected is RevisionStatus.ACTIVE else memory.version
    assert in_force is not None
    assert in_force.number == expected_number


# Which revision applies when (I1): two corrections after the memory written at T0, each
# `(value, valid_from, valid_until)` in hours, made in this order at hours 2 and 3; then the
# revision number that applies at each probe (0: none).
PROBES = (1.0, 2.5, 10.0, 30.0, 60.0)
TIMELINES: dict[str, tuple[list[tuple[str, float | None, float | None]], list[int]]] = {
    "from now": ([(AFTERNOONS, None, None)], [1, 2, 2, 2, 2]),
    "from tomorrow": ([(AFTERNOONS, 26, None)], [1, 1, 1, 2, 2]),
    "for a day": ([(AFTERNOONS, None, 26)], [1, 2, 2, 0, 0]),
    "back-dated": ([(AFTERNOONS, 0.5, None)], [2, 2, 2, 2, 2]),
    "a later one cuts an earlier future one": (
        [(AFTERNOONS, 48, None), (EVENINGS, 26, None)], [1, 1, 1, 3, 3],
    ),
    "an earlier future one than the pending one": (
        [(AFTERNOONS, 26, None), (EVENINGS, 48, None)], [1, 1, 1, 2, 3],
    ),
    "now, then from tomorrow": (
        [(AFTERNOONS, None, None), (EVENINGS, 26, None)], [1, 2, 2, 3, 3],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("corrections", "applies"), TIMELINES.values(), ids=TIMELINES.keys())
def test_effective_dates(
    corrections: list[tuple[str, float | None, float | None]], applies: list[int]
) -> None:
    world = World()
    mara = world.who("mara")
    memory, _ = world.create(mara, world.say(mara, _statement(MORNINGS)), MORNINGS)
    for hour, (value, start, end) in enumerate(corrections, start=2):
        said = world.say(mara, _statement(value), when=at(hour))
        memory, _ = world.correct(
            mara, memory, said, value, valid_from=_hours(start), valid_until=_hours(end)
        )
    seen = []
    for probe in PROBES:
        revision = rules.applicable_revision(memory, at(probe))
        seen.append(0 if revision is None else revision.number)
    assert seen == applies
    stored = world.read(mara, lambda uow: uow.memories.get(memory.id))
    assert stored == memory  # what the use case returned is what was stored


# The stale-evidence rule on every path that writes (I15). The key's memory was written at hour
# 1 from words said then; "deleted" deletes it at hour 2. New words said at `said` then try to
# write the key through `path`, at hour 4.
@dataclass(frozen=True)
class Late:
    path: str  # create, correct, propose, confirm
    said: float
    deleted: bool = False


def _write_late(world: World, row: Late) -> str:
    """What happened: "written", or the refusal's reason."""
    mara = world.who("mara")
    memory, _ = world.create(mara, world.say(mara, _statement(MORNINGS), when=at(1)), MORNINGS)
    if row.deleted:
        world.write(mara, lambda uow: world.memories.delete(uow, mara, memory.id, None, at(2)))
    evidence = world.say(mara, _statement(AFTERNOONS), when=at(row.said))
    try:
        if row.path == "create":
            world.create(mara, evidence, AFTERNOONS, now=at(4))
        elif row.path == "correct":
            world.correct(mara, memory, evidence, AFTERNOONS, now=at(4))
        elif row.path == "propose":
            outcome = world.propose(mara, evidence, AFTERNOONS, now=at(4))
            return "written" if outcome.decision is Decision.CANDIDATE else outcome.decision
        else:
            _confirm_late(world, memory, row.said)
    except FailedPrecondition as refused:
        return refused.reason.name
    return "written"


def _confirm_late(world: World, memory: Memory, said: float) -> None:
    """An inferred candidate from words said at hour 0.5 waits for review; meanwhile the user
    says something newer at `said` (hour 3 when `said` is 3, else nothing). Confirming the
    candidate then is late work (I10): it is judged against the records at commit."""
    mara = world.who("mara")
    old = world.say(mara, _statement(EVENINGS), when=at(1.5))
    memory, candidate = world.correct(
        mara, memory, old, EVENINGS, method=ProvenanceMethod.ASSISTANT_INFERENCE, now=at(1.5)
    )
    if said > 2:
        newer = world.say(mara, _statement(AFTERNOONS), when=at(said))
        memory, _ = world.correct(mara, memory, newer, AFTERNOONS, now=at(said))
    world.write(
        mara,
        lambda uow: world.memories.confirm(uow, mara, memory.id, candidate.number, None, "", at(4)),
    )


LATE: dict[str, tuple[Late, str]] = {
    "create, said before the deletion": (Late("create", 1.5, deleted=True), "STALE_EVIDENCE"),
    "create, said after the deletion": (Late("create", 3, deleted=True), "written"),
    "propose, said before the deletion": (
        Late("propose", 1.5, deleted=True), Decision.REFUSED_STALE,
    ),
    "propose, said after the deletion": (Late("propose", 3, deleted=True), "written"),
    "propose, said before the revision in force": (Late("propose", 0.5), Decision.REFUSED_STALE),
    "propose, said after it": (Late("propose", 3), "written"),
    "correct, said before the revision in force": (Late("correct", 0.5), "STALE_EVIDENCE"),
    "correct, said at the same time": (Late("correct", 1), "written"),
    "correct, said after it": (Late("correct", 3), "written"),
    "confirm, nothing newer meanwhile": (Late("confirm", 0), "written"),
    "confirm, the user said something newer meanwhile": (Late("confirm", 3), "STALE_EVIDENCE"),
}  # fmt: skip


@pytest.mark.parametrize(("row", "expected"), LATE.values(), ids=LATE.keys())
def test_stale_evidence_on_every_path(row: Late, expected: str) -> None:
    assert _write_late(World(), row) == expected
