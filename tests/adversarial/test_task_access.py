"""Task state under hostile callers, on SQLite and PostgreSQL: another user, another tenant and
a guessed id see a missing task (and cannot squat one); admins of the tenant read and end it;
oversized or secret-bearing checkpoints are refused field by field; a replay applies once."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from google.protobuf import struct_pb2

from tests.e2e.helpers import (
    error_info,
    expect_error,
    expect_invalid,
    not_found_signature,
)
from tests.e2e.test_tasks import (
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


@pytest.fixture
def strangers(
    bob: Client, carol: Client, other_admin: Client, alice_elsewhere: Client
) -> list[Client]:
    """Another user of the tenant; a user, an admin and an `alice` of another tenant."""
    return [bob, carol, other_admin, alice_elsewhere]


def test_strangers_and_other_tenants_see_a_missing_task(
    alice: Client, bob: Client, strangers: list[Client]
) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "quote for Acme drafted")
    missing = new_task()
    for stranger in strangers:
        for name, call in (
            (task, lambda c=stranger: get_task(c, task)),
            (task, lambda c=stranger: history(c, task)),
            (task, lambda c=stranger: end(c, task, COMPLETED)),
        ):
            signature = not_found_signature(call, name)
            assert signature == not_found_signature(
                lambda c=stranger: get_task(c, missing), missing
            )
        assert not context_for(stranger, task).HasField("task_state")
    # A stranger writing to the same id gets a task of their own; alice's is untouched.
    mine = checkpoint(bob, task, 7, "bob's own task")
    assert mine.task.author_user_id == "bob"
    assert mine.checkpoint.name == f"{task}/checkpoints/1"
    assert get_task(alice, task).current_checkpoint.status_text == "quote for Acme drafted"
    assert get_task(alice, task).author_user_id == "alice"
    assert context_for(alice, task).task_state.current_checkpoint.step == 1
    assert context_for(bob, task).task_state.current_checkpoint.step == 7


def test_an_admin_of_the_tenant_reads_and_ends_a_users_task(alice: Client, admin: Client) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "collecting figures")
    checkpoint(alice, task, 2, "draft awaiting approval")
    seen = get_task(admin, task)
    assert seen.author_user_id == "alice"
    assert seen.current_checkpoint.step == 2
    assert [c.step for c in history(admin, task)] == [1, 2]
    assert context_for(admin, task).task_state.author_user_id == "alice"
    assert end(admin, task, COMPLETED).state == COMPLETED
    assert not context_for(alice, task).HasField("task_state")


def test_an_admin_cannot_pick_among_several_users_tasks_of_one_id(
    alice: Client, bob: Client, admin: Client
) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "alice's")
    checkpoint(bob, task, 1, "bob's")
    expect_error(lambda: get_task(admin, task), grpc.StatusCode.INVALID_ARGUMENT, field="name")
    assert not context_for(admin, task).HasField("task_state")


def test_an_oversized_payload_is_refused_naming_the_field(alice: Client) -> None:
    task = new_task()
    big = payload(notes="x" * 16_400)
    info = expect_invalid(
        lambda: checkpoint(alice, task, 1, "working", data=big), "checkpoint.payload"
    )
    assert "16,384" in info.message
    # Like every repeated field of a request, an object takes at most 100 keys.
    many = struct_pb2.Struct()
    for n in range(101):
        many[f"k{n}"] = n
    expect_invalid(
        lambda: checkpoint(alice, task, 1, "working", data=many), "checkpoint.payload.fields"
    )
    expect_error(lambda: get_task(alice, task), grpc.StatusCode.NOT_FOUND)  # nothing was kept
    # Just under the limit is fine.
    fits = payload(notes="x" * 16_000)
    assert checkpoint(alice, task, 1, "working", data=fits).checkpoint.payload == fits


@pytest.mark.parametrize(
    ("step", "total", "status", "field"),
    [
        (0, 0, "working", "checkpoint.step"),
        (-3, 0, "working", "checkpoint.step"),
        (1_000_001, 0, "working", "checkpoint.step"),
        (5, 4, "working", "checkpoint.total_steps"),
        (1, 0, "   ", "checkpoint.status_text"),
        (1, 0, "x" * 2_001, "checkpoint.status_text"),
        (1, 0, "bad\x00text", "checkpoint.status_text"),
    ],
)
def test_bad_checkpoints_are_refused_naming_the_field(
    alice: Client, step: int, total: int, status: str, field: str
) -> None:
    expect_invalid(lambda: checkpoint(alice, new_task(), step, status, total=total), field)


def test_non_finite_numbers_and_bad_names_are_refused(alice: Client) -> None:
    nan = struct_pb2.Struct()
    nan["ratio"] = float("nan")
    expect_invalid(lambda: checkpoint(alice, new_task(), 1, "x", data=nan), "checkpoint.payload")
    for name in ("tasks/", "tasks/a/b", "conversations/c1", f"tasks/{'a' * 129}", "tasks/a b"):
        expect_invalid(lambda n=name: checkpoint(alice, n, 1, "x"), "parent")
        expect_invalid(lambda n=name: get_task(alice, n), "name")


@pytest.mark.parametrize(
    ("status", "data", "field"),
    [
        ("the portal password is Tr0ub4dor&3", None, "checkpoint.status_text"),
        ("paid with card 4111 1111 1111 1111", None, "checkpoint.status_text"),
        ("waiting for login", {"password": "Tr0ub4dor&3"}, "checkpoint.payload"),
        ("ready", {"steps": [{"note": "api key AKIAIOSFODNN7EXAMPLE"}]}, "checkpoint.payload"),
    ],
)
def test_secrets_in_a_checkpoint_are_refused_and_not_kept(
    alice: Client, status: str, data: dict[str, object] | None, field: str
) -> None:
    task = new_task()
    struct = payload(**data) if data else None
    info = expect_error(
        lambda: checkpoint(alice, task, 1, status, data=struct),
        grpc.StatusCode.INVALID_ARGUMENT,
        "SECRET_DETECTED",
        field,
    )
    assert "Tr0ub4dor" not in info.message
    assert "4111" not in info.message
    expect_error(lambda: get_task(alice, task), grpc.StatusCode.NOT_FOUND)


def test_a_replayed_checkpoint_write_applies_once(alice: Client) -> None:
    task = new_task()
    request_id = str(uuid.uuid4())
    first = checkpoint(alice, task, 1, "started", request_id=request_id)
    again = checkpoint(alice, task, 1, "started", request_id=request_id.upper())
    assert again == first
    assert [c.name for c in history(alice, task)] == [f"{task}/checkpoints/1"]
    expect_error(
        lambda: checkpoint(alice, task, 2, "something else", request_id=request_id),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    end_id = str(uuid.uuid4())
    ended = end(alice, task, COMPLETED, request_id=end_id)
    assert end(alice, task, COMPLETED, request_id=end_id) == ended


def test_a_task_state_never_enters_recall_or_memory(alice: Client) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "customer prefers invoices by post", data=payload(x="y"))
    context = alice.context.BuildContext(ctx_pb.BuildContextRequest(task=task), timeout=10)
    assert context.task_state.current_checkpoint.status_text
    assert list(context.memories) == []
    assert list(context.excluded) == []


def test_concurrent_checkpoints_of_one_task_all_land_once_in_order(alice: Client) -> None:
    """Eight writers at once: each checkpoint gets its own number, none is lost or doubled."""
    task = new_task()
    checkpoint(alice, task, 1, "started")
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(
            pool.map(
                lambda n: checkpoint(alice, task, n, f"step {n}", request_id=str(uuid.uuid4())),
                range(2, 10),
            )
        )
    numbers = sorted(int(r.checkpoint.name.rsplit("/", 1)[1]) for r in replies)
    assert numbers == list(range(2, 10))
    written = history(alice, task)
    assert [c.name.rsplit("/", 1)[1] for c in written] == [str(n) for n in range(1, 10)]
    assert sorted(c.step for c in written) == list(range(1, 10))
    assert get_task(alice, task).checkpoint_count == 9


def test_ending_while_checkpoints_arrive_leaves_no_checkpoint_after_the_end(
    alice: Client,
) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "started")

    def write(n: int) -> str:
        try:
            checkpoint(alice, task, n, f"step {n}")
        except grpc.RpcError as error:
            return error_info(error).reason
        return "OK"

    with ThreadPoolExecutor(max_workers=6) as pool:
        writes = [pool.submit(write, n) for n in range(2, 8)]
        ended = end(alice, task, COMPLETED)
        outcomes = [w.result() for w in writes]
    assert set(outcomes) <= {"OK", "TASK_ENDED"}
    final = get_task(alice, task)
    assert final.state == COMPLETED
    assert final.checkpoint_count == 1 + outcomes.count("OK")
    # Every checkpoint that got in was serialized before the end (the rest saw TASK_ENDED);
    # their clocks were read before they queued, so times are not compared.
    assert len(history(alice, task)) == final.checkpoint_count
    assert ended.checkpoint_count == final.checkpoint_count
