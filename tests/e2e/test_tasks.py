"""Task state through gRPC on SQLite and PostgreSQL: checkpoints become the task's current state,
shown in BuildContext for the task in a section of their own (never among memories) and gone
from every context the moment the task ends; history pages; ended history is purged after its
retention."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import task_service_pb2 as task_pb
from google.protobuf import struct_pb2

from tests.conftest import BACKENDS, memory_env
from tests.e2e.helpers import create_pref, expect_error, list_all, to_dt
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess, database_url, start_server

OPEN = task_pb.TASK_STATE_OPEN
COMPLETED = task_pb.TASK_STATE_COMPLETED
CANCELLED = task_pb.TASK_STATE_CANCELLED


def new_task() -> str:
    return f"tasks/t-{uuid.uuid4().hex[:12]}"


def payload(**fields: object) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(fields)
    return struct


def checkpoint(
    client: Client,
    task: str,
    step: int,
    status: str,
    *,
    total: int = 0,
    data: struct_pb2.Struct | None = None,
    request_id: str = "",
) -> task_pb.CreateTaskCheckpointResponse:
    return client.tasks.CreateTaskCheckpoint(
        task_pb.CreateTaskCheckpointRequest(
            parent=task,
            checkpoint=task_pb.TaskCheckpoint(
                step=step, total_steps=total, status_text=status, payload=data
            ),
            request_id=request_id,
        ),
        timeout=10,
    )


def end(client: Client, task: str, outcome: int, request_id: str = "") -> task_pb.Task:
    return client.tasks.EndTask(
        task_pb.EndTaskRequest(name=task, outcome=outcome, request_id=request_id), timeout=10
    ).task


def get_task(client: Client, task: str) -> task_pb.Task:
    return client.tasks.GetTask(task_pb.GetTaskRequest(name=task), timeout=10).task


def context_for(client: Client, task: str) -> ctx_pb.BuildContextResponse:
    return client.context.BuildContext(ctx_pb.BuildContextRequest(task=task), timeout=10)


def history(client: Client, task: str, page_size: int = 0) -> list[task_pb.TaskCheckpoint]:
    out: list[task_pb.TaskCheckpoint] = []
    token = ""
    while True:
        reply = client.tasks.ListTaskCheckpoints(
            task_pb.ListTaskCheckpointsRequest(parent=task, page_size=page_size, page_token=token),
            timeout=10,
        )
        out.extend(reply.checkpoints)
        token = reply.next_page_token
        if not token:
            return out


def test_a_checkpoint_is_the_tasks_state_in_its_context_until_the_task_ends(
    alice: Client,
) -> None:
    preference = create_pref(alice, "meeting_time", "I prefer morning meetings")
    task = new_task()
    checkpoint(alice, task, 2, "outline approved", total=5)
    written = checkpoint(
        alice, task, 3, "draft awaiting approval", total=5, data=payload(draft="d-17", pages=4)
    )
    assert written.checkpoint.name == f"{task}/checkpoints/2"
    assert written.task.state == OPEN
    assert written.task.checkpoint_count == 2

    context = context_for(alice, task)
    state = context.task_state
    assert state.name == task
    assert state.state == OPEN
    assert state.current_checkpoint.step == 3
    assert state.current_checkpoint.total_steps == 5
    assert state.current_checkpoint.status_text == "draft awaiting approval"
    assert dict(state.current_checkpoint.payload) == {"draft": "d-17", "pages": 4.0}
    # Task state is its own section: memory is exactly what it was, and nothing was written.
    assert [m.memory.name for m in context.memories] == [preference.name]
    assert all("draft" not in m.applicable_revision.value for m in list_all(alice))
    # Without the task, the context has no task state.
    assert not alice.context.BuildContext(ctx_pb.BuildContextRequest()).HasField("task_state")

    ended = end(alice, task, COMPLETED)
    assert ended.state == COMPLETED
    assert ended.HasField("end_time")
    assert ended.HasField("purge_time")
    assert to_dt(ended.purge_time) > to_dt(ended.end_time)
    after = context_for(alice, task)
    assert not after.HasField("task_state")
    assert [m.memory.name for m in after.memories] == [preference.name]
    # The history stays readable until it is purged; the task takes no more checkpoints.
    assert get_task(alice, task).current_checkpoint.status_text == "draft awaiting approval"
    expect_error(
        lambda: checkpoint(alice, task, 4, "sent"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TASK_ENDED",
    )


def test_ending_a_task_again_with_the_same_outcome_changes_nothing(alice: Client) -> None:
    task = new_task()
    checkpoint(alice, task, 1, "started")
    first = end(alice, task, CANCELLED)
    assert end(alice, task, CANCELLED) == first
    expect_error(
        lambda: end(alice, task, COMPLETED), grpc.StatusCode.FAILED_PRECONDITION, "TASK_ENDED"
    )
    expect_error(lambda: end(alice, task, OPEN), grpc.StatusCode.INVALID_ARGUMENT, field="outcome")


def test_history_pages_oldest_first(alice: Client) -> None:
    task = new_task()
    for step in range(1, 8):
        checkpoint(alice, task, step, f"step {step} done", total=7)
    pages = [history(alice, task, page_size=size) for size in (1, 3, 0)]
    for page in pages:
        assert [c.step for c in page] == list(range(1, 8))
        assert [c.name for c in page] == [f"{task}/checkpoints/{n}" for n in range(1, 8)]
    first = alice.tasks.ListTaskCheckpoints(
        task_pb.ListTaskCheckpointsRequest(parent=task, page_size=3), timeout=10
    )
    assert len(first.checkpoints) == 3
    assert first.next_page_token
    # The token continues only this listing.
    other = new_task()
    checkpoint(alice, other, 1, "elsewhere")
    expect_error(
        lambda: alice.tasks.ListTaskCheckpoints(
            task_pb.ListTaskCheckpointsRequest(parent=other, page_token=first.next_page_token)
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        field="page_token",
    )


def test_a_missing_task_is_not_found_everywhere_but_in_the_context(alice: Client) -> None:
    task = new_task()
    for call in (
        lambda: get_task(alice, task),
        lambda: history(alice, task),
        lambda: end(alice, task, COMPLETED),
    ):
        expect_error(call, grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    assert not context_for(alice, task).HasField("task_state")


def purged_code(client: Client, task: str) -> grpc.StatusCode | None:
    """None while the task can still be read, else the code reading it fails with."""
    try:
        get_task(client, task)
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return None


@pytest.fixture(scope="module", params=BACKENDS)
def short_retention_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """Ended tasks are purged 3 s after they end, looked for every 0.3 s."""
    workdir: Path = tmp_path_factory.mktemp(f"tasks-{request.param}")
    with database_url(request.param, workdir)() as url:
        env = memory_env(
            url, MEMORY_TASK_HISTORY_DAYS=str(3 / 86400), MEMORY_TASK_PURGE_SECONDS="0.3"
        )
        server = start_server("memory_service", env, workdir)
        yield server
        server.stop()


def test_an_ended_tasks_history_is_purged_after_its_retention(
    short_retention_server: ServerProcess, tenant: str
) -> None:
    alice = short_retention_server.client(tenant, "alice")
    ended, running = new_task(), new_task()
    for task in (ended, running):
        checkpoint(alice, task, 1, "collecting figures")
        checkpoint(alice, task, 2, "draft awaiting approval")
    task = end(alice, ended, COMPLETED)
    assert 2.5 < (to_dt(task.purge_time) - to_dt(task.end_time)).total_seconds() < 3.5
    assert len(history(alice, ended)) == 2  # kept for its retention
    eventually(
        lambda: purged_code(alice, ended) is not None,
        20,
        "the ended task was never purged",
        interval=0.2,
    )
    assert purged_code(alice, ended) is grpc.StatusCode.NOT_FOUND
    expect_error(lambda: history(alice, ended), grpc.StatusCode.NOT_FOUND)
    # An open task is never purged, however old.
    assert [c.step for c in history(alice, running)] == [1, 2]
    assert context_for(alice, running).task_state.current_checkpoint.step == 2
    # The id is free again: a new task starts from its first checkpoint.
    assert checkpoint(alice, ended, 1, "again").checkpoint.name == f"{ended}/checkpoints/1"
