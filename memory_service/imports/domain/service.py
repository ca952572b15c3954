"""Imports as evidence for review (I11). Items are classified, deduplicated by lineage and kept
for the user; nothing imported is active until the user confirms it, and an item whose lineage
matches a superseded, rejected or deleted revision cannot become active again."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime

from memory_service.imports.domain.chunks import ITEM_CHUNK, chunked
from memory_service.imports.domain.parsers import (
    ArchiveError,
    ArchiveItem,
    iter_chatgpt,
    iter_summary,
)
from memory_service.imports.domain.restore_run import TENANT_NOT_EMPTY, check_restorer, restore
from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.errors import (
    FailedPrecondition,
    NotFound,
    Reason,
    ResourceExhausted,
)
from memory_service.kernel.domain.model import (
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
    RestoreMode,
    Revision,
    SkipReason,
    Speaker,
    new_id,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.public import (
    CreateMemory,
    DeletionReceipt,
    MemoryUseCases,
    ProvenanceDraft,
    RevisionDraft,
    archive_time,
    grounding,
    import_batch_receipt,
    own_memory,
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
# Archives of one user waiting for the background parser; each is stored until parsed.
MAX_PENDING_ARCHIVES = 2
# A background parse that never finished (the process died) is tried this many times.
MAX_PARSE_ATTEMPTS = 3


def _item(
    batch: ImportBatch,
    entry: ArchiveItem,
    said: datetime | None,
    ordinal: int,
    outcome: ItemOutcome,
    skip_reason: SkipReason,
    text: str = "",
    lineage_hash: str = "",
    *,
    review: ItemReview = ItemReview.NONE,
    attachment: str = "",
) -> ImportItem:
    """One item of `batch` for an archive entry (its text and lineage hash as kept)."""
    return ImportItem(
        id=new_id(),
        batch_id=batch.id,
        tenant_id=batch.tenant_id,
        user_id=batch.user_id,
        ordinal=ordinal,
        outcome=outcome,
        skip_reason=skip_reason,
        speaker=entry.speaker,
        text=text,
        lineage_hash=lineage_hash,
        source_time=said,
        source_ref=entry.source_ref,
        attachment=attachment,
        review=review,
    )


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
        restore_mode: RestoreMode = RestoreMode.CLEAN,
    ) -> tuple[ImportBatch, bool]:
        """Returns the batch and whether this archive had been imported before."""
        restoring = archive_format is ArchiveFormat.CRMMEM_EXPORT
        if restoring:
            check_restorer(identity, restore_mode)
        digest = hashlib.sha256(archive).hexdigest()
        existing = uow.imports.find_batch(identity.user_id, digest)
        if existing is not None and existing.state is not ImportState.FAILED:
            return existing, True
        if restoring and restore_mode is RestoreMode.CLEAN and uow.archive.has_memories():
            raise FailedPrecondition(
                f"the tenant {TENANT_NOT_EMPTY}", reason=Reason.TENANT_NOT_EMPTY
            )
        background = len(archive) > INLINE_LIMIT
        if background and uow.imports.count_pending(identity.user_id) >= MAX_PENDING_ARCHIVES:
            raise ResourceExhausted(
                f"{MAX_PENDING_ARCHIVES} archives of yours are still waiting to be parsed; "
                "submit this one when one of them has finished",
                reason=Reason.TOO_MANY_PENDING_IMPORTS,
                metadata={"limit": str(MAX_PENDING_ARCHIVES)},
            )
        if existing is not None:
            uow.imports.remove_batch(existing.id)  # a failed attempt may be retried
        batch = ImportBatch(
            new_id(), uow.tenant_id, identity.user_id, archive_format, digest,
            ImportState.PENDING, now, restore_mode=restore_mode,
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
        for chunk in chunked(parse(archive), ITEM_CHUNK):
            hashes = [rules.lineage_hash(e.text) for e in chunk]
            known = uow.imports.known_lineage(batch.user_id, hashes)
            items: list[ImportItem] = []
            for entry, digest in zip(chunk, hashes, strict=True):
                outcome, reason = classify(entry, summary, self._secrets)
                if outcome is not ItemOutcome.SKIPPED and (digest in known or digest in seen):
                    outcome, reason = ItemOutcome.SKIPPED, SkipReason.DUPLICATE
                seen.add(digest)
                said = archive_time(entry.source_time, batch.create_time)
                keep_text = reason is not SkipReason.SECRET  # a secret's text is never stored
                text, digest = (entry.text, digest) if keep_text else ("", "")
                review = ItemReview.NONE if outcome is ItemOutcome.SKIPPED else ItemReview.PENDING
                here = (batch, entry, said)
                at = ordinal + len(items)
                items.append(_item(*here, at, outcome, reason, text, digest, review=review))
                for name in entry.missing_attachments:
                    at, missing = ordinal + len(items), ItemOutcome.MISSING_ATTACHMENT
                    items.append(_item(*here, at, missing, SkipReason.NONE, attachment=name))
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
        """This service's own export, restored (restore_run.py); a batch that may not be
        written fails with the reason."""
        failure = restore(uow, batch, archive, now, self._secrets)
        if failure:
            self._fail(uow, batch, failure, now)
            return
        batch.state, batch.complete_time = ImportState.SUCCEEDED, now
        uow.imports.update_batch(batch)

    def get(self, uow: UnitOfWork, identity: Identity, batch_id: str) -> ImportBatch:
        batch = uow.imports.get_batch(batch_id)
        if batch is None or batch.user_id != identity.user_id:
            raise NotFound(names.import_batch(batch_id))
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
            raise NotFound(names.import_item("-", item_id))
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
                reason=Reason.NOT_CANDIDATE,
            )
        scope = own_memory(identity)
        value = value or item.text
        self._secrets.refuse("value", value)
        ungrounded = grounding(value, "", item.text)
        if ungrounded:
            raise FailedPrecondition(
                f"{ungrounded}: an edited value must still say what the item says",
                reason=Reason.UNGROUNDED,
            )
        existing = uow.memories.find_live(scope, key, key_context)
        draft = RevisionDraft(
            value,
            None,
            None,
            ProvenanceDraft(
                None,
                ProvenanceMethod.IMPORT,
                EvidenceRef(EvidenceType.IMPORT_ITEM, names.import_item(item.batch_id, item.id)),
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
        return removed, import_batch_receipt(removed, confirmed, now, backup_days)

    def reject(self, uow: UnitOfWork, identity: Identity, item_id: str) -> ImportItem:
        item = self.item(uow, identity, item_id)
        if item.review is not ItemReview.PENDING:
            raise FailedPrecondition(
                f"the item is {item.review.value.lower()}, not waiting for review",
                reason=Reason.NOT_CANDIDATE,
            )
        rejected = replace(item, review=ItemReview.REJECTED)
        uow.imports.update_item(rejected)
        return rejected
