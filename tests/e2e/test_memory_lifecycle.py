"""Create, read, list (filters and pagination), list revisions and delete memories; transcripts."""

from __future__ import annotations

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2, transcript_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    CANDIDATE,
    DELETED,
    FACT,
    MEMORY_NAME,
    MESSAGE_NAME,
    PREFERENCE,
    SCOPE_USER,
    USER,
    USER_STATEMENT,
    append,
    correct,
    create_memory,
    create_pref,
    delete,
    expect_error,
    get,
    list_all,
    list_page,
    names,
    new_conversation,
    now,
    revision_name,
    revisions,
    say,
    to_dt,
)
from tests.support.servers import Client

pytestmark = pytest.mark.timeout(120)


def test_create_returns_the_memory_and_its_first_revision(alice: Client) -> None:
    conversation = new_conversation()
    message = append(alice, conversation, "I prefer morning meetings", USER)
    before = now()
    reply = create_memory(
        alice,
        "meeting_time",
        "prefers morning meetings",
        key_context="work",
        evidence=message.name,
    )
    after = now()
    memory, revision = reply.memory, reply.revision

    assert MEMORY_NAME.match(memory.name), memory.name
    assert memory.scope.type == SCOPE_USER
    assert memory.scope.id == "alice", "an empty user scope id means the caller"
    assert (memory.key, memory.key_context, memory.kind) == ("meeting_time", "work", PREFERENCE)
    assert memory.etag
    assert memory.HasField("create_time")
    assert memory.HasField("update_time")
    assert before.timestamp() - 1 <= to_dt(memory.create_time).timestamp() <= after.timestamp() + 1
    assert not memory.HasField("delete_time")

    assert revision.name == revision_name(memory.name, 1)
    assert revision.revision_number == 1
    assert revision.value == "prefers morning meetings"
    assert revision.state == ACTIVE
    assert revision.replaces_revision_number == 0
    assert revision.superseded_by_revision_number == 0
    assert not revision.HasField("valid_from"), "unset valid_from on create means an open start"
    assert not revision.HasField("valid_until")
    assert not revision.HasField("superseded_from")
    assert not revision.HasField("confirmation")
    assert not revision.inferred
    assert revision.author_user_id == "alice"
    assert revision.HasField("create_time")
    assert revision.provenance.transcript_message == message.name
    assert revision.provenance.method == USER_STATEMENT
    assert revision.provenance.speaker == USER

    assert memory.latest_revision == revision
    assert memory.applicable_revision.name == revision.name
    assert memory.applicable_revision.value == revision.value


def test_get_returns_what_create_stored(alice: Client) -> None:
    created = create_pref(alice, "meeting_time", "mornings, before ten")
    fetched = get(alice, created.name)
    assert fetched.name == created.name
    assert fetched.etag == created.etag
    assert fetched.scope == created.scope
    assert (fetched.key, fetched.key_context, fetched.kind) == (
        created.key,
        created.key_context,
        created.kind,
    )
    assert fetched.applicable_revision.name == revision_name(created.name, 1)
    assert fetched.applicable_revision.value == "mornings, before ten"
    assert fetched.latest_revision.name == revision_name(created.name, 1)
    assert fetched.create_time == created.create_time


def test_get_missing_memory_is_not_found(alice: Client) -> None:
    expect_error(lambda: get(alice, "memories/" + "0" * 32), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")


def test_value_of_exactly_4000_characters_is_accepted(alice: Client) -> None:
    value = "m" * 4000
    conversation = new_conversation()
    evidence = say(alice, conversation, value)
    memory = create_pref(alice, "long_note", value, evidence=evidence)
    assert get(alice, memory.name).applicable_revision.value == value


@pytest.mark.parametrize("char", ["é", "😀"], ids=["two_byte", "four_byte"])
def test_value_limit_counts_characters_not_bytes(alice: Client, char: str) -> None:
    memory = create_pref(alice, "note", char * 4000, evidence=say(alice, None, char * 4000))
    assert get(alice, memory.name).applicable_revision.value == char * 4000
    expect_error(
        lambda: create_pref(alice, "note_2", char * 4001, evidence=say(alice, None, "a note")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
        "revision.value",
    )


def test_key_alphabet_boundaries_are_accepted(alice: Client) -> None:
    for key in ["a", "a" * 128, "x0_.-z", "meeting_time.work-hours"]:
        memory = create_pref(alice, key, f"value for {key[:20]}", key_context="ctx_1.b-2")
        assert memory.key == key


def test_duplicate_live_key_is_already_exists(alice: Client) -> None:
    first = create_pref(alice, "meeting_time", "mornings")
    info = expect_error(
        lambda: create_pref(alice, "meeting_time", "afternoons"),
        grpc.StatusCode.ALREADY_EXISTS,
        "MEMORY_EXISTS",
    )
    assert info.metadata.get("memory") == first.name
    assert len(list_all(alice, key="meeting_time")) == 1

    # The same key under another context, or of another user, is a different memory.
    other_context = create_pref(alice, "meeting_time", "afternoons", key_context="personal")
    assert other_context.name != first.name
    # Kind is not part of the identity: same scope, key and context still collide.
    expect_error(
        lambda: create_pref(alice, "meeting_time", "a fact now", kind=FACT),
        grpc.StatusCode.ALREADY_EXISTS,
        "MEMORY_EXISTS",
    )


def test_same_key_for_two_users_are_two_memories(alice: Client, bob: Client) -> None:
    a = create_pref(alice, "meeting_time", "mornings")
    b = create_pref(bob, "meeting_time", "afternoons")
    assert a.name != b.name
    assert b.scope.id == "bob"
    assert get(bob, b.name).applicable_revision.value == "afternoons"


def _preference_fact_and_candidate(alice: Client) -> tuple[memory_pb2.Memory, ...]:
    """An active preference, an active fact and an assistant's candidate, in that order."""
    pref = create_pref(alice, "meeting_time", "Prefers MORNING meetings")
    fact = create_pref(alice, "project_owner", "Sam owns Project Alpha", kind=FACT)
    candidate = create_pref(
        alice,
        "lunch",
        "Would you like lunch at noon?",
        speaker=ASSISTANT,
        method=ASSISTANT_INFERENCE,
    )
    return pref, fact, candidate


def test_list_filters(alice: Client) -> None:
    pref, fact, candidate = _preference_fact_and_candidate(alice)

    assert names(list_all(alice)) == [pref.name, fact.name, candidate.name], "creation order"
    assert names(list_all(alice, key="meeting_time")) == [pref.name]
    assert names(list_all(alice, kind=FACT)) == [fact.name]
    assert names(list_all(alice, kind=PREFERENCE)) == [pref.name, candidate.name]
    assert names(list_all(alice, scope_type=SCOPE_USER)) == [pref.name, fact.name, candidate.name]
    assert names(list_all(alice, scope_type=SCOPE_USER, scope_id="alice")) == [
        pref.name,
        fact.name,
        candidate.name,
    ]
    assert names(list_all(alice, revision_state=ACTIVE)) == [pref.name, fact.name]
    assert names(list_all(alice, revision_state=CANDIDATE)) == [candidate.name]
    assert names(list_all(alice, kind=PREFERENCE, revision_state=ACTIVE)) == [pref.name]


def test_list_filter_value_contains(alice: Client) -> None:
    pref, fact, candidate = _preference_fact_and_candidate(alice)
    assert names(list_all(alice, value_contains="morning")) == [pref.name], "case-insensitive"
    assert names(list_all(alice, value_contains="project alpha")) == [fact.name]
    assert names(list_all(alice, value_contains="nothing like this")) == []
    # A candidate has no applicable revision, but its newest revision is searched.
    assert names(list_all(alice, value_contains="LUNCH")) == [candidate.name]
    corrected = correct(alice, pref, "Prefers afternoon meetings").memory
    assert names(list_all(alice, value_contains="afternoon")) == [corrected.name]
    assert names(list_all(alice, value_contains="morning")) == []


def test_list_pagination_walks_every_memory_once_in_creation_order(alice: Client) -> None:
    conversation = new_conversation()
    created = [
        create_pref(alice, f"note_{i}", f"note number {i}", conversation=conversation).name
        for i in range(7)
    ]
    seen: list[str] = []
    token = ""
    sizes = []
    for _ in range(10):
        page = list_page(alice, page_size=3, page_token=token)
        sizes.append(len(page.memories))
        seen.extend(names(page.memories))
        token = page.next_page_token
        if not token:
            break
    assert sizes == [3, 3, 1]
    assert seen == created

    # 0 means the default page size (50): everything fits on one page.
    whole = list_page(alice, page_size=0)
    assert names(whole.memories) == created
    assert whole.next_page_token == ""

    # Above the maximum (1,000) the page size is coerced, not refused (AIP-158).
    assert names(list_page(alice, page_size=5000).memories) == created

    # A page size larger than what is left ends the walk with an empty token.
    exact = list_page(alice, page_size=7)
    assert names(exact.memories) == created
    assert list_all(alice, page_size=1) == list_all(alice, page_size=1000)


def test_list_pagination_with_filters_keeps_the_filter(alice: Client) -> None:
    conversation = new_conversation()
    facts = []
    for i in range(5):
        create_pref(alice, f"pref_{i}", f"pref {i}", conversation=conversation)
        facts.append(
            create_pref(alice, f"fact_{i}", f"fact {i}", kind=FACT, conversation=conversation).name
        )
    assert names(list_all(alice, kind=FACT, page_size=2)) == facts


def test_list_revisions_pagination(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "v1")
    for i in range(2, 6):
        memory = correct(alice, memory, f"v{i}").memory
    all_at_once = revisions(alice, memory.name)
    assert [r.revision_number for r in all_at_once] == [1, 2, 3, 4, 5]
    assert [r.value for r in all_at_once] == ["v1", "v2", "v3", "v4", "v5"]
    assert revisions(alice, memory.name, page_size=2) == all_at_once


def test_list_revisions_of_missing_memory_is_not_found(alice: Client) -> None:
    expect_error(
        lambda: revisions(alice, "memories/" + "f" * 32), grpc.StatusCode.NOT_FOUND, "NOT_FOUND"
    )


def test_delete_purges_text_and_leaves_a_tombstone(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "secret morning routine")
    memory = correct(alice, memory, "secret afternoon routine").memory
    keep = create_pref(alice, "lunch", "noon")

    reply = delete(alice, memory.name)
    assert reply.memory.name == memory.name
    assert reply.memory.HasField("delete_time")
    assert reply.purged_revision_count == 2
    assert reply.memory.etag != memory.etag
    assert "secret" not in str(reply)

    expect_error(lambda: get(alice, memory.name), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    assert names(list_all(alice)) == [keep.name]

    shown = list_all(alice, show_deleted=True)
    assert names(shown) == [memory.name, keep.name]
    tomb = shown[0]
    assert tomb.HasField("delete_time")
    assert not tomb.HasField("applicable_revision")
    assert tomb.latest_revision.value == ""
    assert tomb.latest_revision.state == DELETED
    assert "secret" not in str(shown)
    assert names(list_all(alice, show_deleted=True, revision_state=ACTIVE)) == [keep.name]


def test_deleted_memory_cannot_be_deleted_or_corrected_again(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    delete(alice, memory.name)
    expect_error(lambda: delete(alice, memory.name), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    expect_error(
        lambda: correct(alice, memory, "afternoons"),
        [grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION],
        ["NOT_FOUND", "MEMORY_DELETED"],
    )
    assert names(list_all(alice)) == []


def test_key_is_free_again_after_delete(alice: Client) -> None:
    old = create_pref(alice, "meeting_time", "mornings")
    delete(alice, old.name)
    new = create_pref(alice, "meeting_time", "afternoons")
    assert new.name != old.name
    assert get(alice, new.name).applicable_revision.value == "afternoons"
    assert names(list_all(alice)) == [new.name]
    assert names(list_all(alice, show_deleted=True)) == [old.name, new.name]


def test_transcript_append_and_list(alice: Client) -> None:
    conversation = new_conversation()
    first = append(alice, conversation, "hello", USER)
    second = append(alice, conversation, "Hi! How can I help?", ASSISTANT)
    failed = alice.transcript.AppendMessage(
        transcript_service_pb2.AppendMessageRequest(
            parent=conversation,
            message=transcript_service_pb2.Message(
                speaker=USER, text="book it", status=transcript_service_pb2.TURN_STATUS_FAILED
            ),
        ),
        timeout=10,
    ).message

    for message in (first, second, failed):
        assert MESSAGE_NAME.match(message.name), message.name
        assert message.name.startswith(conversation + "/messages/")
        assert message.author_user_id == "alice"
        assert message.HasField("create_time")
    assert [first.sequence, second.sequence, failed.sequence] == [1, 2, 3]
    assert failed.status == transcript_service_pb2.TURN_STATUS_FAILED

    listed = alice.transcript.ListMessages(
        transcript_service_pb2.ListMessagesRequest(parent=conversation), timeout=10
    ).messages
    assert [m.name for m in listed] == [first.name, second.name, failed.name]
    assert [m.text for m in listed] == ["hello", "Hi! How can I help?", "book it"]
    assert [m.speaker for m in listed] == [USER, ASSISTANT, USER]

    page = alice.transcript.ListMessages(
        transcript_service_pb2.ListMessagesRequest(parent=conversation, page_size=2), timeout=10
    )
    assert [m.name for m in page.messages] == [first.name, second.name]
    assert page.next_page_token
    rest = alice.transcript.ListMessages(
        transcript_service_pb2.ListMessagesRequest(
            parent=conversation, page_size=2, page_token=page.next_page_token
        ),
        timeout=10,
    )
    assert [m.name for m in rest.messages] == [failed.name]
    assert rest.next_page_token == ""


def test_list_messages_of_unknown_conversation_is_not_found(alice: Client) -> None:
    expect_error(
        lambda: alice.transcript.ListMessages(
            transcript_service_pb2.ListMessagesRequest(parent=new_conversation()), timeout=10
        ),
        grpc.StatusCode.NOT_FOUND,
        "NOT_FOUND",
    )
