"""Task state attacked by a signed-in stranger and a hostile user of the same tenant, on SQLite
and PostgreSQL: payloads nested past the decoder's depth, odd characters and huge keys, gzip
requests, racing first writes, a request id replayed with another body or by another user, and a
page token carried to someone else's task."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import grpc
from crmmem.memory.v1 import task_service_pb2 as task_pb
from google.protobuf import struct_pb2

from tests.e2e.helpers import error_info, expect_error, expect_invalid
from tests.e2e.test_export import export
from tests.e2e.test_tasks import (
    CANCELLED,
    COMPLETED,
    checkpoint,
    context_for,
    end,
    get_task,
    history,
    new_task,
    payload,
)
from tests.support.servers import Client


def outcome(call: Callable[[], object]) -> str:
    """ "OK", or the status code's name of a failed call."""
    try:
        call()
    except grpc.RpcError as error:
        return str(error.code().name)
    return "OK"


def nested(depth: int) -> struct_pb2.Struct:
    root = struct_pb2.Struct()
    level = root
    for _ in range(depth):
        level = level.fields["a"].struct_value
    level["leaf"] = "bottom"
    return root


def _field(number: int, body: bytes) -> bytes:
    """One length-delimited field, encoded by hand (the client library refuses to build
    messages nested this deep)."""
    return _varint(number << 3 | 2) + _varint(len(body)) + body


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def deeply_nested_request(task: str, depth: int) -> bytes:
    struct = b""
    for _ in range(depth):  # Struct{fields: {"a": Value{struct_value: ...}}}
        struct = _field(1, _field(1, b"a") + _field(2, _field(5, struct)))
    body = b"\x10\x01" + _field(4, b"deep") + _field(5, struct)  # step=1, status_text, payload
    return _field(1, task.encode()) + _field(2, body)


def test_a_payload_nested_past_the_decoders_depth_is_invalid_not_internal(alice: Client) -> None:
    task = new_task()
    raw = alice.channel.unary_unary(
        "/crmmem.memory.v1.TaskService/CreateTaskCheckpoint",
        request_serializer=lambda body: body,
        response_deserializer=task_pb.CreateTaskCheckpointResponse.FromString,
    )
    assert raw(deeply_nested_request(task, 3), timeout=10).task.checkpoint_count == 1
    task = new_task()
    for depth in (40, 1_000, 5_000):
        expect_invalid(partial(raw, deeply_nested_request(task, depth), timeout=10), "request")
    expect_error(lambda: get_task(alice, task), grpc.StatusCode.NOT_FOUND)
    shallow = nested(25)
    assert checkpoint(alice, task, 1, "deep", data=shallow).checkpoint.payload == shallow
    assert get_task(alice, task).current_checkpoint.payload == shallow


def test_odd_characters_and_huge_keys_round_trip_exactly(alice: Client) -> None:
    task = new_task()
    odd = payload(**{"k\x00ey": "v\x00al", "\u2028\u202e": "\U0001f600 \ufeff", "x" * 8_000: 1.5})
    odd.fields["nothing"].null_value = struct_pb2.NULL_VALUE
    odd.fields["list"].list_value.extend(
        [1, "two", None, struct_pb2.ListValue(), struct_pb2.Struct()]
    )
    written = checkpoint(alice, task, 1, "odd", data=odd)
    assert written.checkpoint.payload == odd
    assert get_task(alice, task).current_checkpoint.payload == odd
    assert history(alice, task)[0].payload == odd
    assert context_for(alice, task).task_state.current_checkpoint.payload == odd


def test_a_value_with_no_kind_is_kept_as_null(alice: Client) -> None:
    task = new_task()
    empty = struct_pb2.Struct()
    empty.fields["blank"].Clear()  # a Value with no kind set
    kept = checkpoint(alice, task, 1, "blank", data=empty).checkpoint.payload
    assert kept.fields["blank"].WhichOneof("kind") == "null_value"
    assert get_task(alice, task).current_checkpoint.payload == kept


def test_gzip_requests_meet_the_same_limits(alice: Client) -> None:
    task = new_task()
    big = payload(notes="x" * 16_400)
    request = task_pb.CreateTaskCheckpointRequest(
        parent=task, checkpoint=task_pb.TaskCheckpoint(step=1, status_text="zip", payload=big)
    )
    call = alice.tasks.CreateTaskCheckpoint
    expect_invalid(
        lambda: call(request, timeout=10, compression=grpc.Compression.Gzip), "checkpoint.payload"
    )
    bomb = task_pb.CreateTaskCheckpointRequest(
        parent=task, checkpoint=task_pb.TaskCheckpoint(step=1, status_text="z" * (40 << 20))
    )
    # gRPC itself refuses this one, before any handler (so without rich details).
    assert outcome(lambda: call(bomb, timeout=30, compression=grpc.Compression.Gzip)) == (
        "RESOURCE_EXHAUSTED"
    )
    expect_error(lambda: get_task(alice, task), grpc.StatusCode.NOT_FOUND)
    assert checkpoint(alice, task, 1, "still serving").task.checkpoint_count == 1


def test_racing_first_checkpoints_create_one_task(alice: Client) -> None:
    """Nobody has the task yet: eight first writes at once make one task, numbered 1 to 8."""
    task = new_task()
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda n: checkpoint(alice, task, n, f"step {n}"), range(1, 9)))
    numbers = sorted(int(r.checkpoint.name.rsplit("/", 1)[1]) for r in replies)
    assert numbers == list(range(1, 9))
    assert get_task(alice, task).checkpoint_count == 8
    assert len(history(alice, task)) == 8


def test_ending_a_task_racing_its_first_checkpoint(alice: Client) -> None:
    """The end either finds the task (and later writes see it ended) or finds nothing."""
    for _ in range(5):
        task = new_task()
        with ThreadPoolExecutor(max_workers=2) as pool:
            first = pool.submit(outcome, partial(checkpoint, alice, task, 1, "first"))
            ending = pool.submit(outcome, partial(end, alice, task, CANCELLED))
            wrote, ended = first.result() == "OK", ending.result() == "OK"
        assert wrote
        assert ending.result() in ("OK", "NOT_FOUND")
        state = get_task(alice, task)
        assert state.state == (CANCELLED if ended else task_pb.TASK_STATE_OPEN)
        assert state.checkpoint_count == 1


def test_a_request_id_replayed_with_another_body_or_by_another_user(
    alice: Client, bob: Client
) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "started")
    rid = str(uuid.uuid4())
    end(alice, task, COMPLETED, request_id=rid)
    expect_error(
        lambda: end(alice, task, CANCELLED, request_id=rid),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    expect_error(
        lambda: checkpoint(alice, task, 2, "sneak in", request_id=rid),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    # Bob sending alice's request id gets no replay of her answer: his own task is written.
    mine = checkpoint(bob, task, 1, "bob's", request_id=rid)
    assert mine.task.author_user_id == "bob"
    assert mine.task.state == task_pb.TASK_STATE_OPEN
    assert get_task(alice, task).state == COMPLETED
    assert get_task(alice, task).checkpoint_count == 1


def test_a_page_token_carried_to_another_users_task_reveals_nothing(
    alice: Client, bob: Client
) -> None:
    task = new_task()
    for n in range(1, 4):
        checkpoint(alice, task, n, f"alice {n}")
    checkpoint(bob, task, 1, "bob 1")
    first = alice.tasks.ListTaskCheckpoints(
        task_pb.ListTaskCheckpointsRequest(parent=task, page_size=1), timeout=10
    )
    assert first.next_page_token
    carried = task_pb.ListTaskCheckpointsRequest(
        parent=task, page_size=5, page_token=first.next_page_token
    )
    pages: list[task_pb.ListTaskCheckpointsResponse] = []
    answer = outcome(lambda: pages.append(bob.tasks.ListTaskCheckpoints(carried, timeout=10)))
    assert answer in ("OK", "INVALID_ARGUMENT")
    for page in pages:
        assert all(c.status_text.startswith("bob") for c in page.checkpoints)


def test_racing_ends_agree_on_one_outcome(alice: Client, admin: Client) -> None:
    """Author and admin end one task at once, one as completed and one as cancelled: one wins,
    the other is told the task already ended; the same outcome twice is no conflict."""
    task = new_task()
    checkpoint(alice, task, 1, "started")

    def ending(client: Client, outcome: int) -> str:
        try:
            return str(end(client, task, outcome).state)
        except grpc.RpcError as error:
            return error_info(error).reason

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(
            pool.map(
                lambda pair: ending(*pair),
                [(alice, COMPLETED), (admin, CANCELLED), (alice, COMPLETED), (admin, CANCELLED)],
            )
        )
    final = get_task(alice, task).state
    assert final in (COMPLETED, CANCELLED)
    assert sorted(outcomes) == sorted([str(final)] * 2 + ["TASK_ENDED"] * 2)


def test_forged_page_tokens_are_refused(alice: Client) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "one")
    checkpoint(alice, task, 2, "two")

    def listing(token: str) -> task_pb.ListTaskCheckpointsResponse:
        return alice.tasks.ListTaskCheckpoints(
            task_pb.ListTaskCheckpointsRequest(parent=task, page_token=token), timeout=10
        )

    for token in ("AAAA", "x" * 1_000, "\u00e9t\u00e9", "eyJhZnRlciI6Wy0xXX0"):
        expect_invalid(lambda t=token: listing(t), "page_token")  # type: ignore[misc]


def test_task_state_stays_out_of_exports(alice: Client, admin: Client) -> None:
    """Task state is not memory: neither the user's nor the tenant's export carries it."""
    task = new_task()
    marker = f"zebra-{uuid.uuid4().hex[:8]}"
    checkpoint(alice, task, 1, f"waiting on {marker}", data=payload(note=marker))
    for caller, parent in ((alice, "users/alice"), (admin, "users/alice"), (admin, "tenant")):
        records = export(caller, parent)
        assert marker not in json.dumps(records)
        assert task.split("/", 1)[1] not in json.dumps(records)
