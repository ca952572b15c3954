"""Decision tables: who may write what, and with which status (docs/invariants.md I5, I7, I14).

Each row runs the real use cases on the dict-backed fake unit of work: no database, no
server, milliseconds per row. `create` is the direct write; `propose` is what an extractor
sends, where the rules, not the model, decide.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memory_service.context.domain.proposals import Decision
from memory_service.kernel.domain.errors import DomainError, InvalidArgument, PermissionDenied
from memory_service.kernel.domain.model import (
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)
from tests.support.world import World, at

USER_STATEMENT = ProvenanceMethod.USER_STATEMENT
CONFIRMATION = ProvenanceMethod.USER_CONFIRMATION
INFERENCE = ProvenanceMethod.ASSISTANT_INFERENCE
IMPORT = ProvenanceMethod.IMPORT
RULE = ProvenanceMethod.RULE
MINE = Scope(ScopeType.USER, "mara")
BENS = Scope(ScopeType.USER, "ben")
ORG = Scope(ScopeType.ORGANIZATION, "")
GRANTED = Scope(ScopeType.CUSTOMER, "globex")
NOT_GRANTED = Scope(ScopeType.CUSTOMER, "initech")
SELF = Scope(ScopeType.USER, "")


@dataclass(frozen=True)
class Row:
    caller: str  # "mara", or "admin" (mara with the admin role)
    scope: Scope
    speaker: Speaker  # who said the evidence
    author: str  # whose conversation holds it: "mara", "ben", or "other-tenant"
    method: ProvenanceMethod
    value: str = "prefers morning meetings"
    text: str = "I prefer morning meetings"
    review: bool = False


def _world() -> World:
    world = World()
    world.grant("mara", "globex")
    return world


CREATE: dict[str, tuple[Row, RevisionStatus | type[DomainError], str]] = {
    "own words, own memory": (
        Row("mara", MINE, Speaker.USER, "mara", USER_STATEMENT),
        RevisionStatus.ACTIVE, "",
    ),
    "own confirmation": (
        Row("mara", MINE, Speaker.USER, "mara", CONFIRMATION),
        RevisionStatus.ACTIVE, "",
    ),
    "inferred from own words": (
        Row("mara", MINE, Speaker.USER, "mara", INFERENCE),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "imported": (
        Row("mara", MINE, Speaker.USER, "mara", IMPORT),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "by rule": (
        Row("mara", MINE, Speaker.USER, "mara", RULE),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "assistant's words called a statement": (
        Row("mara", MINE, Speaker.ASSISTANT, "mara", USER_STATEMENT),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "a third party's words": (
        Row("mara", MINE, Speaker.THIRD_PARTY, "mara", USER_STATEMENT),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "a tool's output": (
        Row("mara", MINE, Speaker.TOOL, "mara", USER_STATEMENT),
        RevisionStatus.CANDIDATE, "not the subject's own statement",
    ),
    "own words kept for review": (
        Row("mara", MINE, Speaker.USER, "mara", USER_STATEMENT, review=True),
        RevisionStatus.CANDIDATE, "kept for review",
    ),
    "own words that do not say the value": (
        Row("mara", MINE, Speaker.USER, "mara", USER_STATEMENT, value="prefers evening calls"),
        RevisionStatus.CANDIDATE, "UNGROUNDED",
    ),
    "admin's own memory from another user's words": (
        Row("admin", MINE, Speaker.USER, "ben", USER_STATEMENT),
        RevisionStatus.CANDIDATE, "somebody else's words are not the subject's",
    ),
    "another user's memory": (
        Row("mara", BENS, Speaker.USER, "mara", USER_STATEMENT),
        PermissionDenied, "",
    ),
    "another user's memory, as admin": (
        Row("admin", BENS, Speaker.USER, "ben", USER_STATEMENT),
        PermissionDenied, "",
    ),
    "organization memory": (
        Row("mara", ORG, Speaker.USER, "mara", USER_STATEMENT),
        PermissionDenied, "",
    ),
    "organization memory, as admin": (
        Row("admin", ORG, Speaker.USER, "mara", USER_STATEMENT),
        RevisionStatus.ACTIVE, "",
    ),
    "customer memory, granted": (
        Row("mara", GRANTED, Speaker.USER, "mara", USER_STATEMENT),
        RevisionStatus.ACTIVE, "",
    ),
    "customer memory, not granted": (
        Row("mara", NOT_GRANTED, Speaker.USER, "mara", USER_STATEMENT),
        PermissionDenied, "",
    ),
    "customer memory, as admin": (
        Row("admin", NOT_GRANTED, Speaker.USER, "mara", USER_STATEMENT),
        RevisionStatus.ACTIVE, "",
    ),
    "evidence from another user's conversation": (
        Row("mara", MINE, Speaker.USER, "ben", USER_STATEMENT),
        InvalidArgument, "EVIDENCE_NOT_FOUND",
    ),
    "evidence from another tenant": (
        Row("mara", MINE, Speaker.USER, "other-tenant", USER_STATEMENT),
        InvalidArgument, "EVIDENCE_NOT_FOUND",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("row", "expected", "reason"), CREATE.values(), ids=CREATE.keys())
def test_create(row: Row, expected: RevisionStatus | type[DomainError], reason: str) -> None:
    world = _world()
    caller = world.who("mara", admin=row.caller == "admin")
    tenant = "other" if row.author == "other-tenant" else "acme"
    author = "mara" if row.author == "other-tenant" else row.author
    evidence = world.say(world.who(author, tenant=tenant), row.text, speaker=row.speaker)
    if isinstance(expected, RevisionStatus):
        _, revision = world.create(
            caller, evidence, row.value, scope=row.scope, method=row.method, review=row.review
        )
        assert revision.status is expected
        assert revision.status_reason.startswith(reason)
        return
    with pytest.raises(expected) as refused:
        world.create(caller, evidence, row.value, scope=row.scope, method=row.method)
    assert refused.value.reason.name == (reason or expected.reason.name)


@dataclass(frozen=True)
class Proposed:
    text: str = "I prefer morning meetings"
    value: str = "prefers morning meetings"
    speaker: Speaker = Speaker.USER
    scope: Scope = SELF  # the caller's own user memory
    caller: str = "mara"
    author: str = "mara"
    method: ProvenanceMethod = USER_STATEMENT
    existing: str = ""  # the memory's current value, said an hour before the proposal
    apply_user_corrections: bool = False
    said: float = 2.0  # hours after T0 the proposal's evidence was said (existing: 1.0)


PROPOSE: dict[str, tuple[Proposed, Decision, RevisionStatus | None, str]] = {
    "the user's own new statement": (
        Proposed(), Decision.CANDIDATE, RevisionStatus.CANDIDATE, "a new memory",
    ),
    "the assistant's suggestion": (
        Proposed(speaker=Speaker.ASSISTANT), Decision.CANDIDATE, RevisionStatus.CANDIDATE,
        "said by assistant",
    ),
    "a third party's words": (
        Proposed(speaker=Speaker.THIRD_PARTY), Decision.CANDIDATE, RevisionStatus.CANDIDATE,
        "said by third party",
    ),
    "a value its evidence does not say": (
        Proposed(value="prefers evening calls"), Decision.CANDIDATE, RevisionStatus.CANDIDATE,
        "UNGROUNDED",
    ),
    "one-off phrasing": (
        Proposed(text="Just for today, morning meetings please"), Decision.OVERRIDE, None,
        "one-off phrasing",
    ),
    "one-off phrasing by the assistant": (
        Proposed(text="Just for today, morning meetings", speaker=Speaker.ASSISTANT),
        Decision.CANDIDATE, RevisionStatus.CANDIDATE, "said by assistant",
    ),
    "a secret in the value": (
        Proposed(value="my password is hunter2-Xq9#zL"), Decision.REFUSED_SECRET, None,
        "contains a secret",
    ),
    "another user's memory": (
        Proposed(scope=Scope(ScopeType.USER, "ben")), Decision.REFUSED_SUBJECT, None,
        "user memory is only proposed for the caller",
    ),
    "admin, evidence from another user's conversation": (
        Proposed(caller="admin", author="ben"), Decision.REFUSED_SUBJECT, None,
        "the evidence comes from another user's conversation",
    ),
    "organization memory": (
        Proposed(scope=ORG), Decision.REFUSED_SUBJECT, None,
        "the caller may not write organization memory here",
    ),
    "organization memory, as admin": (
        Proposed(scope=ORG, caller="admin"), Decision.CANDIDATE, RevisionStatus.CANDIDATE,
        "a new memory",
    ),
    "customer memory, not granted": (
        Proposed(scope=NOT_GRANTED), Decision.REFUSED_SUBJECT, None,
        "the caller may not write customer memory here",
    ),
    "customer memory, granted": (
        Proposed(scope=GRANTED), Decision.CANDIDATE, RevisionStatus.CANDIDATE, "a new memory",
    ),
    "what the memory already says": (
        Proposed(existing="prefers morning meetings"), Decision.UNCHANGED, None,
        "revision 1 already says so",
    ),
    "the user's correction, kept for review": (
        Proposed(existing="prefers evening meetings"), Decision.CANDIDATE,
        RevisionStatus.CANDIDATE, "an explicit correction by the user",
    ),
    "the user's correction, applied by the tenant's setting": (
        Proposed(existing="prefers evening meetings", apply_user_corrections=True),
        Decision.APPLIED, RevisionStatus.ACTIVE, "an explicit correction by the user",
    ),
    "an inferred correction, even with the setting": (
        Proposed(
            existing="prefers evening meetings", apply_user_corrections=True, method=INFERENCE
        ),
        Decision.CANDIDATE, RevisionStatus.CANDIDATE, "a new memory",
    ),
    "evidence older than the memory's": (
        Proposed(existing="prefers evening meetings", said=0.5), Decision.REFUSED_STALE, None,
        "the evidence predates revision 1",
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("row", "decision", "status", "reason"), PROPOSE.values(), ids=PROPOSE.keys()
)
def test_propose(
    row: Proposed, decision: Decision, status: RevisionStatus | None, reason: str
) -> None:
    world = World(apply_user_corrections=row.apply_user_corrections)
    world.grant("mara", "globex")
    caller = world.who("mara", admin=row.caller == "admin")
    if row.existing:
        said = world.say(caller, f"I {row.existing.replace('prefers', 'prefer')}", when=at(1))
        world.create(caller, said, row.existing, scope=Scope(ScopeType.USER, "mara"))
    evidence = world.say(world.who(row.author), row.text, speaker=row.speaker, when=at(row.said))
    outcome = world.propose(
        caller, evidence, row.value, scope=row.scope, method=row.method, now=at(3)
    )
    assert outcome.decision is decision, outcome.reason
    assert outcome.reason.startswith(reason), outcome.reason
    assert (outcome.revision.status if outcome.revision else None) is status
    assert (outcome.override is not None) is (decision is Decision.OVERRIDE)
