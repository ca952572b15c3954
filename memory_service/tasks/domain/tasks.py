"""Task state: checkpoints that live until their task ends, never memory.

A task is per user like a conversation: `tasks/{id}` is the caller's own, created by its first
checkpoint, so a task id can neither be squatted nor tell anyone it is in use. Its author and
tenant admins read it (as for a task's overrides); anyone else gets NOT_FOUND. Its current
checkpoint is shown in the context for the task while it is open, and nowhere once it ends; the
ended task's history is purged after the retention the service states
(`MEMORY_TASK_HISTORY_DAYS`). Nothing here writes memory: task state becomes a memory only when
someone creates one through the memory rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import owner_for_reading
from memory_service.kernel.domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Reason,
)
from memory_service.kernel.domain.model import Identity, Task, TaskCheckpoint, TaskState
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector


@dataclass(frozen=True)
class CheckpointDraft:
    step: int
    total_steps: int
    status_text: str
    payload_json: str = ""  # a JSON object, or "" for none


def check_draft(draft: CheckpointDraft) -> None:
    """Bounds of a checkpoint, field by field (the payload's size is checked where it is
    decoded, against `rules.MAX_TASK_PAYLOAD_BYTES`)."""
    if not 1 <= draft.step <= rules.MAX_TASK_STEP:
        raise InvalidArgument("checkpoint.step", f"must be between 1 and {rules.MAX_TASK_STEP:,}")
    if draft.total_steps and not draft.step <= draft.total_steps <= rules.MAX_TASK_STEP:
        raise InvalidArgument(
            "checkpoint.total_steps",
            f"must be 0 (unknown) or between step and {rules.MAX_TASK_STEP:,}",
        )
    if not draft.status_text.strip():
        raise InvalidArgument("checkpoint.status_text", "is required")
    problem = rules.text_problem(draft.status_text, rules.MAX_TASK_STATUS_CHARS)
    if problem is not None:
        raise InvalidArgument("checkpoint.status_text", problem)


def payload_lines(payload_json: str) -> str:
    """Every key and string of a payload as `path: value` lines, so the secret rule reads
    `password: hunter2` as it would read it in a sentence."""
    if not payload_json:
        return ""
    return "\n".join(_leaves(json.loads(payload_json), ""))


def _leaves(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, path)
    else:
        yield f"{path}: {value}"


@dataclass(eq=False)
class TaskUseCases:
    _secrets: SecretDetector
    history_retention: timedelta

    def checkpoint(
        self,
        uow: UnitOfWork,
        identity: Identity,
        task_id: str,
        draft: CheckpointDraft,
        now: datetime,
    ) -> tuple[Task, TaskCheckpoint]:
        """Writes to the caller's own task, creating it; an ended task takes no more."""
        check_draft(draft)
        self._secrets.refuse("checkpoint.status_text", draft.status_text)
        self._secrets.refuse("checkpoint.payload", payload_lines(draft.payload_json))
        task = uow.tasks.get(identity.user_id, task_id, lock=True)
        if task is not None and task.state is not TaskState.OPEN:
            raise FailedPrecondition(f"{names.task(task_id)} has ended", reason=Reason.TASK_ENDED)
        checkpoint = TaskCheckpoint(
            sequence=(task.checkpoint_count if task else 0) + 1,
            step=draft.step,
            total_steps=draft.total_steps,
            status_text=draft.status_text,
            payload_json=draft.payload_json,
            create_time=now,
        )
        if task is None:
            task = Task(uow.tenant_id, task_id, identity.user_id, TaskState.OPEN, 0, now, now)
            uow.tasks.add(task)
        uow.tasks.add_checkpoint(identity.user_id, task_id, checkpoint)
        saved = replace(
            task, checkpoint_count=checkpoint.sequence, update_time=now, current=checkpoint
        )
        uow.tasks.update(saved, expected=task)
        return saved, checkpoint

    def get(
        self,
        uow: UnitOfWork,
        identity: Identity,
        task_id: str,
        field: str = "name",
        *,
        lock: bool = False,
    ) -> Task:
        own = uow.tasks.get(identity.user_id, task_id, lock=lock)
        if own is not None:
            return own
        owner = self._owner(uow, identity, task_id, field, own=False)
        task = uow.tasks.get(owner, task_id, lock=lock)
        if task is None:  # purged between the two reads
            raise NotFound(names.task(task_id))
        return task

    def history(
        self, uow: UnitOfWork, identity: Identity, task_id: str, after_sequence: int, limit: int
    ) -> tuple[list[TaskCheckpoint], bool]:
        own = uow.tasks.get(identity.user_id, task_id) is not None
        owner = self._owner(uow, identity, task_id, "parent", own=own)
        found = uow.tasks.list_checkpoints(owner, task_id, after_sequence, limit + 1)
        return found[:limit], len(found) > limit

    def end(
        self, uow: UnitOfWork, identity: Identity, task_id: str, outcome: TaskState, now: datetime
    ) -> Task:
        """Completed or cancelled, once: the same outcome again returns the task unchanged."""
        if outcome is TaskState.OPEN:
            raise InvalidArgument("outcome", "must be TASK_STATE_COMPLETED or TASK_STATE_CANCELLED")
        task = self.get(uow, identity, task_id, lock=True)
        if task.state is outcome:
            return task
        if task.state is not TaskState.OPEN:
            raise FailedPrecondition(
                f"{names.task(task_id)} already ended as {task.state.value.lower()}",
                reason=Reason.TASK_ENDED,
            )
        ended = replace(task, state=outcome, update_time=now, end_time=now)
        uow.tasks.update(ended, expected=task)
        return ended

    def for_context(self, uow: UnitOfWork, identity: Identity, task_id: str) -> Task | None:
        """The task state a context for this task carries: an open task the caller may read."""
        try:
            task = self.get(uow, identity, task_id)
        except (NotFound, InvalidArgument):  # invisible, missing or ambiguous: no task state
            return None
        return task if task.state is TaskState.OPEN else None

    def purge_time(self, task: Task) -> datetime | None:
        return None if task.end_time is None else task.end_time + self.history_retention

    @staticmethod
    def _owner(uow: UnitOfWork, identity: Identity, task_id: str, field: str, own: bool) -> str:
        return owner_for_reading(
            identity,
            own,
            lambda limit: uow.tasks.owners_of(task_id, limit),
            names.task(task_id),
            field,
            "several users have a task of this id; only each of them can name it",
        )
