"""A memory's and a revision's columns: the one encoder of a revision's row, the decoders of
both (by position, in the column orders below), and the visibility rule as SQL.

Shared by the memory repository and the reads built on it (`memories/storage/memory_listing.py`,
`review/storage/review.py`), so that every read of a memory selects and decodes the same columns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, false, or_

from memory_service.kernel.domain.model import (
    Confirmation,
    EvidenceRef,
    EvidenceType,
    Memory,
    Provenance,
    Revision,
    Scope,
    ScopeType,
)
from memory_service.kernel.domain.ports import Visibility
from memory_service.kernel.storage.models import MemoryRow, RevisionRow
from memory_service.kernel.storage.rows import (
    EVIDENCE_TYPES,
    KINDS,
    METHODS,
    SCOPE_TYPES,
    SPEAKERS,
    STATUSES,
    scope_of,
)

# Always true, and it lets a lookup by evidence_ref use the (tenant_id, evidence_type,
# evidence_ref) index with one seek per type; without it SQLite reads every revision of the
# tenant (a withdrawn-lineage check on every write).
ANY_EVIDENCE_TYPE = RevisionRow.evidence_type.in_([member.value for member in EvidenceType])


def visible(visibility: Visibility) -> Any:
    """The visibility rule as SQL, so pagination never counts rows the caller cannot see."""
    return visible_among(
        None if visibility.user_ids is None else sorted(visibility.user_ids),
        None if visibility.customer_ids is None else sorted(visibility.customer_ids),
        visibility.organization,
    )


def visible_among(user_ids: Any, customer_ids: Any, organization: bool) -> Any:
    """`visible` with the user and customer ids as lists or as (expanding) bound parameters;
    None: every one."""
    user = MemoryRow.scope_type == ScopeType.USER.value
    if user_ids is not None:
        user = and_(user, MemoryRow.scope_id.in_(user_ids))
    customer = MemoryRow.scope_type == ScopeType.CUSTOMER.value
    if customer_ids is not None:
        customer = and_(customer, MemoryRow.scope_id.in_(customer_ids))
    scope = (
        and_(MemoryRow.scope_type == ScopeType.ORGANIZATION.value, MemoryRow.scope_id == "")
        if organization
        else false()
    )
    return or_(user, customer, scope)


def revision_columns(revision: Revision) -> dict[str, Any]:
    provenance = revision.provenance
    confirmation = revision.confirmation
    return {
        "memory_id": revision.memory_id,
        "number": revision.number,
        "value": revision.value,
        "valid_from": revision.valid_from,
        "valid_until": revision.valid_until,
        "superseded_from": revision.superseded_from,
        "superseded_by_number": revision.superseded_by_number,
        "replaces_number": revision.replaces_number,
        "status": revision.status.value,
        "speaker": provenance.speaker.value,
        "method": provenance.method.value,
        "evidence_type": provenance.evidence.type.value,
        "evidence_ref": provenance.evidence.ref,
        "quote": provenance.quote,
        "source_time": provenance.source_time,
        "create_time": revision.create_time,
        "author_user_id": revision.author_user_id,
        "confirmed_by": confirmation.user_id if confirmation else None,
        "confirm_time": confirmation.confirm_time if confirmation else None,
        "confirm_restored_by": (confirmation.restored_by or None) if confirmation else None,
        "confirm_restore_time": confirmation.restore_time if confirmation else None,
        "status_reason": revision.status_reason,
        "document_version": provenance.document_version,
        "excerpt": provenance.excerpt,
        "source_change_time": revision.source_change_time,
    }


def memory_of(found: Any, revisions: list[Revision]) -> Memory:
    row = found._mapping
    return Memory(
        id=row["id"],
        tenant_id=row["tenant_id"],
        scope=Scope(SCOPE_TYPES[row["scope_type"]], row["scope_id"]),
        key=row["key"],
        key_context=row["key_context"],
        kind=KINDS[row["kind"]],
        version=row["version"],
        create_time=row["create_time"],
        update_time=row["update_time"],
        delete_time=row["delete_time"],
        revisions=revisions,
        key_hash=row["key_hash"],
    )


# Column orders of a memory read joined with its revisions (`get`, `get_many`, `list_after`):
# a memory's columns, then one revision's.
MEMORY_COLUMNS = (
    MemoryRow.id,
    MemoryRow.tenant_id,
    MemoryRow.scope_type,
    MemoryRow.scope_id,
    MemoryRow.key,
    MemoryRow.key_context,
    MemoryRow.kind,
    MemoryRow.version,
    MemoryRow.create_time,
    MemoryRow.update_time,
    MemoryRow.delete_time,
    MemoryRow.key_hash,
)
REVISION_COLUMNS = (
    RevisionRow.number,
    RevisionRow.value,
    RevisionRow.valid_from,
    RevisionRow.valid_until,
    RevisionRow.status,
    RevisionRow.speaker,
    RevisionRow.method,
    RevisionRow.evidence_type,
    RevisionRow.evidence_ref,
    RevisionRow.quote,
    RevisionRow.source_time,
    RevisionRow.document_version,
    RevisionRow.excerpt,
    RevisionRow.create_time,
    RevisionRow.author_user_id,
    RevisionRow.replaces_number,
    RevisionRow.superseded_from,
    RevisionRow.superseded_by_number,
    RevisionRow.confirmed_by,
    RevisionRow.confirm_time,
    RevisionRow.confirm_restored_by,
    RevisionRow.confirm_restore_time,
    RevisionRow.status_reason,
    RevisionRow.source_change_time,
)
MEMORY_WIDTH = len(MEMORY_COLUMNS)


def memories_with_revisions(rows: Iterable[Sequence[Any]]) -> list[Memory]:
    """Memories from rows of `MEMORY_COLUMNS + REVISION_COLUMNS`, ordered by memory id and
    revision number (a memory without revisions: one row whose revision columns are NULL)."""
    memories: list[Memory] = []
    current: Memory | None = None
    for row in rows:
        memory_id = row[0]
        if current is None or current.id != memory_id:
            (
                _,
                tenant_id,
                scope_type,
                scope_id,
                key,
                key_context,
                kind,
                version,
                create_time,
                update_time,
                delete_time,
                key_hash,
            ) = row[:MEMORY_WIDTH]
            current = Memory(
                memory_id,
                tenant_id,
                scope_of(scope_type, scope_id),
                key,
                key_context,
                KINDS[kind],
                version,
                create_time,
                update_time,
                delete_time,
                [],
                key_hash,
            )
            memories.append(current)
        if row[MEMORY_WIDTH] is not None:
            current.revisions.append(revision_at(memory_id, row[MEMORY_WIDTH:]))
    return memories


def revision_at(memory_id: str, columns: Sequence[Any]) -> Revision:
    """A revision from the values of `REVISION_COLUMNS`, in that order: the one decoder of a
    stored revision (every read selects those columns), by position because recall and
    BuildContext decode one for every candidate they read."""
    (
        number,
        value,
        valid_from,
        valid_until,
        status,
        speaker,
        method,
        evidence_type,
        evidence_ref,
        quote,
        source_time,
        document_version,
        excerpt,
        create_time,
        author_user_id,
        replaces_number,
        superseded_from,
        superseded_by_number,
        confirmed_by,
        confirm_time,
        confirm_restored_by,
        confirm_restore_time,
        status_reason,
        source_change_time,
    ) = columns
    confirmation = None
    if confirmed_by is not None and confirm_time is not None:
        confirmation = Confirmation(
            confirmed_by, confirm_time, confirm_restored_by or "", confirm_restore_time
        )
    return Revision(
        memory_id,
        number,
        value,
        valid_from,
        valid_until,
        STATUSES[status],
        Provenance(
            SPEAKERS[speaker],
            METHODS[method],
            EvidenceRef(EVIDENCE_TYPES[evidence_type], evidence_ref),
            quote,
            source_time,
            document_version,
            excerpt,
        ),
        create_time,
        author_user_id,
        replaces_number,
        superseded_from,
        superseded_by_number,
        confirmation,
        status_reason,
        source_change_time,
    )
