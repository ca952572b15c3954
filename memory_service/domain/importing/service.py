"""Imports as evidence for review (I11). Items are classified, deduplicated by lineage and kept
for the user; nothing imported is active until the user confirms it, and an item whose lineage
matches a superseded, rejected or deleted revision cannot become active again."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TypeVar

from memory_service.domain import evidence, rules
from memory_service.domain.authorization import require_admin
from memory_service.domain.errors import FailedPrecondition, NotFound, ResourceExhausted
from memory_service.domain.importing.parsers import (
    ArchiveError,
    ArchiveItem,
    iter_chatgpt,
    iter_export,
    iter_summary,
)
from memory_service.domain.importing.restore import restore_staleness, to_memory
from memory_service.domain.model import (
    ArchiveFormat,
    EvidenceRef,
    EvidenceType,
    Identity,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
    Memory,
    MemoryKind,
    ProvenanceMethod,
    Revision,
    Scope,
    ScopeType,
    SkipReason,
    Speaker,
    new_id,
)
from memory_service.domain.ports import UnitOfWork
from memory_service.domain.secrets import SecretDetector
from memory_service.domain.services import (
    CreateMemory,
    DeletionReceipt,
    MemoryUseCases,
    ProvenanceDraft,
    RevisionDraft,
)

INLINE_LIMIT = 256 * 1024
AMBIGUOUS_SUBJECT = re.compile(
    r"\b(?:we|they|he|she|our|their|his|her|colleague|boss|manager|team)\b", re.IGNORECASE
)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i am|i've|i'd|my|me|mine)\b", re.IGNORECASE)
PARSERS: dict[ArchiveFormat, Callable[[bytes], Iterator[ArchiveItem]]] = {
    ArchiveFormat.CHATGPT_CONVERSATIONS: iter_chatgpt,
    ArchiveFormat.MEMORY_SUMMARY: iter_summary,
}
RESTORE_CHUNK = 500
ITEM_CHUNK = 1000
# Archives of one user waiting for the background parser; each is stored until parsed.
MAX_PENDING_ARCHIVES = 2
# A background parse that never finished (the process died) is tried this many times.
MAX_PARSE_ATTEMPTS = 3
T = TypeVar("T")


def _chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def item_name(item: ImportItem) -> str:
    return f"importBatches/{item.batch_id}/items/{item.id}"


def classify(
    entry: ArchiveItem, summary: bool, secrets: SecretDetector
) -> tuple[ItemOutcome, SkipReason]:
    """Secrets, assistant suggestions and tool output are skipped; unclear subjects wait."""
    if secrets.kind(entry.text):
        return ItemOutcome.SKIPPED, SkipReason.SECRET
    if entry.speaker is Speaker.TOOL or not entry.text:
        return ItemOutcome.SKIPPED, SkipReason.UNSUPPORTED_CONTENT
    if entry.speaker is Speaker.ASSISTANT and not summary:
        return ItemOutcome.SKIPPED, SkipReason.ASSISTANT_AUTHORED
    if summary and entry.text.endswith(":"):
        return ItemOutcome.SKIPPED, SkipReason.UNSUPPORTED_CONTENT
    if AMBIGUOUS_SUBJECT.search(entry.text):
        return ItemOutcome.UNRESOLVED, SkipReason.NONE
    if summary or FIRST_PERSON.search(entry.text):
        return ItemOutcome.ACCEPTED, SkipReason.NONE
    return ItemOutcome.SKIPPED, SkipReason.UNSUPPORTED_CONTENT


class ImportUseCases:
    def __init__(self, memories: MemoryUseCases, secrets: SecretDetector | None = None) -> None:
        self._memories = memories
        self._secrets = secrets or SecretDetector()

    def submit(
        self,
        uow: UnitOfWork,
        identity: Identity,
        archive_format: ArchiveFormat,
        archive: bytes,
        now: datetime,
    ) -> tuple[ImportBatch, bool]:
        """Returns the batch and whether this archive had been imported before."""
        if archive_format is ArchiveFormat.CRMMEM_EXPORT:
            require_admin(identity)  # a restore writes every scope as it was exported
        digest = hashlib.sha256(archive).hexdigest()
        existing = uow.imports.find_batch(identity.user_id, digest)
        if existing is not None and existing.state is not ImportState.FAILED:
            return existing, True
        background = len(archive) > INLINE_LIMIT
        if background and uow.imports.count_pending(identity.user_id) >= MAX_PENDING_ARCHIVES:
            raise ResourceExhausted(
                f"{MAX_PENDING_ARCHIVES} archives of yours are still waiting to be parsed; "
                "submit this one when one of them has finished",
                reason="TOO_MANY_PENDING_IMPORTS",
                metadata={"limit": str(MAX_PENDING_ARCHIVES)},
            )
        if existing is not None:
            uow.imports.remove_batch(existing.id)  # a failed attempt may be retried
        batch = ImportBatch(
            new_id(), uow.tenant_id, identity.user_id, archive_format, digest,
            ImportState.PENDING, now,
        )  # fmt: skip
        if background:
            uow.imports.add_batch(batch, archive)  # parsed in the background
            return batch, False
        uow.imports.add_batch(batch, None)
        self._parse_into(uow, batch, archive, now)
        return batch, False

    def process(self, uow: UnitOfWork, batch_id: str, now: datetime) -> None:
        """Background step for large archives, after a worker has leased the batch and counted
        the attempt. A batch whose parse never finished (the process died) is given up after
        MAX_PARSE_ATTEMPTS, so one archive cannot crash a replica over and over."""
        batch = uow.imports.get_batch(batch_id)
        if batch is None or batch.state is not ImportState.PENDING:
            return
        if batch.attempts > MAX_PARSE_ATTEMPTS:
            self._fail(
                uow,
                batch,
                f"archive: gave up after {MAX_PARSE_ATTEMPTS} attempts to parse it; "
                "the raw archive was discarded",
                now,
            )
            return
        archive = uow.imports.archive_of(batch_id)
        if archive is None:
            self._fail(uow, batch, "archive: the raw archive is gone", now)
            return
        self._parse_into(uow, batch, archive, now)

    def fail(self, uow: UnitOfWork, batch_id: str, reason: str, now: datetime) -> None:
        """Ends a batch whose background parse broke unexpectedly; its archive is dropped."""
        batch = uow.imports.get_batch(batch_id)
        if batch is not None and batch.state is ImportState.PENDING:
            self._fail(uow, batch, reason, now)

    @staticmethod
    def _fail(uow: UnitOfWork, batch: ImportBatch, reason: str, now: datetime) -> None:
        batch.state, batch.error, batch.complete_time = ImportState.FAILED, reason, now
        uow.imports.update_batch(batch)

    def _parse_into(
        self, uow: UnitOfWork, batch: ImportBatch, archive: bytes, now: datetime
    ) -> None:
        """Two streaming passes: the first validates the whole archive under the limits without
        keeping anything, the second writes items in chunks; nothing is written for a bad one."""
        if batch.format is ArchiveFormat.CRMMEM_EXPORT:
            self._restore(uow, batch, archive, now)
            return
        parse = PARSERS[batch.format]
        try:
            for _ in parse(archive):
                pass
        except ArchiveError as error:
            self._fail(uow, batch, str(error), now)
            return
        summary = batch.format is ArchiveFormat.MEMORY_SUMMARY
        count = dict.fromkeys(ItemOutcome, 0)
        seen: set[str] = set()
        ordinal = 0
        for chunk in _chunked(parse(archive), ITEM_CHUNK):
            hashes = [rules.lineage_hash(e.text) for e in chunk]
            known = uow.imports.known_lineage(batch.user_id, hashes)
            items: list[ImportItem] = []
            for entry, digest in zip(chunk, hashes, strict=True):
                outcome, reason = classify(entry, summary, self._secrets)
                if outcome is not ItemOutcome.SKIPPED and (digest in known or digest in seen):
                    outcome, reason = ItemOutcome.SKIPPED, SkipReason.DUPLICATE
                seen.add(digest)
                said = evidence.archive_time(entry.source_time, batch.create_time)
                keep_text = reason is not SkipReason.SECRET  # a secret's text is never stored
                items.append(
                    ImportItem(
                        id=new_id(),
                        batch_id=batch.id,
                        tenant_id=uow.tenant_id,
                        user_id=batch.user_id,
                        ordinal=ordinal + len(items),
                        outcome=outcome,
                        skip_reason=reason,
                        speaker=entry.speaker,
                        text=entry.text if keep_text else "",
                        lineage_hash=digest if keep_text else "",
                        source_time=said,
                        source_ref=entry.source_ref,
                        review=(
                            ItemReview.NONE
                            if outcome is ItemOutcome.SKIPPED
                            else ItemReview.PENDING
                        ),
                    )
                )
                for name in entry.missing_attachments:
                    items.append(
                        ImportItem(
                            id=new_id(),
                            batch_id=batch.id,
                            tenant_id=uow.tenant_id,
                            user_id=batch.user_id,
                            ordinal=ordinal + len(items),
                            outcome=ItemOutcome.MISSING_ATTACHMENT,
                            skip_reason=SkipReason.NONE,
                            speaker=entry.speaker,
                            text="",
                            lineage_hash="",
                            source_time=said,
                            source_ref=entry.source_ref,
                            attachment=name,
                        )
                    )
            uow.imports.add_items(items)
            ordinal += len(items)
            for item in items:
                count[item.outcome] += 1
        batch.accepted_count = count[ItemOutcome.ACCEPTED]
        batch.skipped_count = count[ItemOutcome.SKIPPED]
        batch.unresolved_count = count[ItemOutcome.UNRESOLVED]
        batch.missing_count = count[ItemOutcome.MISSING_ATTACHMENT]
        batch.state, batch.complete_time = ImportState.SUCCEEDED, now
        uow.imports.update_batch(batch)

    def _restore(self, uow: UnitOfWork, batch: ImportBatch, archive: bytes, now: datetime) -> None:
        """All or nothing: every line is validated in a first streaming pass, so a malformed
        line fails the batch before anything is written; the second pass writes in chunks."""
        try:
            for where, record in iter_export(archive):
                to_memory(record, uow.tenant_id, where, self._secrets)
        except ArchiveError as error:
            self._fail(uow, batch, str(error), now)
            return
        restored = duplicates = 0
        memories = (
            to_memory(r, uow.tenant_id, where, self._secrets) for where, r in iter_export(archive)
        )
        for chunk in _chunked(memories, RESTORE_CHUNK):
            existing = uow.memories.get_many([m.id for m in chunk])
            for memory in chunk:
                if memory.id in existing or self._restore_refused(uow, memory, now):
                    duplicates += 1
                    continue
                uow.memories.add(memory)
                if not memory.deleted:
                    uow.outbox.enqueue(memory.id, now, now)
                restored += 1
        batch.accepted_count, batch.skipped_count = restored, duplicates
        batch.state, batch.complete_time = ImportState.SUCCEEDED, now
        uow.imports.update_batch(batch)

    @staticmethod
    def _restore_refused(uow: UnitOfWork, memory: Memory, now: datetime) -> bool:
        """A restore never brings back what this store deleted or replaced since."""
        if memory.deleted:
            return False
        live = uow.memories.find_live(memory.scope, memory.key, memory.key_context)
        if live is not None:
            return True  # the key is held here; one live memory per key
        history = evidence.KeyHistory(
            uow.memories.last_deletion(memory.scope, memory.key, memory.key_context), None
        )
        return bool(restore_staleness(memory, history, now))

    def get(self, uow: UnitOfWork, identity: Identity, batch_id: str) -> ImportBatch:
        batch = uow.imports.get_batch(batch_id)
        if batch is None or batch.user_id != identity.user_id:
            raise NotFound(f"importBatches/{batch_id}")
        return batch

    def items(
        self,
        uow: UnitOfWork,
        identity: Identity,
        batch_id: str,
        outcome: ItemOutcome | None,
        after_ordinal: int,
        limit: int,
    ) -> list[ImportItem]:
        self.get(uow, identity, batch_id)
        return uow.imports.list_items(batch_id, outcome, after_ordinal, limit)

    def item(self, uow: UnitOfWork, identity: Identity, item_id: str) -> ImportItem:
        item = uow.imports.get_item(item_id)
        if item is None or item.user_id != identity.user_id:
            raise NotFound(f"importBatches/-/items/{item_id}")
        return item

    def confirm(
        self,
        uow: UnitOfWork,
        identity: Identity,
        item_id: str,
        key: str,
        key_context: str,
        kind: MemoryKind,
        value: str,
        now: datetime,
    ) -> tuple[ImportItem, Memory, Revision]:
        item = self.item(uow, identity, item_id)
        if item.review is not ItemReview.PENDING:
            raise FailedPrecondition(
                f"the item is {item.review.value.lower()}, not waiting for review",
                reason="NOT_CANDIDATE",
            )
        scope = Scope(ScopeType.USER, identity.user_id)
        value = value or item.text
        self._secrets.refuse("value", value)
        ungrounded = evidence.grounding(value, "", item.text)
        if ungrounded:
            raise FailedPrecondition(
                f"{ungrounded}: an edited value must still say what the item says",
                reason=evidence.UNGROUNDED,
            )
        existing = uow.memories.find_live(scope, key, key_context)
        draft = RevisionDraft(
            value,
            None,
            None,
            ProvenanceDraft(
                None,
                ProvenanceMethod.IMPORT,
                EvidenceRef(EvidenceType.IMPORT_ITEM, item_name(item)),
            ),
        )
        if existing is None:
            memory, revision = self._memories.create(
                uow, identity, CreateMemory(scope, key, key_context, kind, draft), now
            )
        else:
            memory, revision = self._memories.correct(
                uow, identity, existing.id, existing.version, draft, now
            )
        memory, revision = self._memories.confirm(
            uow, identity, memory.id, revision.number, None, "", now
        )
        confirmed = replace(item, review=ItemReview.CONFIRMED, memory_id=memory.id)
        uow.imports.update_item(confirmed)
        return confirmed, memory, revision

    def delete_batch(
        self, uow: UnitOfWork, identity: Identity, batch_id: str, now: datetime, backup_days: int
    ) -> tuple[int, DeletionReceipt]:
        self.get(uow, identity, batch_id)
        removed, confirmed = uow.imports.count_items(batch_id)
        uow.idempotency.redact_shown(uow.imports.item_ids(batch_id))
        uow.imports.remove_batch(batch_id)
        return removed, delete_batch_receipt(removed, confirmed, now, backup_days)

    def reject(self, uow: UnitOfWork, identity: Identity, item_id: str) -> ImportItem:
        item = self.item(uow, identity, item_id)
        if item.review is not ItemReview.PENDING:
            raise FailedPrecondition(
                f"the item is {item.review.value.lower()}, not waiting for review",
                reason="NOT_CANDIDATE",
            )
        rejected = replace(item, review=ItemReview.REJECTED)
        uow.imports.update_item(rejected)
        return rejected


def delete_batch_receipt(
    removed: int, confirmed: int, now: datetime, backup_days: int
) -> DeletionReceipt:
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
