"""Authority: whose words make a memory ACTIVE at once, and whom a memory is about."""

from __future__ import annotations

import pytest

from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    Provenance,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)
from memory_service.memories.domain import authority

EVIDENCE = EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, "conversations/c/messages/m")
MARA = Identity("t", "mara", frozenset())
MARAS = Scope(ScopeType.USER, "mara")
SAID = "I prefer morning meetings"


def provenance(speaker: Speaker, method: ProvenanceMethod, quote: str = "") -> Provenance:
    return Provenance(speaker, method, EVIDENCE, quote)


def status(
    prov: Provenance, scope: Scope = MARAS, author: str = "mara", **kw: bool
) -> tuple[RevisionStatus, str]:
    return authority.initial_status(scope, prov, author, SAID, "morning meetings", **kw)


def test_the_subjects_own_grounded_statement_is_active_at_once() -> None:
    for method in authority.OWN_WORDS:
        assert status(provenance(Speaker.USER, method)) == (RevisionStatus.ACTIVE, "")


@pytest.mark.parametrize("speaker", [Speaker.ASSISTANT, Speaker.THIRD_PARTY, Speaker.TOOL])
def test_anybody_elses_words_wait_for_the_subject(speaker: Speaker) -> None:
    assert status(provenance(speaker, ProvenanceMethod.USER_STATEMENT)) == (
        RevisionStatus.CANDIDATE,
        "not the subject's own statement",
    )


@pytest.mark.parametrize(
    "method",
    [ProvenanceMethod.ASSISTANT_INFERENCE, ProvenanceMethod.IMPORT, ProvenanceMethod.RULE],
)
def test_inference_imports_and_rules_wait_even_in_the_users_voice(
    method: ProvenanceMethod,
) -> None:
    prov = provenance(Speaker.USER, method)
    assert status(prov)[0] is RevisionStatus.CANDIDATE
    assert authority.inferred(prov)


def test_a_user_speaking_in_somebody_elses_conversation_is_not_the_subject() -> None:
    prov = provenance(Speaker.USER, ProvenanceMethod.USER_STATEMENT)
    assert status(prov, author="admin") == (
        RevisionStatus.CANDIDATE,
        "somebody else's words are not the subject's",
    )
    # Customer and organization memory have no user subject: the user's statement stands.
    assert status(prov, Scope(ScopeType.CUSTOMER, "acme"), author="admin")[0] is (
        RevisionStatus.ACTIVE
    )


def test_ungrounded_or_reviewed_words_stay_candidates() -> None:
    prov = provenance(Speaker.USER, ProvenanceMethod.USER_STATEMENT)
    reason = authority.initial_status(MARAS, prov, "mara", SAID, "evening meetings")[1]
    assert reason.startswith("UNGROUNDED:")
    assert status(prov, review=True) == (RevisionStatus.CANDIDATE, "kept for review")


def test_the_own_words_rule_is_the_same_for_status_inference_and_staleness() -> None:
    for speaker in Speaker:
        for method in ProvenanceMethod:
            prov = provenance(speaker, method)
            own = not authority.subjects_own_words(prov, MARAS, "mara")
            assert own is (status(prov)[0] is RevisionStatus.ACTIVE)
            assert own is not authority.inferred(prov)


def test_user_memory_without_a_subject_is_the_callers() -> None:
    assert authority.default_subject(Scope(ScopeType.USER, ""), MARA) == MARAS
    assert authority.default_subject(Scope(ScopeType.USER, "kim"), MARA) == Scope(
        ScopeType.USER, "kim"
    )
    assert authority.default_subject(Scope(ScopeType.ORGANIZATION, ""), MARA) == Scope(
        ScopeType.ORGANIZATION, ""
    )
    assert authority.own_memory(MARA) == MARAS
