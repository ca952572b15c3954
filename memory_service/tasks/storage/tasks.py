"""Tasks and their checkpoints, per tenant and owner; the purge of ended tasks across tenants."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import Task, TaskCheckpoint
from memory_service.kernel.storage.models import TaskCheckpointRow, TaskRow
from memory_service.kernel.storage.rows import loaded, stored
from memory_service.kernel.storage.scoped import AllTenants, TenantScoped


class SqlTaskRepository(TenantScoped):
    def get(self, owner_user_id: str, task_id: str, *, lock: bool = False) -> Task | None:
        statement = self._select(TaskRow).where(
            TaskRow.owner_user_id == owner_user_id, TaskRow.id == task_id
        )
        if lock:  # writers of one task queue here instead of colliding on the next number
            statement = statement.with_for_update()
        row = self._session.execute(statement).first()
        if row is None:
            return None
        current = None
        if row.checkpoint_count:
            latest = self._session.execute(
                self._checkpoints(owner_user_id, task_id).where(
                    TaskCheckpointRow.sequence == row.checkpoint_count
                )
            ).first()
            current = None if latest is None else _checkpoint(latest)
        return loaded(Task, row, current=current)

    def owners_of(self, task_id: str, limit: int) -> list[str]:
        rows = self._session.execute(
            self._select(TaskRow, TaskRow.owner_user_id)
            .where(TaskRow.id == task_id)
            .order_by(TaskRow.owner_user_id)
            .limit(limit)
        )
        return [row.owner_user_id for row in rows]

    def add(self, task: Task) -> None:
        self._insert(TaskRow, **stored(task, "tenant_id", "current"))

    def add_checkpoint(self, owner_user_id: str, task_id: str, checkpoint: TaskCheckpoint) -> None:
        self._insert(
            TaskCheckpointRow,
            owner_user_id=owner_user_id,
            task_id=task_id,
            payload=checkpoint.payload_json,
            **stored(checkpoint, "payload_json"),
        )

    def update(self, task: Task, expected: Task) -> None:
        result = self._session.execute(
            self._update(TaskRow)
            .where(
                TaskRow.owner_user_id == task.owner_user_id,
                TaskRow.id == task.id,
                TaskRow.state == expected.state.value,
                TaskRow.checkpoint_count == expected.checkpoint_count,
            )
            .values(
                state=task.state.value,
                checkpoint_count=task.checkpoint_count,
                update_time=task.update_time,
                end_time=task.end_time,
            )
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            raise WriteConflict(f"tasks/{task.id} changed meanwhile")

    def list_checkpoints(
        self, owner_user_id: str, task_id: str, after_sequence: int, limit: int
    ) -> list[TaskCheckpoint]:
        rows = self._session.execute(
            self._checkpoints(owner_user_id, task_id)
            .where(TaskCheckpointRow.sequence > after_sequence)
            .order_by(TaskCheckpointRow.sequence)
            .limit(limit)
        )
        return [_checkpoint(row) for row in rows]

    def _checkpoints(self, owner_user_id: str, task_id: str) -> Any:
        return self._select(TaskCheckpointRow).where(
            TaskCheckpointRow.owner_user_id == owner_user_id,
            TaskCheckpointRow.task_id == task_id,
        )


def _checkpoint(row: Any) -> TaskCheckpoint:
    return loaded(TaskCheckpoint, row, payload_json=row.payload)


def purge_ended_tasks(everyone: AllTenants, ended_before: datetime) -> int:
    """Maintenance across tenants: tasks that ended before `ended_before`, with every
    checkpoint they had. Returns how many tasks went."""
    expired = and_(TaskRow.end_time.is_not(None), TaskRow.end_time < ended_before)
    everyone.session.execute(
        everyone.delete(TaskCheckpointRow).where(
            exists(
                everyone.select(TaskRow, TaskRow.id).where(
                    TaskRow.tenant_id == TaskCheckpointRow.tenant_id,
                    TaskRow.owner_user_id == TaskCheckpointRow.owner_user_id,
                    TaskRow.id == TaskCheckpointRow.task_id,
                    expired,
                )
            )
        )
    )
    result = everyone.session.execute(everyone.delete(TaskRow).where(expired))
    return int(result.rowcount)  # type: ignore[attr-defined]
