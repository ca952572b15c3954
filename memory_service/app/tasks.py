"""The task service's writes: the unit of work under the request id, the domain's rules
(`domain.tasks`), the answer stored, commit. Reads go straight to `domain.tasks` in a read
transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memory_service.app.transactions import Answer, RequestKey, Transactions
from memory_service.domain.model import Identity, Task, TaskCheckpoint, TaskState, utcnow
from memory_service.domain.ports import UnitOfWork
from memory_service.domain.tasks import CheckpointDraft, TaskUseCases

A = TypeVar("A")


class TaskCommands:
    def __init__(self, transactions: Transactions, tasks: TaskUseCases) -> None:
        self._tx = transactions
        self._tasks = tasks

    def checkpoint(
        self,
        identity: Identity,
        key: RequestKey[A],
        task_id: str,
        draft: CheckpointDraft,
        present: Callable[[Task, TaskCheckpoint], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            task, checkpoint = self._tasks.checkpoint(uow, identity, task_id, draft, utcnow())
            return Answer(present(task, checkpoint))

        return self._tx.write(identity, key, work)

    def end(
        self,
        identity: Identity,
        key: RequestKey[A],
        task_id: str,
        outcome: TaskState,
        present: Callable[[Task], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._tasks.end(uow, identity, task_id, outcome, utcnow())))

        return self._tx.write(identity, key, work)
