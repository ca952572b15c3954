"""A document's reported versions, and the mark on the revisions that cited an older one,
tenant-scoped like every other repository (`TenantScoped`)."""

from __future__ import annotations

from datetime import datetime

from memory_service.kernel.domain.model import DocumentVersion
from memory_service.kernel.storage.models import DocumentRow, RevisionRow
from memory_service.kernel.storage.scoped import TenantScoped


class SqlDocumentRepository(TenantScoped):
    def get(self, uri: str) -> DocumentVersion | None:
        row = self._session.execute(self._select(DocumentRow).where(DocumentRow.uri == uri)).first()
        if row is None:
            return None
        return DocumentVersion(
            row.tenant_id, row.uri, row.version, row.report_time, row.reported_by
        )

    def put(self, document: DocumentVersion) -> None:
        updated = self._session.execute(
            self._update(DocumentRow)
            .where(DocumentRow.uri == document.uri)
            .values(
                version=document.version,
                report_time=document.report_time,
                reported_by=document.reported_by,
            )
        )
        if updated.rowcount == 0:  # type: ignore[attr-defined]
            self._insert(
                DocumentRow,
                uri=document.uri,
                version=document.version,
                report_time=document.report_time,
                reported_by=document.reported_by,
            )

    def mark_source_changed(self, memory_id: str, number: int, now: datetime) -> bool:
        result = self._session.execute(
            self._update(RevisionRow)
            .where(
                RevisionRow.memory_id == memory_id,
                RevisionRow.number == number,
                RevisionRow.source_change_time.is_(None),
            )
            .values(source_change_time=now)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]
