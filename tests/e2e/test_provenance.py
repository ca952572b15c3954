"""Provenance is evidence (I5), A11, candidates and their confirmation or rejection."""

from __future__ import annotations

import uuid

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    CANDIDATE,
    IMPORT,
    NO_SPEAKER,
    REJECTED,
    RULE,
    SUPERSEDED,
    THIRD_PARTY,
    TOOL,
    USER,
    USER_CONFIRMATION,
    USER_STATEMENT,
    append,
    confirm,
    correct,
    create_memory,
    create_pref,
    expect_error,
    get,
    list_all,
    messages,
    names,
    new_conversation,
    not_found_signature,
    now,
    provenance,
    reject,
    revision_name,
    revisions,
    say,
    to_dt,
)
from tests.support.servers import Client

pytestmark = pytest.mark.timeout(120)


STATE_TABLE = [
    (USER, USER_STATEMENT, ACTIVE),
    (USER, USER_CONFIRMATION, ACTIVE),
    (USER, ASSISTANT_INFERENCE, CANDIDATE),
    (USER, IMPORT, CANDIDATE),
    (USER, RULE, CANDIDATE),
    (ASSISTANT, USER_STATEMENT, CANDIDATE),
    (ASSISTANT, USER_CONFIRMATION, CANDIDATE),
    (ASSISTANT, ASSISTANT_INFERENCE, CANDIDATE),
    (THIRD_PARTY, USER_STATEMENT, CANDIDATE),
    (THIRD_PARTY, USER_CONFIRMATION, CANDIDATE),
    (TOOL, USER_STATEMENT, CANDIDATE),
]


@pytest.mark.parametrize(
    ("speaker", "method", "expected"),
    [
        pytest.param(
            speaker,
            method,
            expected,
            id=f"{memory_pb2.Speaker.Name(speaker)}-{memory_pb2.ProvenanceMethod.Name(method)}",
        )
        for speaker, method, expected in STATE_TABLE
    ],
)
def test_state_on_create_follows_method_and_evidence_speaker(
    alice: Client, speaker: int, method: int, expected: int
) -> None:
    reply = create_memory(alice, "meeting_time", "mornings", speaker=speaker, method=method)
    revision = reply.revision
    assert revision.state == expected
    assert revision.provenance.speaker == speaker, "an unset speaker is read from the evidence"
    assert revision.provenance.method == method
    if expected == ACTIVE:
        assert not revision.inferred
        assert reply.memory.applicable_revision.name == revision.name
        assert names(list_all(alice, revision_state=ACTIVE)) == [reply.memory.name]
    else:
        assert revision.inferred
        assert not revision.HasField("confirmation")
        assert not reply.memory.HasField("applicable_revision")
        assert not get(alice, reply.memory.name).HasField("applicable_revision")
        assert names(list_all(alice, revision_state=ACTIVE)) == []
        assert names(list_all(alice, revision_state=CANDIDATE)) == [reply.memory.name]


def test_a11_suggestion_and_quoted_colleague_are_not_the_users_preferences(alice: Client) -> None:
    conversation = new_conversation()
    suggestion = append(
        alice,
        conversation,
        "Would you like me to schedule your meetings in the morning?",
        ASSISTANT,
    )
    colleague = append(alice, conversation, "My colleague Dana only does mornings", THIRD_PARTY)

    from_suggestion = create_memory(
        alice,
        "meeting_time",
        "prefers morning meetings",
        key_context="work",
        evidence=provenance(suggestion.name, ASSISTANT_INFERENCE, speaker=ASSISTANT),
    )
    from_colleague = create_memory(
        alice,
        "meeting_time",
        "prefers morning meetings",
        key_context="team",
        evidence=provenance(colleague.name, USER_STATEMENT, quote="only does mornings"),
    )

    for reply in (from_suggestion, from_colleague):
        assert reply.revision.state == CANDIDATE
        assert reply.revision.inferred
        assert not reply.memory.HasField("applicable_revision")
        assert not get(alice, reply.memory.name).HasField("applicable_revision")
    assert from_colleague.revision.provenance.speaker == THIRD_PARTY
    assert from_colleague.revision.provenance.quote == "only does mornings"

    assert list_all(alice, revision_state=ACTIVE) == []
    assert names(list_all(alice, revision_state=CANDIDATE)) == [
        from_suggestion.memory.name,
        from_colleague.memory.name,
    ]


def test_user_statement_resting_on_assistant_words(alice: Client) -> None:
    suggestion = say(alice, None, "Would you like morning meetings?", ASSISTANT)
    # Claiming the user said it, when the evidence shows the assistant did, is refused.
    expect_error(
        lambda: create_memory(
            alice,
            "meeting_time",
            "mornings",
            evidence=provenance(suggestion, USER_STATEMENT, speaker=USER),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "SPEAKER_MISMATCH",
    )
    assert list_all(alice) == []
    # Without a claimed speaker it is read from the evidence and stays a candidate.
    reply = create_memory(
        alice,
        "meeting_time",
        "mornings",
        evidence=provenance(suggestion, USER_STATEMENT, speaker=NO_SPEAKER),
    )
    assert reply.revision.provenance.speaker == ASSISTANT
    assert reply.revision.state == CANDIDATE
    assert reply.revision.inferred


def test_speaker_mismatch_the_other_way_round(alice: Client) -> None:
    mine = say(alice, None, "I prefer mornings", USER)
    for claimed in (ASSISTANT, THIRD_PARTY):
        expect_error(
            lambda claimed=claimed: create_memory(
                alice,
                "meeting_time",
                "mornings",
                evidence=provenance(mine, USER_STATEMENT, speaker=claimed),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "SPEAKER_MISMATCH",
        )
    # The matching speaker, stated explicitly, is fine.
    reply = create_memory(
        alice,
        "meeting_time",
        "mornings",
        evidence=provenance(mine, USER_STATEMENT, speaker=USER),
    )
    assert reply.revision.state == ACTIVE


def test_quote_must_occur_in_the_evidence(alice: Client) -> None:
    message = say(alice, None, "Honestly,   I PREFER\tmorning meetings these days")
    expect_error(
        lambda: create_memory(
            alice,
            "meeting_time",
            "afternoons",
            evidence=provenance(message, quote="I prefer afternoon meetings"),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "QUOTE_NOT_IN_EVIDENCE",
    )
    assert list_all(alice) == []
    # Case and runs of white space do not matter.
    reply = create_memory(
        alice,
        "meeting_time",
        "mornings",
        evidence=provenance(message, quote="i prefer morning  meetings"),
    )
    assert reply.revision.provenance.quote == "i prefer morning  meetings"
    assert reply.revision.state == ACTIVE


def test_quote_is_checked_on_correction_too(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    message = say(alice, None, "Afternoons work better now")
    expect_error(
        lambda: correct(
            alice, memory, "evenings", evidence=provenance(message, quote="evenings are best")
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "QUOTE_NOT_IN_EVIDENCE",
    )
    assert len(revisions(alice, memory.name)) == 1


def test_evidence_must_resolve(alice: Client) -> None:
    conversation = new_conversation()
    real = append(alice, conversation, "I prefer mornings", USER)
    missing_in_known_conversation = f"{conversation}/messages/{uuid.uuid4().hex}"
    missing_conversation = f"{new_conversation()}/messages/{real.name.rsplit('/', 1)[1]}"
    for evidence in (missing_in_known_conversation, missing_conversation):
        expect_error(
            lambda evidence=evidence: create_memory(
                alice, "meeting_time", "mornings", evidence=evidence
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "EVIDENCE_NOT_FOUND",
        )
    memory = create_pref(alice, "meeting_time", "mornings", evidence=real.name)
    expect_error(
        lambda: correct(alice, memory, "evenings", evidence=missing_in_known_conversation),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )
    assert names(list_all(alice)) == [memory.name]


def test_another_users_conversation_is_not_evidence(alice: Client, bob: Client) -> None:
    conversation = new_conversation()
    alices_words = append(alice, conversation, "I prefer mornings", USER)

    # Bob cannot use Alice's message or read her conversation.
    expect_error(
        lambda: create_memory(bob, "meeting_time", "mornings", evidence=alices_words.name),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )
    expect_error(lambda: messages(bob, conversation), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    assert list_all(bob) == []
    # ...and that fails exactly as it does for a conversation that does not exist.
    missing = new_conversation()
    assert not_found_signature(
        lambda: messages(bob, conversation), conversation
    ) == not_found_signature(lambda: messages(bob, missing), missing)
    # Ids are per user: appending to the same id gives Bob a conversation of his own.
    bobs_words = append(bob, conversation, "I prefer evenings", USER)
    assert bobs_words.sequence == 1
    assert [m.text for m in messages(bob, conversation)] == ["I prefer evenings"]
    assert [m.text for m in messages(alice, conversation)] == ["I prefer mornings"]
    missing_message = f"{missing}/messages/{uuid.uuid4().hex}"
    foreign_info = expect_error(
        lambda: create_memory(bob, "meeting_time", "x", evidence=alices_words.name),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )
    missing_info = expect_error(
        lambda: create_memory(bob, "meeting_time", "x", evidence=missing_message),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )
    assert foreign_info.fields == missing_info.fields
    assert foreign_info.message.replace(alices_words.name, "<m>") == missing_info.message.replace(
        missing_message, "<m>"
    )
    # Alice's conversation is untouched.
    assert [m.name for m in messages(alice, conversation)] == [alices_words.name]


def test_assistant_correction_does_not_override_the_users_preference(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    suggestion = say(alice, None, "Shall I move your meetings to the afternoon?", ASSISTANT)
    corrected = correct(
        alice, memory, "afternoons", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    assert corrected.revision.state == CANDIDATE
    assert corrected.revision.inferred
    assert corrected.revision.replaces_revision_number == 1
    assert corrected.memory.applicable_revision.revision_number == 1

    now_view = get(alice, memory.name)
    assert now_view.applicable_revision.value == "mornings"
    assert now_view.latest_revision.revision_number == 2
    rev1, rev2 = revisions(alice, memory.name)
    assert (rev1.state, rev2.state) == (ACTIVE, CANDIDATE)
    assert rev1.superseded_by_revision_number == 0
    assert not rev1.HasField("superseded_from")

    # The user confirms: now the suggestion applies, and is marked as confirmed.
    before = now()
    confirmed = confirm(alice, rev2.name)
    assert confirmed.revision.name == rev2.name
    assert confirmed.revision.state == ACTIVE
    assert confirmed.revision.confirmation.user_id == "alice"
    assert to_dt(confirmed.revision.confirmation.confirm_time).timestamp() >= (
        before.timestamp() - 1
    )
    assert confirmed.memory.applicable_revision.name == rev2.name
    assert get(alice, memory.name).applicable_revision.value == "afternoons"
    rev1, rev2 = revisions(alice, memory.name)
    assert rev1.state == SUPERSEDED
    assert rev1.superseded_by_revision_number == 2
    assert rev2.confirmation.user_id == "alice"


def test_confirm_candidate_memory(alice: Client) -> None:
    suggestion = say(alice, None, "Would you like mornings?", ASSISTANT)
    created = create_memory(
        alice, "meeting_time", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    confirmed = confirm(alice, created.revision.name)
    assert confirmed.revision.state == ACTIVE
    assert confirmed.revision.confirmation.user_id == "alice"
    assert confirmed.revision.confirmation.HasField("confirm_time")
    assert confirmed.memory.applicable_revision.name == created.revision.name
    assert confirmed.memory.etag != created.memory.etag
    assert names(list_all(alice, revision_state=ACTIVE)) == [created.memory.name]
    # A directly stated memory carries no confirmation: the two are marked differently.
    stated = create_memory(alice, "lunch_time", "noon")
    assert not stated.revision.HasField("confirmation")

    # Confirming again is a precondition failure.
    expect_error(
        lambda: confirm(alice, created.revision.name),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_CANDIDATE",
    )
    expect_error(
        lambda: confirm(alice, stated.revision.name),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_CANDIDATE",
    )


def test_reject_candidate(alice: Client) -> None:
    suggestion = say(alice, None, "Would you like mornings?", ASSISTANT)
    created = create_memory(
        alice, "meeting_time", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    rejected = reject(alice, created.revision.name)
    assert rejected.revision.state == REJECTED
    assert not rejected.memory.HasField("applicable_revision")
    assert [r.state for r in revisions(alice, created.memory.name)] == [REJECTED]
    assert list_all(alice, revision_state=ACTIVE) == []
    assert names(list_all(alice, revision_state=REJECTED)) == [created.memory.name]
    expect_error(
        lambda: confirm(alice, created.revision.name),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_CANDIDATE",
    )
    expect_error(
        lambda: reject(alice, created.revision.name),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_CANDIDATE",
    )


def test_only_the_subject_confirms(alice: Client, bob: Client, carol: Client) -> None:
    suggestion = say(alice, None, "Would you like mornings?", ASSISTANT)
    created = create_memory(
        alice, "meeting_time", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    for stranger in (bob, carol):
        for call in (confirm, reject):
            expect_error(
                lambda call=call, stranger=stranger: call(stranger, created.revision.name),
                grpc.StatusCode.NOT_FOUND,
                "NOT_FOUND",
            )
    assert [r.state for r in revisions(alice, created.memory.name)] == [CANDIDATE]


def test_confirmation_evidence_must_be_the_confirmers_own(alice: Client, bob: Client) -> None:
    suggestion = say(alice, None, "Would you like mornings?", ASSISTANT)
    created = create_memory(
        alice, "meeting_time", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    bobs_words = say(bob, None, "Yes, mornings")
    nowhere = f"{new_conversation()}/messages/{uuid.uuid4().hex}"
    for evidence in (bobs_words, nowhere):
        expect_error(
            lambda evidence=evidence: confirm(
                alice, created.revision.name, transcript_message=evidence
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "EVIDENCE_NOT_FOUND",
        )
    assert [r.state for r in revisions(alice, created.memory.name)] == [CANDIDATE]
    yes = say(alice, None, "Yes, mornings please")
    confirmed = confirm(alice, created.revision.name, transcript_message=yes)
    assert confirmed.revision.state == ACTIVE
    assert confirmed.revision.confirmation.user_id == "alice"


def test_confirm_missing_revision_is_not_found(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    expect_error(
        lambda: confirm(alice, revision_name(memory.name, 99)),
        grpc.StatusCode.NOT_FOUND,
        "NOT_FOUND",
    )
