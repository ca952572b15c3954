"""The override repository: values that shadow a memory's key for one conversation or task
until they expire.

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam

from memory_service.kernel.domain.model import Override, ParentType, Scope
from memory_service.kernel.storage.models import OverrideRow
from memory_service.kernel.storage.rows import PARENT_TYPES, SCOPE_TYPES
from memory_service.kernel.storage.scoped import Prepare, TenantScoped


class SqlOverrideRepository(TenantScoped):
    def add(self, override: Override) -> None:
        self._insert(
            OverrideRow,
            id=override.id,
            parent_type=override.parent_type.value,
            parent_id=override.parent_id,
            key=override.key,
            key_context=override.key_context,
            scope_type=override.scope.type.value,
            scope_id=override.scope.id,
            value=override.value,
            expire_time=override.expire_time,
            create_time=override.create_time,
            author_user_id=override.author_user_id,
            evidence_ref=override.evidence_ref,
        )

    def active(
        self,
        parent_type: ParentType,
        parent_id: str,
        instant: datetime,
        after_id: str,
        limit: int,
        author_user_id: str | None,
    ) -> list[Override]:
        shape = ("overrides.active", author_user_id is not None, bool(after_id))

        def build(p: Prepare) -> Any:
            statement = p.select(OverrideRow).where(
                OverrideRow.parent_type == bindparam("parent_type"),
                OverrideRow.parent_id == bindparam("parent_id"),
                OverrideRow.expire_time > bindparam("instant"),
                OverrideRow.create_time <= bindparam("instant"),
            )
            if shape[1]:
                statement = statement.where(OverrideRow.author_user_id == bindparam("author"))
            if shape[2]:
                statement = statement.where(OverrideRow.id > bindparam("after_id"))
            return statement.order_by(OverrideRow.id).limit(bindparam("limit"))

        rows = self._run(
            shape,
            build,
            parent_type=parent_type.value,
            parent_id=parent_id,
            instant=instant,
            author=author_user_id,
            after_id=after_id,
            limit=limit,
        )
        return [_override(row) for row in rows]

    def get(self, override_id: str) -> Override | None:
        row = self._session.execute(
            self._select(OverrideRow).where(OverrideRow.id == override_id)
        ).first()
        return None if row is None else _override(row)

    def remove(self, override_id: str) -> bool:
        result = self._session.execute(
            self._delete(OverrideRow).where(OverrideRow.id == override_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def _override(row: Any) -> Override:
    return Override(
        id=row.id,
        tenant_id=row.tenant_id,
        parent_type=PARENT_TYPES[row.parent_type],
        parent_id=row.parent_id,
        key=row.key,
        key_context=row.key_context,
        scope=Scope(SCOPE_TYPES[row.scope_type], row.scope_id),
        value=row.value,
        expire_time=row.expire_time,
        create_time=row.create_time,
        author_user_id=row.author_user_id,
        evidence_ref=row.evidence_ref,
    )
