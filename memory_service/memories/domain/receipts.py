"""What a deletion says it reached and what it cannot reach (I9), in words for the user: one
home for the receipts of deleting a memory and deleting an import batch, so both speak of the
same places (the store, backups, what stays) the same way."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_service.kernel.domain.model import Memory


@dataclass(frozen=True)
class DeletionReceipt:
    """What a deletion removed and what it cannot reach (I9), in words for the user."""

    removed: list[tuple[str, str]]
    not_reached: list[tuple[str, str]]
    marker_expire_time: datetime


@dataclass(frozen=True)
class RetentionPolicy:
    backup_days: int = 30
    marker_days: int = 365


def memory_receipt(
    memory: Memory,
    now: datetime,
    retention: RetentionPolicy,
    cancelled: int,
    blanked: int,
    redacted: int,
) -> DeletionReceipt:
    """The receipt of `MemoryUseCases.delete`: `cancelled` import items withdrawn from review,
    `blanked` import items' text erased, `redacted` stored responses redacted."""
    count = len(memory.revisions)
    backups = now + timedelta(days=retention.backup_days)
    return DeletionReceipt(
        removed=[
            ("store", f"the text of {count} revision(s) and their quotes, in this transaction"),
            (
                "search_index",
                "removal queued in the same transaction; searches validate against the "
                "records meanwhile, so the memory is never recalled again",
            ),
            (
                "stored_responses",
                f"{redacted} stored idempotency response(s) showing this memory redacted; "
                "replaying those requests answers MEMORY_DELETED",
            ),
            (
                "import_items",
                f"the text of {blanked} import item(s) of this lineage erased; their hashes "
                "stay so a re-import cannot bring it back",
            ),
            (
                "pending_work",
                f"{cancelled} import item(s) with this text withdrawn from review; late "
                "proposals and index writes re-check the deletion when they commit",
            ),
            ("key", "replaced by a hash in the deletion marker"),
        ],
        not_reached=[
            (
                "audit_transcript",
                "the conversation messages the memory was taken from stay as evidence",
            ),
            (
                "database_log",
                "the database's write-ahead log keeps overwritten pages until its next "
                "checkpoint (minutes on SQLite and PostgreSQL)",
            ),
            ("backups", f"database backups until they expire ({backups.date().isoformat()})"),
            ("logs", "operational logs carry ids, not memory text"),
            (
                "model_providers",
                "contexts already sent to a model provider cannot be withdrawn",
            ),
        ],
        marker_expire_time=now + timedelta(days=retention.marker_days),
    )


def import_batch_receipt(
    removed: int, confirmed: int, now: datetime, backup_days: int
) -> DeletionReceipt:
    """The receipt of `ImportUseCases.delete_batch`: `removed` items gone, `confirmed` memory
    revisions taken from them that stay."""
    backups = (now + timedelta(days=backup_days)).date().isoformat()
    return DeletionReceipt(
        removed=[
            (
                "import_items",
                f"{removed} item(s) of the batch with their text, in this transaction",
            ),
            ("pending_review", "candidates waiting for review can no longer be confirmed"),
        ],
        not_reached=[
            (
                "confirmed_memories",
                f"{confirmed} memory revision(s) confirmed from this batch stay until deleted",
            ),
            ("source_archive", "the archive at the service it was exported from"),
            ("backups", f"database backups until they expire ({backups})"),
        ],
        marker_expire_time=now,
    )
