"""gRPC servicer for task state: checkpoints, the task's current state and history, its end."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import grpc
from crmmem.memory.v1 import task_service_pb2 as task_pb
from crmmem.memory.v1 import task_service_pb2_grpc as task_grpc

from memory_service.kernel.domain import names
from memory_service.kernel.domain.model import Identity, Task, TaskCheckpoint
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ORDINAL
from memory_service.kernel.transport.rpc import ServicerBase, rpc
from memory_service.tasks.app.tasks import TaskCommands, TaskQueries
from memory_service.tasks.transport import convert_tasks as ct


@dataclass(eq=False)
class TaskServicer(ServicerBase, task_grpc.TaskServiceServicer):
    commands: TaskCommands
    queries: TaskQueries

    @rpc
    def CreateTaskCheckpoint(
        self,
        request: task_pb.CreateTaskCheckpointRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> task_pb.CreateTaskCheckpointResponse:
        task_id = names.parse_task(request.parent, "parent")
        draft = ct.checkpoint_draft(request.checkpoint)

        def present(
            task: Task, purge: datetime | None, checkpoint: TaskCheckpoint
        ) -> task_pb.CreateTaskCheckpointResponse:
            return task_pb.CreateTaskCheckpointResponse(
                checkpoint=ct.checkpoint_proto(task_id, checkpoint),
                task=ct.task_proto(task, purge),
            )

        return self.commands.checkpoint(
            identity,
            request_key("CreateTaskCheckpoint", request, task_pb.CreateTaskCheckpointResponse),
            task_id,
            draft,
            present,
        )

    @rpc
    def GetTask(
        self, request: task_pb.GetTaskRequest, context: grpc.ServicerContext, identity: Identity
    ) -> task_pb.GetTaskResponse:
        task_id = names.parse_task(request.name, "name")
        task, purge = self.queries.get(identity, task_id)
        return task_pb.GetTaskResponse(task=ct.task_proto(task, purge))

    @rpc
    def ListTaskCheckpoints(
        self,
        request: task_pb.ListTaskCheckpointsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> task_pb.ListTaskCheckpointsResponse:
        task_id = names.parse_task(request.parent, "parent")
        page = self.pages.page(request, identity, [ORDINAL])
        after = page.after[0] if page.after else 0
        checkpoints, more = self.queries.history(identity, task_id, after, page.size)
        token = page.next_token(checkpoints[-1].sequence) if more else ""
        return task_pb.ListTaskCheckpointsResponse(
            checkpoints=[ct.checkpoint_proto(task_id, c) for c in checkpoints],
            next_page_token=token,
        )

    @rpc
    def EndTask(
        self, request: task_pb.EndTaskRequest, context: grpc.ServicerContext, identity: Identity
    ) -> task_pb.EndTaskResponse:
        task_id = names.parse_task(request.name, "name")
        outcome = ct.TASK_STATES.required(request.outcome, "outcome")

        return self.commands.end(
            identity,
            request_key("EndTask", request, task_pb.EndTaskResponse),
            task_id,
            outcome,
            lambda task, purge: task_pb.EndTaskResponse(task=ct.task_proto(task, purge)),
        )
