"""Running a restore of this service's own export (docs/export-format.md). All or nothing for
the rules: every line is checked in a first streaming pass (restore.py turns each into a
record), so a malformed or crafted line fails the batch before anything is written. Then what
may not be written here (a used id, a held or deleted key) is skipped record by record, each
kept with its reason as an item of the batch; the rest is written in chunks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any

from memory_service.imports.domain.chunks import ITEM_CHUNK, RESTORE_CHUNK, chunked
from memory_service.imports.domain.parsers import ArchiveError, iter_export
from memory_service.imports.domain.restore import (
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
from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import require_admin
from memory_service.kernel.domain.errors import PermissionDenied, Reason
from memory_service.kernel.domain.model import (
    RESTORER_ROLE,
    CustomerGrant,
    Identity,
    ImportBatch,
    ImportItem,
    ItemOutcome,
    Memory,
    Message,
    RestoreMode,
    SkipReason,
    Speaker,
    new_id,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.public import staleness

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


def restore(
    uow: UnitOfWork, batch: ImportBatch, archive: bytes, now: datetime, secrets: SecretDetector
) -> str:
    """Restores the archive into the batch's tenant; returns why the batch failed, or "" when
    it was written (its counts set). Deletion markers are written before live memories, so a
    marker in the archive holds for the memories after it."""
    restorer = Restorer(batch.user_id, now)
    try:
        _check_archive(uow.tenant_id, archive, restorer, secrets)
    except ArchiveError as error:
        return str(error)
    if batch.restore_mode is RestoreMode.CLEAN and uow.archive.has_memories():
        return f"tenant: {TENANT_NOT_EMPTY}"
    run = RestoreRun(uow, batch, now)
    for chunk in chunked(_records(uow.tenant_id, archive, restorer, live=False), RESTORE_CHUNK):
        run.write_records(chunk)
    for chunk in chunked(_records(uow.tenant_id, archive, restorer, live=True), RESTORE_CHUNK):
        run.write_memories([(where, memory) for where, memory in chunk])
    run.flush()
    batch.accepted_count, batch.skipped_count = run.restored, run.ordinal
    return ""


def _check_archive(
    tenant_id: str, archive: bytes, restorer: Restorer, secrets: SecretDetector
) -> None:
    batches: set[str] = set()
    said: dict[str, tuple[str, str]] = {}  # bounded by the archive's own size
    first = True
    for where, record in iter_export(archive):
        kind = check_schema(record, where)
        if first != (kind == "export"):
            raise ArchiveError(f"{where}.record", "the export header is the first line only")
        first = False
        if kind == "memory":
            check_said(to_memory(record, tenant_id, where, secrets, restorer), said, where)
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
            item = to_item(record, tenant_id, where, secrets)
            if item.batch_id not in batches:
                raise ArchiveError(f"{where}.batch_id", "names no batch earlier in the export")
        else:
            check_header(record, where)
    if first:
        raise ArchiveError("line 1", "the export is empty")


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


class RestoreRun:
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
