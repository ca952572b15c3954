"""Import batches and items, tenant-scoped like every other repository."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_

from memory_service.kernel.domain.model import (
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
)
from memory_service.kernel.domain.ports import chunks
from memory_service.kernel.storage.models import ImportBatchRow, ImportItemRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK, loaded, stored
from memory_service.kernel.storage.scoped import AllTenants, TenantScoped

MAX_STORED_ARCHIVE = 64 * 1024 * 1024  # inflating never yields more than any accepted archive


class SqlImportRepository(TenantScoped):
    def find_batch(self, user_id: str, archive_sha256: str) -> ImportBatch | None:
        row = self._session.execute(
            self._select(ImportBatchRow).where(
                ImportBatchRow.user_id == user_id,
                ImportBatchRow.archive_sha256 == archive_sha256,
            )
        ).first()
        return None if row is None else _batch(row)

    def get_batch(self, batch_id: str) -> ImportBatch | None:
        row = self._session.execute(
            self._select(ImportBatchRow).where(ImportBatchRow.id == batch_id)
        ).first()
        return None if row is None else _batch(row)

    def add_batch(self, batch: ImportBatch, archive: bytes | None) -> None:
        stored = None if archive is None else zlib.compress(archive, 1)
        self._insert(ImportBatchRow, archive=stored, **_batch_columns(batch))

    def remove_batch(self, batch_id: str) -> None:
        self._session.execute(self._delete(ImportItemRow).where(ImportItemRow.batch_id == batch_id))
        self._session.execute(self._delete(ImportBatchRow).where(ImportBatchRow.id == batch_id))

    def update_batch(self, batch: ImportBatch) -> None:
        self._session.execute(
            self._update(ImportBatchRow)
            .where(ImportBatchRow.id == batch.id)
            .values(archive=None, lease_owner=None, lease_until=None, **_batch_columns(batch))
        )

    def archive_of(self, batch_id: str) -> bytes | None:
        row = self._session.execute(
            self._select(ImportBatchRow, ImportBatchRow.archive).where(
                ImportBatchRow.id == batch_id
            )
        ).first()
        return None if row is None or row.archive is None else _inflate(row.archive)

    def add_items(self, items: list[ImportItem]) -> None:
        """One multi-row INSERT, no ORM objects: an import writes many items in chunks, and
        the session must not keep each one until commit."""
        self._insert_many(ImportItemRow, [_item_columns(item) for item in items])

    def count_pending(self, user_id: str) -> int:
        return int(
            self._session.execute(
                self._select(ImportBatchRow, func.count(ImportBatchRow.id)).where(
                    ImportBatchRow.user_id == user_id,
                    ImportBatchRow.state == ImportState.PENDING.value,
                )
            ).scalar_one()
        )

    def get_item(self, item_id: str) -> ImportItem | None:
        row = self._session.execute(
            self._select(ImportItemRow).where(ImportItemRow.id == item_id)
        ).first()
        return None if row is None else import_item_of(row)

    def update_item(self, item: ImportItem) -> None:
        self._session.execute(
            self._update(ImportItemRow)
            .where(ImportItemRow.id == item.id)
            .values(review=item.review.value, memory_id=item.memory_id)
        )

    def list_items(
        self, batch_id: str, outcome: ItemOutcome | None, after_ordinal: int, limit: int
    ) -> list[ImportItem]:
        statement = self._select(ImportItemRow).where(
            ImportItemRow.batch_id == batch_id, ImportItemRow.ordinal > after_ordinal
        )
        if outcome is not None:
            statement = statement.where(ImportItemRow.outcome == outcome.value)
        rows = self._session.execute(statement.order_by(ImportItemRow.ordinal).limit(limit))
        return [import_item_of(row) for row in rows]

    def cancel_pending(self, user_id: str, lineage_hashes: list[str]) -> int:
        if not user_id or not lineage_hashes:
            return 0
        result = self._session.execute(
            self._update(ImportItemRow)
            .where(
                ImportItemRow.user_id == user_id,
                ImportItemRow.lineage_hash.in_(lineage_hashes),
                ImportItemRow.review == ItemReview.PENDING.value,
            )
            .values(review=ItemReview.REJECTED.value)
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def blank_text(self, user_id: str, lineage_hashes: list[str], memory_id: str) -> list[str]:
        reached = ImportItemRow.memory_id == memory_id
        if user_id and lineage_hashes:
            reached = or_(
                reached,
                and_(
                    ImportItemRow.user_id == user_id,
                    ImportItemRow.lineage_hash.in_(lineage_hashes),
                ),
            )
        ids = list(
            self._session.scalars(
                self._select(ImportItemRow, ImportItemRow.id).where(
                    reached, ImportItemRow.text != ""
                )
            )
        )
        if ids:
            self._session.execute(
                self._update(ImportItemRow).where(ImportItemRow.id.in_(ids)).values(text="")
            )
        return ids

    def item_ids(self, batch_id: str) -> list[str]:
        return list(
            self._session.scalars(
                self._select(ImportItemRow, ImportItemRow.id).where(
                    ImportItemRow.batch_id == batch_id
                )
            )
        )

    def count_items(self, batch_id: str) -> tuple[int, int]:
        rows = self._session.execute(
            self._select(ImportItemRow, ImportItemRow.review).where(
                ImportItemRow.batch_id == batch_id
            )
        ).all()
        confirmed = sum(1 for row in rows if row.review == ItemReview.CONFIRMED.value)
        return len(rows), confirmed

    def known_lineage(self, user_id: str, hashes: list[str]) -> set[str]:
        known: set[str] = set()
        for part in chunks(sorted(set(hashes)), IN_CLAUSE_CHUNK):
            rows = self._session.execute(
                self._select(ImportItemRow, ImportItemRow.lineage_hash).where(
                    ImportItemRow.user_id == user_id, ImportItemRow.lineage_hash.in_(part)
                )
            )
            known.update(row.lineage_hash for row in rows)
        return known


def _inflate(stored: bytes) -> bytes:
    """Archives are stored deflated: the database then holds and sends a fraction of the
    bytes (a hostile archive of repeated lines shrinks a thousandfold). Rows written before
    that are returned as they are."""
    inflater = zlib.decompressobj()
    try:
        archive = inflater.decompress(stored, MAX_STORED_ARCHIVE + 1)
    except zlib.error:
        return stored
    if not inflater.eof or len(archive) > MAX_STORED_ARCHIVE:
        return stored
    return archive


def _batch_columns(batch: ImportBatch) -> dict[str, Any]:
    return stored(batch, "tenant_id")


def _batch(row: Any) -> ImportBatch:
    return loaded(ImportBatch, row)


def _item_columns(item: ImportItem) -> dict[str, Any]:
    return stored(item, "tenant_id") | {
        "source_ref": item.source_ref[:512],
        "attachment": item.attachment[:512],
    }


def import_item_of(row: Any) -> ImportItem:
    return loaded(ImportItem, row)


class SqlImportQueue:
    """Cross-tenant by design, like the outbox store: `FOR UPDATE SKIP LOCKED` lets replicas
    lease disjoint batches on PostgreSQL; SQLite serializes writers anyway. A lease that
    expires (its replica died mid-parse) makes the batch leasable again, and the attempt
    count tells the parser when to give up."""

    def __init__(self, all_tenants: Callable[[], AbstractContextManager[AllTenants]]) -> None:
        self._all_tenants = all_tenants

    def lease(self, owner: str, now: datetime, lease_seconds: float) -> tuple[str, str] | None:
        with self._all_tenants() as everyone:
            row = everyone.session.execute(
                everyone.select(
                    ImportBatchRow,
                    ImportBatchRow.tenant_id,
                    ImportBatchRow.id,
                    ImportBatchRow.attempts,
                )
                .where(
                    ImportBatchRow.state == ImportState.PENDING.value,
                    or_(ImportBatchRow.lease_until.is_(None), ImportBatchRow.lease_until < now),
                )
                .order_by(ImportBatchRow.create_time)
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            everyone.session.execute(
                everyone.update(ImportBatchRow)
                .where(ImportBatchRow.tenant_id == row.tenant_id, ImportBatchRow.id == row.id)
                .values(
                    attempts=row.attempts + 1,
                    lease_owner=owner,
                    lease_until=now + timedelta(seconds=lease_seconds),
                )
            )
            return row.tenant_id, row.id
