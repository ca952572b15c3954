"""Etags (I3, A5) and request ids (I4, A7)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2, memory_service_pb2, transcript_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    CANDIDATE,
    REJECTED,
    USER,
    confirm,
    correct,
    create_memory,
    create_pref,
    delete,
    draft,
    error_info,
    expect_error,
    get,
    list_all,
    memory_spec,
    messages,
    names,
    new_conversation,
    reject,
    request_id,
    revision_name,
    revisions,
    say,
)
from tests.support.servers import Client, ServerProcess

pytestmark = pytest.mark.timeout(120)


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at the same moment on threads; each result is a reply or the RpcError."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except grpc.RpcError as err:
            results[i] = err

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


# --------------------------------------------------------------------------- etags


def test_etag_changes_on_every_write(alice: Client) -> None:
    etags = []
    memory = create_pref(alice, "meeting_time", "mornings")
    etags.append(memory.etag)
    assert get(alice, memory.name).etag == memory.etag, "a read does not change the etag"

    memory = correct(alice, memory, "afternoons").memory
    etags.append(memory.etag)
    assert get(alice, memory.name).etag == memory.etag

    suggestion = say(alice, None, "Shall I book evenings?", ASSISTANT)
    memory = correct(alice, memory, "evenings", evidence=suggestion, method=ASSISTANT_INFERENCE)
    memory = memory.memory
    etags.append(memory.etag)

    memory = confirm(alice, revision_name(memory.name, 3)).memory
    etags.append(memory.etag)

    memory = correct(alice, memory, "nights", evidence=suggestion, method=ASSISTANT_INFERENCE)
    memory = memory.memory
    etags.append(memory.etag)
    memory = reject(alice, revision_name(memory.name, 4)).memory
    etags.append(memory.etag)

    deleted = delete(alice, memory.name).memory
    etags.append(deleted.etag)
    assert len(set(etags)) == len(etags), etags


def test_stale_etag_is_aborted_with_the_current_revision(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    current = correct(alice, memory, "afternoons").memory

    info = expect_error(
        lambda: correct(alice, memory, "evenings"),  # memory.etag is the stale one
        grpc.StatusCode.ABORTED,
        "ETAG_MISMATCH",
    )
    assert info.metadata["current_etag"] == current.etag
    assert info.metadata["current_revision"] == revision_name(memory.name, 2)
    [packed] = info.unpack(memory_pb2.Memory)
    assert packed.name == memory.name
    assert packed.etag == current.etag
    assert packed.latest_revision.revision_number == 2
    assert packed.applicable_revision.value == "afternoons"

    # Nothing was written.
    assert [r.value for r in revisions(alice, memory.name)] == ["mornings", "afternoons"]
    assert get(alice, memory.name).etag == current.etag


def test_etags_are_quoted_and_the_bare_form_is_still_accepted(alice: Client) -> None:
    """AIP-154 etags are quoted strings; a client holding an etag issued before (`v1`) keeps
    working: a fresh bare etag writes, a stale one is ABORTED with the quoted current etag."""
    memory = create_pref(alice, "meeting_time", "mornings")
    assert re.fullmatch(r'"v[1-9][0-9]*"', memory.etag), memory.etag
    assert get(alice, memory.name).etag == memory.etag
    bare = memory.etag.strip('"')

    current = correct(alice, memory, "afternoons", etag=bare).memory
    assert re.fullmatch(r'"v[1-9][0-9]*"', current.etag), current.etag
    assert current.etag != memory.etag

    info = expect_error(
        lambda: correct(alice, memory, "evenings", etag=bare),
        grpc.StatusCode.ABORTED,
        "ETAG_MISMATCH",
    )
    assert info.metadata["current_etag"] == current.etag
    for malformed in (f"W/{current.etag}", f"'{bare}'", current.etag[:-1]):
        expect_error(
            lambda etag=malformed: delete(alice, memory.name, etag=etag),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
            field="etag",
        )
    assert delete(alice, memory.name, etag=current.etag.strip('"')).memory.delete_time.seconds


def test_stale_etag_on_confirm_reject_and_delete_is_aborted(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    stale = memory.etag
    suggestion = say(alice, None, "Shall I book late mornings instead?", ASSISTANT)
    memory = correct(
        alice, memory, "late mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    ).memory
    assert memory.etag != stale

    for call in (
        lambda: confirm(alice, revision_name(memory.name, 2), etag=stale),
        lambda: reject(alice, revision_name(memory.name, 2), etag=stale),
        lambda: delete(alice, memory.name, etag=stale),
    ):
        info = expect_error(call, grpc.StatusCode.ABORTED, "ETAG_MISMATCH")
        assert info.metadata["current_etag"] == memory.etag
    assert [r.state for r in revisions(alice, memory.name)] == [ACTIVE, CANDIDATE]

    # With the current etag the same calls go through.
    confirmed = confirm(alice, revision_name(memory.name, 2), etag=memory.etag)
    assert confirmed.revision.state == ACTIVE
    deleted = delete(alice, memory.name, etag=confirmed.memory.etag)
    assert deleted.memory.HasField("delete_time")


def test_a5_two_devices_correct_from_the_same_revision(alice: Client, alice_phone: Client) -> None:
    for round_ in range(3):
        memory = create_pref(alice, f"meeting_time_{round_}", "mornings")
        laptop_view = get(alice, memory.name)
        phone_view = get(alice_phone, memory.name)
        assert laptop_view.etag == phone_view.etag
        laptop_evidence = say(alice, None, "afternoons please")
        phone_evidence = say(alice_phone, None, "evenings please")

        results = race(
            lambda m=laptop_view, e=laptop_evidence: correct(alice, m, "afternoons", evidence=e),
            lambda m=phone_view, e=phone_evidence: correct(alice_phone, m, "evenings", evidence=e),
        )
        wins = [r for r in results if not isinstance(r, grpc.RpcError)]
        losses = [r for r in results if isinstance(r, grpc.RpcError)]
        assert len(wins) == 1, results
        assert len(losses) == 1, results
        info = error_info(losses[0])
        assert info.code == grpc.StatusCode.ABORTED
        assert info.reason == "ETAG_MISMATCH"
        winner = wins[0]
        assert info.metadata["current_revision"] == winner.revision.name
        assert info.metadata["current_etag"] == winner.memory.etag
        [packed] = info.unpack(memory_pb2.Memory)
        assert packed.applicable_revision.value == winner.revision.value

        history = revisions(alice, memory.name)
        assert [r.revision_number for r in history] == [1, 2]
        assert history[1].value == winner.revision.value
        assert get(alice, memory.name).applicable_revision.value == winner.revision.value


def test_concurrent_creates_of_one_key_make_one_memory(alice: Client, alice_phone: Client) -> None:
    e1 = say(alice, None, "mornings")
    e2 = say(alice_phone, None, "evenings")
    results = race(
        lambda: create_memory(alice, "meeting_time", "mornings", evidence=e1),
        lambda: create_memory(alice_phone, "meeting_time", "evenings", evidence=e2),
    )
    wins = [r for r in results if not isinstance(r, grpc.RpcError)]
    losses = [r for r in results if isinstance(r, grpc.RpcError)]
    assert len(wins) == 1, results
    info = error_info(losses[0])
    assert (info.code, info.reason) == (grpc.StatusCode.ALREADY_EXISTS, "MEMORY_EXISTS")
    assert names(list_all(alice)) == [wins[0].memory.name]


# --------------------------------------------------------------------------- request ids


def test_a7_create_retried_with_the_same_request_id(alice: Client) -> None:
    evidence = say(alice, None, "I prefer morning meetings")
    rid = request_id()
    first = create_memory(alice, "meeting_time", "mornings", evidence=evidence, request_id=rid)
    # The response was "lost": the client retries the very same request.
    second = create_memory(alice, "meeting_time", "mornings", evidence=evidence, request_id=rid)
    assert second == first
    assert names(list_all(alice)) == [first.memory.name]
    assert len(revisions(alice, first.memory.name)) == 1
    assert get(alice, first.memory.name).etag == first.memory.etag


def test_retry_after_later_writes_still_returns_the_original_response(alice: Client) -> None:
    evidence = say(alice, None, "I prefer morning meetings")
    rid = request_id()
    first = create_memory(alice, "meeting_time", "mornings", evidence=evidence, request_id=rid)
    correct(alice, first.memory, "afternoons")
    retried = create_memory(alice, "meeting_time", "mornings", evidence=evidence, request_id=rid)
    assert retried == first
    assert [r.value for r in revisions(alice, first.memory.name)] == ["mornings", "afternoons"]
    assert names(list_all(alice)) == [first.memory.name]


def test_correct_retried_with_the_same_request_id(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    evidence = say(alice, None, "afternoons from now on")
    rid = request_id()
    first = correct(alice, memory, "afternoons", evidence=evidence, request_id=rid)
    # The retry still carries the etag it read before the first attempt.
    second = correct(alice, memory, "afternoons", evidence=evidence, request_id=rid)
    assert second == first
    assert [r.revision_number for r in revisions(alice, memory.name)] == [1, 2]
    assert get(alice, memory.name).etag == first.memory.etag


def test_request_id_reused_for_another_request_is_rejected(alice: Client) -> None:
    evidence = say(alice, None, "I prefer morning meetings")
    rid = request_id()
    first = create_memory(alice, "meeting_time", "mornings", evidence=evidence, request_id=rid)
    expect_error(
        lambda: create_memory(alice, "meeting_time", "evenings", evidence=evidence, request_id=rid),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    expect_error(
        lambda: create_memory(alice, "lunch_time", "mornings", evidence=evidence, request_id=rid),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    # The same id on another method is another request too.
    expect_error(
        lambda: correct(alice, first.memory, "evenings", evidence=evidence, request_id=rid),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    assert names(list_all(alice)) == [first.memory.name]
    assert len(revisions(alice, first.memory.name)) == 1


def test_confirm_reject_delete_retried_with_the_same_request_id(alice: Client) -> None:
    suggestion = say(alice, None, "Shall I book mornings?", ASSISTANT)
    a = create_pref(alice, "a_key", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE)
    b = create_pref(alice, "b_key", "evenings", evidence=suggestion, method=ASSISTANT_INFERENCE)

    rid = request_id()
    first = confirm(alice, revision_name(a.name, 1), request_id=rid)
    assert confirm(alice, revision_name(a.name, 1), request_id=rid) == first
    assert first.revision.state == ACTIVE

    rid = request_id()
    first_reject = reject(alice, revision_name(b.name, 1), request_id=rid)
    assert reject(alice, revision_name(b.name, 1), request_id=rid) == first_reject
    assert first_reject.revision.state == REJECTED

    rid = request_id()
    first_delete = delete(alice, a.name, request_id=rid)
    assert delete(alice, a.name, request_id=rid) == first_delete
    assert names(list_all(alice, show_deleted=True)) == [a.name, b.name]


def test_append_message_retried_with_the_same_request_id(alice: Client) -> None:
    conversation = new_conversation()
    rid = request_id()

    def send(text: str) -> transcript_service_pb2.AppendMessageResponse:
        return alice.transcript.AppendMessage(
            transcript_service_pb2.AppendMessageRequest(
                parent=conversation,
                message=transcript_service_pb2.Message(speaker=USER, text=text),
                request_id=rid,
            ),
            timeout=10,
        )

    first = send("hello there")
    assert send("hello there") == first
    assert [m.name for m in messages(alice, conversation)] == [first.message.name]
    expect_error(
        lambda: send("something else"), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED"
    )
    assert len(messages(alice, conversation)) == 1


def test_request_id_of_another_user_never_returns_their_result(
    alice: Client, bob: Client, carol: Client
) -> None:
    rid = request_id()
    mine = create_memory(alice, "meeting_time", "alice-private-mornings", request_id=rid)
    secret_bits = ("alice-private", mine.memory.name)
    for other in (bob, carol):
        evidence = say(other, None, "my own words")
        try:
            reply = create_memory(
                other, "meeting_time", "my own words", evidence=evidence, request_id=rid
            )
        except grpc.RpcError as err:
            info = error_info(err)
            assert (info.code, info.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "REQUEST_ID_REUSED",
            )
            assert not any(bit in str(info) for bit in secret_bits)
            continue
        assert reply.memory.name != mine.memory.name
        assert reply.memory.scope.id == other.user
        assert not any(bit in str(reply) for bit in secret_bits)


DUPLICATES = 20


def identical_replies(methods: list[Callable[..., Any]], request: Any) -> bytes:
    """Send one request DUPLICATES times at once (over several channels); every reply must be
    the stored response, byte for byte. Returns it."""
    senders = [methods[i % len(methods)] for i in range(DUPLICATES)]
    results = race(*(lambda m=m: m(request, timeout=30) for m in senders))
    errors = [r for r in results if isinstance(r, grpc.RpcError)]
    assert not errors, [(e.code(), error_info(e).reason) for e in errors]
    replies = {r.SerializeToString() for r in results}
    assert len(replies) == 1, f"{len(replies)} different replies"
    return replies.pop()


@pytest.fixture
def devices(memory_server: ServerProcess, tenant: str) -> list[Client]:
    """Alice on four channels: a client retrying on a flaky network."""
    return [memory_server.client(tenant, "alice") for _ in range(4)]


def test_concurrent_identical_creates_all_get_the_stored_response(devices: list[Client]) -> None:
    alice = devices[0]
    for round_ in range(3):
        evidence = say(alice, None, f"I prefer morning meetings {round_}")
        request = memory_service_pb2.CreateMemoryRequest(
            memory=memory_spec(f"meeting_time_{round_}"),
            revision=draft("mornings", evidence),
            request_id=request_id(),
        )
        reply = identical_replies([c.memories.CreateMemory for c in devices], request)
        created = memory_service_pb2.CreateMemoryResponse.FromString(reply)
        assert len(revisions(alice, created.memory.name)) == 1
    assert len(list_all(alice)) == 3


def test_concurrent_identical_corrections_all_get_the_stored_response(
    devices: list[Client],
) -> None:
    alice = devices[0]
    memory = create_pref(alice, "meeting_time", "mornings")
    for round_ in range(3):
        evidence = say(alice, None, f"afternoons, round {round_}")
        request = memory_service_pb2.CorrectMemoryRequest(
            name=memory.name,
            etag=memory.etag,
            revision=draft(f"afternoons {round_}", evidence),
            request_id=request_id(),
        )
        reply = identical_replies([c.memories.CorrectMemory for c in devices], request)
        memory = memory_service_pb2.CorrectMemoryResponse.FromString(reply).memory
    assert [r.revision_number for r in revisions(alice, memory.name)] == [1, 2, 3, 4]


def test_concurrent_identical_appends_confirms_and_deletes_all_get_the_stored_response(
    devices: list[Client],
) -> None:
    alice = devices[0]
    conversation = new_conversation()
    append = transcript_service_pb2.AppendMessageRequest(
        parent=conversation,
        message=transcript_service_pb2.Message(speaker=USER, text="hello there"),
        request_id=request_id(),
    )
    identical_replies([c.transcript.AppendMessage for c in devices], append)
    assert len(messages(alice, conversation)) == 1

    suggestion = say(alice, None, "Shall I book mornings?", ASSISTANT)
    memory = create_pref(
        alice, "a_key", "mornings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    confirming = memory_service_pb2.ConfirmMemoryRevisionRequest(
        name=revision_name(memory.name, 1), etag=memory.etag, request_id=request_id()
    )
    reply = identical_replies([c.memories.ConfirmMemoryRevision for c in devices], confirming)
    confirmed = memory_service_pb2.ConfirmMemoryRevisionResponse.FromString(reply)
    assert confirmed.revision.state == ACTIVE

    deleting = memory_service_pb2.DeleteMemoryRequest(
        name=memory.name, etag=confirmed.memory.etag, request_id=request_id()
    )
    identical_replies([c.memories.DeleteMemory for c in devices], deleting)
    assert names(list_all(alice, show_deleted=True)) == [memory.name]
