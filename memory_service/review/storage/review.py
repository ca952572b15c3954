"""The review queue's sources, tenant-scoped like every other repository: each query starts
from `TenantScoped._select` and applies the caller's visibility in SQL, so a page never counts
what the caller may not see."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, func

from memory_service.imports.public import import_item_of
from memory_service.kernel.domain.model import (
    ImportItem,
    ItemReview,
    Memory,
    RevisionStatus,
)
from memory_service.kernel.domain.ports import Visibility
from memory_service.kernel.storage.models import (
    ImportItemRow,
    MemoryRow,
    MemoryUsageRow,
    RevisionRow,
)
from memory_service.memories.public import SqlMemoryRepository, visible


class SqlReviewRepository(SqlMemoryRepository):
    def flagged(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        flagged = self._select(RevisionRow, RevisionRow.memory_id).where(
            RevisionRow.source_change_time.is_not(None),
            RevisionRow.status == RevisionStatus.ACTIVE.value,
        )
        return self._live(visibility, after_id, limit, MemoryRow.id.in_(flagged))

    def with_candidates(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        candidates = self._select(RevisionRow, RevisionRow.memory_id).where(
            RevisionRow.status == RevisionStatus.CANDIDATE.value
        )
        return self._live(visibility, after_id, limit, MemoryRow.id.in_(candidates))

    def sharing_keys(self, visibility: Visibility, limit: int) -> list[Memory]:
        shared = (
            self._select(MemoryRow, MemoryRow.key, MemoryRow.key_context)
            .where(MemoryRow.live.is_(True), visible(visibility))
            .group_by(MemoryRow.key, MemoryRow.key_context)
            .having(func.count(func.distinct(MemoryRow.scope_type + ":" + MemoryRow.scope_id)) > 1)
            .subquery()
        )
        joined = and_(MemoryRow.key == shared.c.key, MemoryRow.key_context == shared.c.key_context)
        rows = list(
            self._session.execute(
                self._select(MemoryRow)
                .join(shared, joined)
                .where(MemoryRow.live.is_(True), visible(visibility))
                .order_by(MemoryRow.id)
                .limit(limit)
            )
        )
        return self._with_revisions(rows)

    def unused_since(
        self, visibility: Visibility, cutoff: datetime, after_id: str, limit: int
    ) -> list[Memory]:
        used = and_(
            self._mine(MemoryUsageRow),
            MemoryUsageRow.memory_id == MemoryRow.id,
        )
        statement = (
            self._select(MemoryRow)
            .outerjoin(MemoryUsageRow, used)
            .where(
                MemoryRow.live.is_(True),
                visible(visibility),
                func.coalesce(MemoryUsageRow.last_used_time, MemoryRow.create_time) < cutoff,
            )
        )
        if after_id:
            statement = statement.where(MemoryRow.id > after_id)
        rows = list(self._session.execute(statement.order_by(MemoryRow.id).limit(limit)))
        return self._with_revisions(rows)

    def pending_items(self, user_id: str | None, after_id: str, limit: int) -> list[ImportItem]:
        statement = self._select(ImportItemRow).where(
            ImportItemRow.review == ItemReview.PENDING.value
        )
        if user_id is not None:
            statement = statement.where(ImportItemRow.user_id == user_id)
        if after_id:
            statement = statement.where(ImportItemRow.id > after_id)
        rows = self._session.execute(statement.order_by(ImportItemRow.id).limit(limit))
        return [import_item_of(row) for row in rows]

    def _live(self, visibility: Visibility, after_id: str, limit: int, *where: Any) -> list[Memory]:
        statement = self._select(MemoryRow).where(
            MemoryRow.live.is_(True), visible(visibility), *where
        )
        if after_id:
            statement = statement.where(MemoryRow.id > after_id)
        rows = list(self._session.execute(statement.order_by(MemoryRow.id).limit(limit)))
        return self._with_revisions(rows)


__all__ = ["SqlReviewRepository"]
