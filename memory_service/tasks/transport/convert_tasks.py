"""Proto <-> domain for task state."""

from __future__ import annotations

import json
from datetime import datetime

from crmmem.memory.v1 import task_service_pb2 as task_pb
from google.protobuf import json_format

from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Task, TaskCheckpoint, TaskState
from memory_service.kernel.domain.rules import MAX_TASK_PAYLOAD_BYTES
from memory_service.kernel.transport.fields import EnumMap, set_time
from memory_service.tasks.domain.tasks import CheckpointDraft

TASK_STATES = EnumMap.named(TaskState, task_pb.TaskState)


def checkpoint_draft(checkpoint: task_pb.TaskCheckpoint) -> CheckpointDraft:
    payload_json = ""
    if checkpoint.HasField("payload"):
        size = checkpoint.payload.ByteSize()
        if size > MAX_TASK_PAYLOAD_BYTES:
            raise InvalidArgument(
                "checkpoint.payload",
                f"is {size:,} bytes encoded; at most {MAX_TASK_PAYLOAD_BYTES:,}",
            )
        try:
            as_dict = json_format.MessageToDict(checkpoint.payload)
            payload_json = json.dumps(as_dict, separators=(",", ":"), allow_nan=False)
        except (ValueError, json_format.Error):
            raise InvalidArgument(
                "checkpoint.payload", "numbers must be finite (no NaN or Infinity)"
            ) from None
    return CheckpointDraft(
        step=checkpoint.step,
        total_steps=checkpoint.total_steps,
        status_text=checkpoint.status_text,
        payload_json=payload_json,
    )


def checkpoint_proto(task_id: str, checkpoint: TaskCheckpoint) -> task_pb.TaskCheckpoint:
    proto = task_pb.TaskCheckpoint(
        name=f"{names.task(task_id)}/checkpoints/{checkpoint.sequence}",
        step=checkpoint.step,
        total_steps=checkpoint.total_steps,
        status_text=checkpoint.status_text,
    )
    if checkpoint.payload_json:
        json_format.ParseDict(json.loads(checkpoint.payload_json), proto.payload)
    set_time(proto.create_time, checkpoint.create_time)
    return proto


def task_proto(task: Task, purge_time: datetime | None) -> task_pb.Task:
    proto = task_pb.Task(
        name=names.task(task.id),
        state=TASK_STATES.proto(task.state),
        checkpoint_count=task.checkpoint_count,
        author_user_id=task.owner_user_id,
    )
    if task.current is not None:
        proto.current_checkpoint.CopyFrom(checkpoint_proto(task.id, task.current))
    set_time(proto.create_time, task.create_time)
    set_time(proto.update_time, task.update_time)
    set_time(proto.end_time, task.end_time)
    set_time(proto.purge_time, purge_time)
    return proto
