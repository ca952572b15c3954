"""BatchCreateMemories and BatchAppendMessages (AIP-233) through gRPC on SQLite and PostgreSQL:
every CreateMemory rule per item, all or nothing, the refused item named, one request id."""

from __future__ import annotations

import uuid

import grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb

from tests.e2e.helpers import (
    ACTIVE,
    USER,
    delete,
    draft,
    expect_error,
    list_all,
    memory_spec,
    messages,
    new_conversation,
    request_id,
)
from tests.support.servers import Client

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def append_batch(
    client: Client, texts: list[str], conversation: str | None = None, **kwargs: object
) -> list[transcript_pb.Message]:
    """Appends `texts` to one conversation (a fresh one by default) in one call."""
    conversation = conversation or new_conversation()
    reply = client.transcript.BatchAppendMessages(
        transcript_pb.BatchAppendMessagesRequest(
            requests=[
                transcript_pb.AppendMessageRequest(
                    parent=conversation, message=transcript_pb.Message(speaker=USER, text=text)
                )
                for text in texts
            ],
            **kwargs,  # type: ignore[arg-type]
        ),
        timeout=30,
    )
    return list(reply.messages)


def item(key: str, value: str, evidence: str) -> service_pb.CreateMemoryRequest:
    return service_pb.CreateMemoryRequest(memory=memory_spec(key), revision=draft(value, evidence))


def batch_request(
    items: list[service_pb.CreateMemoryRequest], rid: str = ""
) -> service_pb.BatchCreateMemoriesRequest:
    return service_pb.BatchCreateMemoriesRequest(requests=items, request_id=rid)


def said_items(
    client: Client, count: int, prefix: str = "k"
) -> list[service_pb.CreateMemoryRequest]:
    """`count` items, each resting on its own message of the caller, appended in one call."""
    values = [f"I prefer option {index} for {prefix}" for index in range(count)]
    said = append_batch(client, values)
    return [item(f"{prefix}_{index}", values[index], said[index].name) for index in range(count)]


def test_batch_creates_every_item_in_order(alice: Client) -> None:
    items = said_items(alice, 12)
    reply = alice.memories.BatchCreateMemories(batch_request(items), timeout=30)

    assert [r.memory.key for r in reply.responses] == [f"k_{i}" for i in range(12)]
    assert all(r.revision.state == ACTIVE for r in reply.responses)
    assert all(
        r.revision.value == i.revision.value for r, i in zip(reply.responses, items, strict=True)
    )
    stored = {m.name for m in list_all(alice)}
    assert stored == {r.memory.name for r in reply.responses}


def test_batch_append_gives_consecutive_sequences(alice: Client) -> None:
    conversation = new_conversation()
    first = append_batch(alice, ["one", "two", "three"], conversation)
    second = append_batch(alice, ["four"], conversation)

    assert [m.sequence for m in first + second] == [1, 2, 3, 4]
    assert [m.text for m in messages(alice, conversation)] == ["one", "two", "three", "four"]


def test_a_bad_item_refuses_the_batch_and_names_its_field(alice: Client) -> None:
    items = said_items(alice, 10)
    items[7].revision.value = "   "

    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        INVALID,
        "FIELD_INVALID",
        "requests[7].revision.value",
    )
    assert info.metadata["request"] == "requests[7]"
    assert list_all(alice) == []


def test_an_item_refused_by_the_domain_rolls_back_the_items_before_it(alice: Client) -> None:
    """Items 0 to 6 were written in the transaction when item 7's evidence is found missing."""
    items = said_items(alice, 10)
    items[7].revision.provenance.transcript_message = f"{new_conversation()}/messages/nope"

    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION, INVALID),
    )
    assert info.metadata["request"] == "requests[7]"
    assert list_all(alice) == []


def test_two_items_for_one_key_refuse_the_batch(alice: Client) -> None:
    items = said_items(alice, 3)
    items[2].memory.key = items[0].memory.key

    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        grpc.StatusCode.ALREADY_EXISTS,
        "MEMORY_EXISTS",
    )
    assert info.metadata["request"] == "requests[2]"
    assert list_all(alice) == []


def test_replay_returns_the_same_memories(alice: Client) -> None:
    items = said_items(alice, 5)
    rid = request_id()
    first = alice.memories.BatchCreateMemories(batch_request(items, rid), timeout=30)
    again = alice.memories.BatchCreateMemories(batch_request(items, rid), timeout=30)

    assert again == first
    assert len(list_all(alice)) == 5
    items[0].revision.value = "something else"
    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items, rid), timeout=30),
        INVALID,
        "REQUEST_ID_REUSED",
        "request_id",
    )


def test_replay_after_deleting_one_memory_shows_no_text(alice: Client) -> None:
    """The stored answer shows every memory of the batch: deleting any one redacts it."""
    items = said_items(alice, 4)
    rid = request_id()
    first = alice.memories.BatchCreateMemories(batch_request(items, rid), timeout=30)
    delete(alice, first.responses[2].memory.name)

    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items, rid), timeout=30),
        grpc.StatusCode.FAILED_PRECONDITION,
        "MEMORY_DELETED",
    )


def test_another_tenants_message_is_refused_as_evidence(alice: Client, carol: Client) -> None:
    items = said_items(alice, 4)
    foreign = append_batch(carol, [items[1].revision.value])[0].name
    items[1].revision.provenance.transcript_message = foreign

    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION, INVALID),
        "EVIDENCE_NOT_FOUND",
    )
    assert info.metadata["request"] == "requests[1]"
    assert list_all(alice) == []
    assert list_all(carol) == []


def test_an_oversized_batch_is_refused(alice: Client) -> None:
    said = append_batch(alice, ["I prefer tea"])[0].name
    items = [item(f"k_{index}", "I prefer tea", said) for index in range(101)]

    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        INVALID,
        "FIELD_INVALID",
        "requests",
    )
    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request([]), timeout=30),
        INVALID,
        "FIELD_INVALID",
        "requests",
    )
    conversation = new_conversation()
    expect_error(
        lambda: append_batch(alice, ["x"] * 101, conversation),
        INVALID,
        "FIELD_INVALID",
        "requests",
    )
    assert list_all(alice) == []


def test_a_secret_in_one_item_refuses_the_batch(alice: Client) -> None:
    secret = "sk_live_" + uuid.uuid4().hex
    items = said_items(alice, 6)
    items[4].revision.value = f"the billing key is {secret}"

    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        INVALID,
        "SECRET_DETECTED",
        "requests[4].revision.value",
    )
    assert list_all(alice) == []


def test_an_item_with_its_own_request_id_is_refused(alice: Client) -> None:
    items = said_items(alice, 2)
    items[1].request_id = request_id()

    expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        INVALID,
        "FIELD_INVALID",
        "requests[1].request_id",
    )


def test_a_bad_message_refuses_the_append_batch(alice: Client) -> None:
    conversation = new_conversation()
    request = transcript_pb.BatchAppendMessagesRequest(
        requests=[
            transcript_pb.AppendMessageRequest(
                parent=conversation, message=transcript_pb.Message(speaker=USER, text="fine")
            ),
            transcript_pb.AppendMessageRequest(
                parent=conversation, message=transcript_pb.Message(speaker=USER, text=" ")
            ),
        ]
    )
    info = expect_error(
        lambda: alice.transcript.BatchAppendMessages(request, timeout=30),
        INVALID,
        "FIELD_INVALID",
        "requests[1].message.text",
    )
    assert info.metadata["request"] == "requests[1]"
    # Not even the conversation the first item would have opened is left.
    expect_error(lambda: messages(alice, conversation), grpc.StatusCode.NOT_FOUND)


def test_append_batch_replay_appends_once(alice: Client) -> None:
    conversation = new_conversation()
    rid = request_id()
    first = append_batch(alice, ["a", "b"], conversation, request_id=rid)
    again = append_batch(alice, ["a", "b"], conversation, request_id=rid)

    assert again == first
    assert len(messages(alice, conversation)) == 2


def test_the_stale_evidence_rule_holds_per_item(alice: Client) -> None:
    """A key deleted after its evidence was said cannot come back from that evidence, nor can
    the evidence of a deleted memory write another key: the batch reads the key's deletion and
    the evidence's withdrawal up front, and refuses as CreateMemory does."""
    items = said_items(alice, 4)
    first = alice.memories.BatchCreateMemories(batch_request(items[:2]), timeout=30)
    for response in first.responses:
        delete(alice, response.memory.name)

    again = said_items(alice, 3, "again")
    again[1] = items[0]  # the deleted key, from the evidence said before the deletion
    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(again), timeout=30),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_EVIDENCE",
    )
    assert info.metadata["request"] == "requests[1]"

    again = said_items(alice, 3, "other")
    again[2].revision.provenance.transcript_message = items[
        1
    ].revision.provenance.transcript_message
    again[2].revision.value = items[1].revision.value
    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(again), timeout=30),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_EVIDENCE",
    )
    assert info.metadata["request"] == "requests[2]"
    assert list_all(alice) == []
