"""The task service's use cases. Writes: the unit of work under the request id, the domain's
rules (`domain.tasks`), the answer stored, commit. Reads: one read unit of work. Every answer
that shows a task also says when its history will be purged (None while it is open)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Identity, Task, TaskCheckpoint, TaskState, utcnow
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.tasks.domain.tasks import CheckpointDraft, TaskUseCases

A = TypeVar("A")
PurgeTime = datetime | None


@dataclass(eq=False)
class TaskCommands:
    _tx: Transactions
    _tasks: TaskUseCases

    def checkpoint(
        self,
        identity: Identity,
        key: RequestKey[A],
        task_id: str,
        draft: CheckpointDraft,
        present: Callable[[Task, PurgeTime, TaskCheckpoint], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            task, checkpoint = self._tasks.checkpoint(uow, identity, task_id, draft, utcnow())
            return Answer(present(task, self._tasks.purge_time(task), checkpoint))

        return self._tx.write(identity, key, work)

    def end(
        self,
        identity: Identity,
        key: RequestKey[A],
        task_id: str,
        outcome: TaskState,
        present: Callable[[Task, PurgeTime], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            task = self._tasks.end(uow, identity, task_id, outcome, utcnow())
            return Answer(present(task, self._tasks.purge_time(task)))

        return self._tx.write(identity, key, work)


@dataclass(eq=False)
class TaskQueries:
    _tx: Transactions
    _tasks: TaskUseCases

    def get(self, identity: Identity, task_id: str) -> tuple[Task, PurgeTime]:
        task = self._tx.read(identity, lambda uow: self._tasks.get(uow, identity, task_id))
        return task, self._tasks.purge_time(task)

    def history(
        self, identity: Identity, task_id: str, after_sequence: int, limit: int
    ) -> tuple[list[TaskCheckpoint], bool]:
        """Up to `limit` checkpoints after `after_sequence`, and whether more follow."""
        return self._tx.read(
            identity,
            lambda uow: self._tasks.history(uow, identity, task_id, after_sequence, limit),
        )
