"""Attacks on the batch writes (BatchCreateMemories, BatchAppendMessages), on SQLite and
PostgreSQL: a batch is no wider door than the single calls it stands for."""

from __future__ import annotations

import threading

import grpc
from crmmem.memory.v1 import memory_pb2
from crmmem.memory.v1 import memory_service_pb2 as service_pb

from tests.e2e.helpers import (
    SCOPE_CUSTOMER,
    SCOPE_USER,
    expect_error,
    list_all,
    memory_spec,
    request_id,
)
from tests.e2e.test_batch_create import append_batch, batch_request, item, said_items
from tests.support.servers import Client


def create_batch(
    client: Client, items: list[service_pb.CreateMemoryRequest], rid: str = ""
) -> object:
    return client.memories.BatchCreateMemories(batch_request(items, rid), timeout=30)


def test_a_stranger_replaying_a_request_id_gets_nothing_of_the_first_batch(
    alice: Client, bob: Client, alice_elsewhere: Client
) -> None:
    """Request ids are per caller: the same id from another user (or the same user id in
    another tenant) is a new request that writes its own items, never a replay of alice's."""
    rid = request_id()
    mine = create_batch(alice, said_items(alice, 3, "mine"), rid)
    theirs = create_batch(bob, said_items(bob, 2, "theirs"), rid)
    elsewhere = create_batch(alice_elsewhere, said_items(alice_elsewhere, 1, "far"), rid)

    assert {r.memory.name for r in theirs.responses}.isdisjoint(
        r.memory.name for r in mine.responses
    )
    assert len(elsewhere.responses) == 1
    assert len(list_all(alice)) == 3
    assert len(list_all(bob)) == 2


def test_citing_another_users_message_in_one_item_refuses_the_batch(
    alice: Client, bob: Client
) -> None:
    """Bob's message is invisible to alice: the item is refused like a missing message."""
    items = said_items(alice, 5)
    bobs = append_batch(bob, [items[3].revision.value])[0].name
    items[3].revision.provenance.transcript_message = bobs

    info = expect_error(
        lambda: create_batch(alice, items),
        (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT),
        "EVIDENCE_NOT_FOUND",
    )
    assert info.metadata["request"] == "requests[3]"
    assert list_all(alice) == []


def test_writing_another_users_memory_in_one_item_refuses_the_batch(alice: Client) -> None:
    """Authority holds per item: a user scope naming bob, or a customer alice may not use."""
    for scope in (
        memory_pb2.Scope(type=SCOPE_USER, id="bob"),
        memory_pb2.Scope(type=SCOPE_CUSTOMER, id="acme-corp"),
    ):
        items = said_items(alice, 4)
        items[2].memory.scope.CopyFrom(scope)
        info = expect_error(
            lambda items=items: create_batch(alice, items),  # type: ignore[misc]
            (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND),
        )
        assert info.metadata["request"] == "requests[2]"
    assert list_all(alice) == []


def test_an_oversized_value_deep_in_the_batch_names_its_item(alice: Client) -> None:
    items = said_items(alice, 60)
    items[57].revision.value = "x" * 4001

    expect_error(
        lambda: create_batch(alice, items),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
        "requests[57].revision.value",
    )
    assert list_all(alice) == []


def test_a_full_batch_of_largest_values_is_taken_whole(alice: Client) -> None:
    """100 items at the longest value: the size rules are per item, as for CreateMemory."""
    said = append_batch(alice, ["I prefer " + "y" * 3990])[0].name
    items = [item(f"big_{index}", "I prefer " + "y" * 3990, said) for index in range(100)]

    reply = create_batch(alice, items)
    assert len(reply.responses) == 100


def test_racing_replays_of_one_batch_write_it_once(alice: Client) -> None:
    """Eight copies of one batch with one request id at once: one set of memories, and every
    caller gets the same answer."""
    items = said_items(alice, 20)
    rid = request_id()
    answers: list[service_pb.BatchCreateMemoriesResponse] = []
    errors: list[BaseException] = []

    def send() -> None:
        try:
            answers.append(create_batch(alice, items, rid))
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors, errors
    assert all(answer == answers[0] for answer in answers)
    assert len(list_all(alice)) == 20


def test_a_batch_cannot_append_to_another_users_conversation(alice: Client, bob: Client) -> None:
    """The conversation id is per user: bob's batch to alice's conversation id opens bob's own."""
    conversation = "conversations/shared-name"
    append_batch(alice, ["alice speaking"], conversation)
    append_batch(bob, ["bob speaking"], conversation)

    mine = append_batch(alice, ["alice again"], conversation)
    assert mine[0].sequence == 2
    assert mine[0].author_user_id == "alice"


def test_a_request_that_repeats_a_memory_key_in_the_batch_is_refused(alice: Client) -> None:
    """Scope defaults (an empty user scope means the caller) do not hide a duplicate."""
    items = said_items(alice, 2)
    items[0].memory.CopyFrom(memory_spec("same"))
    items[1].memory.CopyFrom(memory_spec("same"))
    items[1].memory.scope.id = "alice"

    expect_error(
        lambda: create_batch(alice, items),
        grpc.StatusCode.ALREADY_EXISTS,
        "MEMORY_EXISTS",
    )
    assert list_all(alice) == []
