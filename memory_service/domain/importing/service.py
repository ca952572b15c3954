"""Imports as evidence for review (I11). Items are classified, deduplicated by lineage and kept
for the user; nothing imported is active until the user confirms it, and an item whose lineage
matches a superseded, rejected or deleted revision cannot become active again."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from memory_service.domain import authority, evidence, grounding, names, rules
from memory_service.domain.authorization import require_admin
from memory_service.domain.errors import (
    FailedPrecondition,
    NotFound,
    PermissionDenied,
    Reason,
    ResourceExhausted,
)
from memory_service.domain.evidence_resolution import staleness
from memory_service.domain.importing.parsers import (
    ArchiveError,
    ArchiveItem,
    iter_chatgpt,
    iter_export,
    iter_summary,
)
from memory_service.domain.importing.restore import (
    Restorer,
    check_header,
    check_said,
    check_schema,
    extends,
    restore_offer,
    to_batch,
    to_customer,
    to_grant,
    to_item,
    to_memory,
    to_message,
)
from memory_service.domain.memory_requests import CreateMemory, ProvenanceDraft, RevisionDraft
from memory_service.domain.memory_writes import MemoryUseCases
from memory_service.domain.model import (
    RESTORER_ROLE,
    ArchiveFormat,
    CustomerGrant,
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
    Message,
    ProvenanceMethod,
    RestoreMode,
    Revision,
    SkipReason,
    Speaker,
    new_id,
)
from memory_service.domain.ports import UnitOfWork
from memory_service.domain.receipts import DeletionReceipt, import_batch_receipt
from memory_service.domain.secrets import SecretDetector

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
        """All or nothing for the rules: every line is checked in a first streaming pass, so a
        malformed or crafted line fails the batch before anything is written. Then what may
        not be written here (a used id, a held or deleted key) is skipped record by record,
        each with its reason as an item of the batch. Deletion markers are written before
        live memories, so a marker in the archive holds for the memories after it."""
        restorer = Restorer(batch.user_id, now)
        try:
            self._check_archive(uow.tenant_id, archive, restorer)
        except ArchiveError as error:
            self._fail(uow, batch, str(error), now)
            return
        if batch.restore_mode is RestoreMode.CLEAN and uow.archive.has_memories():
            self._fail(uow, batch, f"tenant: {TENANT_NOT_EMPTY}", now)
            return
        run = _RestoreRun(uow, batch, now)
        for chunk in _chunked(self._records(uow.tenant_id, archive, restorer, live=False), 500):
            run.write_records(chunk)
        for chunk in _chunked(self._records(uow.tenant_id, archive, restorer, live=True), 500):
            run.write_memories([(where, memory) for where, memory in chunk])
        run.flush()
        batch.accepted_count, batch.skipped_count = run.restored, run.ordinal
        batch.state, batch.complete_time = ImportState.SUCCEEDED, now
        uow.imports.update_batch(batch)

    def _check_archive(self, tenant_id: str, archive: bytes, restorer: Restorer) -> None:
        batches: set[str] = set()
        said: dict[str, tuple[str, str]] = {}  # bounded by the archive's own size
        first = True
        for where, record in iter_export(archive):
            kind = check_schema(record, where)
            if first != (kind == "export"):
                raise ArchiveError(f"{where}.record", "the export header is the first line only")
            first = False
            if kind == "memory":
                check_said(
                    to_memory(record, tenant_id, where, self._secrets, restorer), said, where
                )
            elif kind == "message":
                message = to_message(record, tenant_id, where)
                if message is not None:
                    said[message.id] = (message.author_user_id, message.text)
            elif kind == "customer":
                to_customer(record, tenant_id, where)
            elif kind == "grant":
                to_grant(record, tenant_id, where)
            elif kind == "import_batch":
                batches.add(to_batch(record, tenant_id, where).id)
            elif kind == "import_item":
                item = to_item(record, tenant_id, where, self._secrets)
                if item.batch_id not in batches:
                    raise ArchiveError(f"{where}.batch_id", "names no batch earlier in the export")
            else:
                check_header(record, where)
        if first:
            raise ArchiveError("line 1", "the export is empty")

    @staticmethod
    def _records(
        tenant_id: str, archive: bytes, restorer: Restorer, *, live: bool
    ) -> Iterator[tuple[str, Any]]:
        """Records already checked: live memories only, or everything else."""
        unchecked = None  # the first pass ran the secret rule on every text
        for where, record in iter_export(archive):
            kind = record["record"]
            if kind == "memory":
                if (record["temporal"]["deleted_at"] is None) == live:
                    yield where, to_memory(record, tenant_id, where, unchecked, restorer)
                continue
            if live:
                continue
            if kind == "message":
                message = to_message(record, tenant_id, where)
                if message is not None:  # a reference only: nothing to write
                    yield where, message
            elif kind == "customer":
                yield where, to_customer(record, tenant_id, where)
            elif kind == "grant":
                yield where, to_grant(record, tenant_id, where)
            elif kind == "import_batch":
                yield where, to_batch(record, tenant_id, where)
            elif kind == "import_item":
                yield where, to_item(record, tenant_id, where, unchecked)

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
        scope = authority.own_memory(identity)
        value = value or item.text
        self._secrets.refuse("value", value)
        ungrounded = grounding.grounding(value, "", item.text)
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


TENANT_NOT_EMPTY = (
    "has memories; a clean restore goes into a tenant with none (deletion markers included), "
    "a merge needs the restorer role"
)


def check_restorer(identity: Identity, mode: RestoreMode) -> None:
    """A clean restore is for admins (and only into an empty tenant); a merge only for the
    restorer role. Both write every scope as it was exported: open to no other caller."""
    if mode is RestoreMode.CLEAN:
        require_admin(identity)
    elif RESTORER_ROLE not in identity.roles:
        raise PermissionDenied(
            "merging an export into existing data needs the restorer role",
            reason=Reason.ROLE_REQUIRED,
            metadata={"role": RESTORER_ROLE},
        )


class _RestoreRun:
    """Writes checked records; what may not be written here is kept as a skipped item of the
    batch with its reason and where it was (line and resource), never its text."""

    def __init__(self, uow: UnitOfWork, batch: ImportBatch, now: datetime) -> None:
        self.uow, self.batch, self.now = uow, batch, now
        self.merge = batch.restore_mode is RestoreMode.MERGE
        self.restored = 0
        self.ordinal = 0
        self.skipped: list[ImportItem] = []
        self.lost_batches: set[str] = set()

    def skip(self, where: str, resource: str, reason: SkipReason) -> None:
        self.skipped.append(
            ImportItem(
                id=new_id(),
                batch_id=self.batch.id,
                tenant_id=self.uow.tenant_id,
                user_id=self.batch.user_id,
                ordinal=self.ordinal,
                outcome=ItemOutcome.SKIPPED,
                skip_reason=reason,
                speaker=Speaker.TOOL,
                text="",
                lineage_hash="",
                source_time=None,
                source_ref=f"{where}: {resource}"[: rules.MAX_SOURCE_REF_CHARS],
            )
        )
        self.ordinal += 1
        if len(self.skipped) >= ITEM_CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.skipped:
            self.uow.imports.add_items(self.skipped)
            self.skipped = []

    def write_records(self, chunk: list[tuple[str, Any]]) -> None:
        uow = self.uow
        by_kind: dict[str, set[str]] = {}
        for kind, model in (
            ("import_batch", ImportBatch),
            ("import_item", ImportItem),
            ("message", Message),
        ):
            ids = [r.id for _, r in chunk if isinstance(r, model)]
            by_kind[kind] = uow.archive.ids_in_use(kind, ids) if ids else set()
        memories: list[tuple[str, Memory]] = []
        for where, record in chunk:
            if isinstance(record, Memory):
                memories.append((where, record))
            elif isinstance(record, tuple):
                customer, match_name = record
                if uow.customers.get(customer.customer_id) is not None:
                    self.skip(where, f"customers/{customer.customer_id}", SkipReason.DUPLICATE)
                else:
                    uow.customers.upsert(customer, match_name)
            elif isinstance(record, CustomerGrant):
                name = f"users/{record.user_id}/customerGrants/{record.customer_id}"
                if uow.grants.get(record.user_id, record.customer_id) is not None:
                    self.skip(where, name, SkipReason.DUPLICATE)
                else:
                    uow.grants.add(record)
            elif isinstance(record, ImportBatch):
                name = names.import_batch(record.id)
                if record.id in by_kind["import_batch"]:
                    self.lost_batches.add(record.id)
                    self.skip(where, name, SkipReason.ID_COLLISION)
                elif uow.imports.find_batch(record.user_id, record.archive_sha256) is not None:
                    self.lost_batches.add(record.id)
                    self.skip(where, name, SkipReason.DUPLICATE)
                else:
                    uow.imports.add_batch(record, None)
            elif isinstance(record, ImportItem):
                if record.id in by_kind["import_item"] or record.batch_id in self.lost_batches:
                    self.skip(
                        where,
                        names.import_item(record.batch_id, record.id),
                        SkipReason.ID_COLLISION,
                    )
                else:
                    uow.imports.add_items([record])
            elif isinstance(record, Message):
                name = names.message(record.conversation_id, record.id)
                if record.id in by_kind["message"]:
                    mine = uow.archive.messages([record.id]).get(record.id)
                    same = mine is not None and mine == replace(mine, **_message_fields(record))
                    self.skip(
                        where, name, SkipReason.DUPLICATE if same else SkipReason.ID_COLLISION
                    )
                elif uow.archive.sequence_taken(record):
                    self.skip(where, name, SkipReason.ID_COLLISION)
                else:
                    uow.archive.add_message(record)
        if memories:
            self.write_memories(memories)

    def write_memories(self, chunk: list[tuple[str, Memory]]) -> None:
        uow = self.uow
        ids = [m.id for _, m in chunk]
        in_use = uow.archive.ids_in_use("memory", ids)
        mine = uow.memories.get_many(ids) if in_use else {}
        for where, memory in chunk:
            name = names.memory(memory.id)
            if memory.id in mine:
                here = mine[memory.id]
                if self.merge and extends(here, memory):
                    _keep_confirmations(here, memory)
                    uow.archive.replace_memory(memory)
                    uow.outbox.enqueue(memory.id, self.now, self.now)
                    self.restored += 1
                elif here.version == memory.version:
                    self.skip(where, name, SkipReason.DUPLICATE)  # already here as it is
                else:
                    self.skip(where, name, SkipReason.ID_COLLISION)
                continue
            if memory.id in in_use:  # in another tenant: said the same way as in this one
                self.skip(where, name, SkipReason.ID_COLLISION)
                continue
            if not memory.deleted:
                reason = self._refused(memory)
                if reason is not None:
                    self.skip(where, name, reason)
                    continue
            uow.memories.add(memory)
            if not memory.deleted:
                uow.outbox.enqueue(memory.id, self.now, self.now)
            self.restored += 1

    def _refused(self, memory: Memory) -> SkipReason | None:
        """One live memory per key; a key deleted here after it was said stays deleted."""
        uow = self.uow
        live = uow.memories.find_live(memory.scope, memory.key, memory.key_context)
        if live is not None and live.id != memory.id:
            return SkipReason.KEY_HELD
        offered = restore_offer(memory)
        key = (memory.scope, memory.key, memory.key_context)
        if offered is not None and staleness(uow, key, offered, self.now):
            return SkipReason.KEY_DELETED
        return None


def _message_fields(message: Message) -> dict[str, Any]:
    return {
        "conversation_id": message.conversation_id,
        "sequence": message.sequence,
        "text": message.text,
        "author_user_id": message.author_user_id,
    }


def _keep_confirmations(here: Memory, incoming: Memory) -> None:
    """A revision already restored keeps who restored it and when."""
    for old, new in zip(here.revisions, incoming.revisions, strict=False):
        if (
            old.confirmation is not None
            and new.confirmation is not None
            and (old.confirmation.user_id, old.confirmation.confirm_time)
            == (new.confirmation.user_id, new.confirmation.confirm_time)
        ):
            new.confirmation = old.confirmation
