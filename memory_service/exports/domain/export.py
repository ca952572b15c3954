"""Export: JSON Lines following `schemas/memory-export.v2.schema.json` (field names and their
Portable AI Memory counterparts: docs/export-format.md). Every line is one record with a
`record` type; the first is the export's header. Pure functions build each record, and
`ExportUseCases.records` pages through the store one short read transaction at a time."""

from __future__ import annotations

import enum
import hashlib
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from memory_service.kernel.domain import names
from memory_service.kernel.domain.authorization import require_admin
from memory_service.kernel.domain.conversations import may_read_evidence
from memory_service.kernel.domain.etags import etag_of
from memory_service.kernel.domain.model import (
    Customer,
    CustomerGrant,
    EvidenceType,
    Identity,
    ImportBatch,
    ImportItem,
    Memory,
    Message,
    Provenance,
    Revision,
    ScopeType,
    SkipReason,
)
from memory_service.kernel.domain.ports import MemoryQuery, UnitOfWork, Visibility

SCHEMA_ID = "crmmem.memory-export/v2"
SCHEMA_VERSION = "2.1"  # 2.1: document and review-decision evidence (additive)
EXPORTED_BY = "crmmem-memory-service/2"
PAGE = 100  # records read per transaction
T = TypeVar("T")
Reader = Callable[[Callable[[UnitOfWork], T]], T]


def time_text(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def content_hash(text: str) -> str:
    """The Portable AI Memory content hash: trimmed, lower-cased, NFC, single spaces, SHA-256."""
    normal = unicodedata.normalize("NFC", text.strip().lower())
    normal = " ".join(normal.split())
    return "sha256:" + hashlib.sha256(normal.encode()).hexdigest()


def evidence_parts(evidence_type: EvidenceType, ref: str) -> tuple[str | None, str | None]:
    """(conversation_ref, message_ref) of a transcript message reference, else (None, None)."""
    if evidence_type is EvidenceType.TRANSCRIPT_MESSAGE:
        ids = names.MESSAGE.match(ref)
        if ids:
            return names.conversation(ids[0]), ids[1]
    return None, None


def _document(provenance: Provenance, deleted: bool) -> dict[str, Any] | None:
    """Document evidence: the reference, the version read and the supporting passage. A
    deletion marker keeps the version (its lineage hash covers it), never the URI or excerpt."""
    if provenance.evidence.type is not EvidenceType.DOCUMENT:
        return None
    return {
        "uri": None if deleted else provenance.evidence.ref,
        "version": provenance.document_version,
        "excerpt": provenance.excerpt,
    }


def _revision(revision: Revision, deleted: bool) -> dict[str, Any]:
    provenance = revision.provenance
    confirmation = revision.confirmation
    conversation_ref, message_ref = evidence_parts(
        provenance.evidence.type, provenance.evidence.ref
    )
    return {
        "number": revision.number,
        "content": revision.value,
        "content_hash": content_hash(revision.value) if revision.value else None,
        "status": revision.status.value,
        "status_reason": revision.status_reason,
        "temporal": {
            "created_at": time_text(revision.create_time),
            "valid_from": time_text(revision.valid_from),
            "valid_until": time_text(revision.valid_until),
            "superseded_from": time_text(revision.superseded_from),
            "superseded_by": revision.superseded_by_number or None,
        },
        "replaces": revision.replaces_number or None,
        "author_user_id": revision.author_user_id,
        "provenance": {
            "speaker": provenance.speaker.value,
            "extraction_method": provenance.method.value,
            "evidence_type": provenance.evidence.type.value,
            "evidence": provenance.evidence.ref,
            "conversation_ref": conversation_ref,
            "message_ref": message_ref,
            "quote": provenance.quote,
            "source_time": time_text(provenance.source_time),
            "document": _document(provenance, deleted),
            "kept_memory": (
                provenance.evidence.ref
                if provenance.evidence.type is EvidenceType.KEPT_MEMORY and not deleted
                else None
            ),
        },
        "source_change_time": time_text(revision.source_change_time),
        "confirmation": (
            None
            if confirmation is None
            else {
                "user_id": confirmation.user_id,
                "confirm_time": time_text(confirmation.confirm_time),
                "restored_by": confirmation.restored_by or None,
                "restore_time": time_text(confirmation.restore_time),
            }
        ),
    }


def memory_record(memory: Memory) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "record": "memory",
        "id": memory.id,
        "scope": {"type": memory.scope.type.value, "id": memory.scope.id},
        "key": memory.key,
        "key_context": memory.key_context,
        "kind": memory.kind.value,
        "etag": etag_of(memory),
        "temporal": {
            "created_at": time_text(memory.create_time),
            "updated_at": time_text(memory.update_time),
            "deleted_at": time_text(memory.delete_time),
        },
        "key_hash": memory.key_hash,
        "revisions": [_revision(r, memory.deleted) for r in memory.revisions],
    }


def message_record(message: Message, with_text: bool) -> dict[str, Any]:
    """The evidence a revision cites. Without `with_text` only a stable reference and the
    text's hash: the quote in the revision explains the provenance, the conversation stays
    where it is."""
    return {
        "schema": SCHEMA_ID,
        "record": "message",
        "id": message.id,
        "name": f"conversations/{message.conversation_id}/messages/{message.id}",
        "conversation_ref": f"conversations/{message.conversation_id}",
        "owner_user_id": message.author_user_id,
        "sequence": message.sequence,
        "speaker": message.speaker.value,
        "status": message.status.value,
        "created_at": time_text(message.create_time),
        "content": message.text if with_text else None,
        "content_hash": content_hash(message.text),
    }


# The records that copy their fields (under the schema's name, `name=field` where it differs
# from the field's), each enum as its value and each instant as text.
_CUSTOMER = "customer_id display_name created_at=create_time"
_GRANT = "user_id customer_id granted_by_user_id created_at=create_time"
_BATCH = (
    "id user_id format archive_sha256 state error accepted_count skipped_count unresolved_count"
    " missing_attachment_count=missing_count created_at=create_time completed_at=complete_time"
)
_ITEM = (
    "id batch_id user_id ordinal outcome skip_reason speaker content=text lineage_hash"
    " source_time source_ref attachment review memory_id"
)


def _copied(record: str, value: object, fields: str) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA_ID, "record": record}
    for field in fields.split():
        name, _, attribute = field.partition("=")
        got = getattr(value, attribute or name)
        if isinstance(got, enum.Enum):
            got = got.value
        elif isinstance(got, datetime):
            got = time_text(got)
        out[name] = got
    return out


def customer_record(customer: Customer) -> dict[str, Any]:
    return _copied("customer", customer, _CUSTOMER)


def grant_record(grant: CustomerGrant) -> dict[str, Any]:
    return _copied("grant", grant, _GRANT)


def batch_record(batch: ImportBatch) -> dict[str, Any]:
    return _copied("import_batch", batch, _BATCH)


def item_record(item: ImportItem) -> dict[str, Any]:
    return _copied("import_item", item, _ITEM)


def header_record(parent: str, since: datetime | None, now: datetime) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "record": "export",
        "schema_version": SCHEMA_VERSION,
        "export_id": str(uuid.uuid4()),
        "exported_by": EXPORTED_BY,
        "export_date": time_text(now),
        "export_type": "full" if since is None else "incremental",
        "since": time_text(since),
        "parent": parent,
    }


# One page of each kind of record, read in its own short transaction.
def _customers(after: str, since: datetime | None, uow: UnitOfWork) -> list[Customer]:
    return uow.archive.customers_after(after, since, PAGE)


def _grants(after: tuple[str, str], uow: UnitOfWork) -> list[CustomerGrant]:
    return uow.grants.list_after(None, after, PAGE)


def _memories(query: MemoryQuery, after: str, uow: UnitOfWork) -> list[Memory]:
    return uow.memories.list_after(query, after, PAGE)


def _messages(ids: list[str], uow: UnitOfWork) -> dict[str, Message]:
    return uow.archive.messages(ids)


def _batches(
    user_id: str | None, after: str, since: datetime | None, uow: UnitOfWork
) -> list[ImportBatch]:
    return uow.archive.batches_after(user_id, after, since, PAGE)


def _items(batch_id: str, after_ordinal: int, uow: UnitOfWork) -> list[ImportItem]:
    return uow.imports.list_items(batch_id, None, after_ordinal, PAGE)


class ExportUseCases:
    """Who may export what: their own user memory, or (admins) a user's or the tenant's. The
    tenant's export also carries customers and grants; every export carries the import
    batches and items of the users it covers (never a skipped secret) and the messages its
    revisions cite (their text only when the caller may read that conversation)."""

    def query(
        self,
        identity: Identity,
        user_id: str | None,
        include_deleted: bool,
        since: datetime | None = None,
    ) -> MemoryQuery:
        if user_id is None:
            require_admin(identity)
            return MemoryQuery(
                Visibility(None, None), show_deleted=include_deleted, changed_since=since
            )
        if user_id != identity.user_id:
            require_admin(identity)
        return MemoryQuery(
            Visibility(frozenset({user_id}), frozenset(), organization=False),
            scope_type=ScopeType.USER,
            scope_id=user_id,
            show_deleted=include_deleted,
            changed_since=since,
        )

    def records(
        self,
        read: Reader[Any],
        identity: Identity,
        user_id: str | None,
        include_deleted: bool,
        since: datetime | None,
        now: datetime,
    ) -> Iterator[dict[str, Any]]:
        """Checks the caller first (raises before anything is yielded), then pages."""
        query = self.query(identity, user_id, include_deleted, since)
        return self._records(read, identity, query, user_id, since, now)

    def _records(
        self,
        read: Reader[Any],
        identity: Identity,
        query: MemoryQuery,
        user_id: str | None,
        since: datetime | None,
        now: datetime,
    ) -> Iterator[dict[str, Any]]:
        yield header_record("tenant" if user_id is None else f"users/{user_id}", since, now)
        if user_id is None:
            after = ""
            while page := read(partial(_customers, after, since)):
                yield from (customer_record(c) for c in page)
                after = page[-1].customer_id
            cursor = ("", "")
            while grants := read(partial(_grants, cursor)):
                yield from (
                    grant_record(g) for g in grants if since is None or g.create_time >= since
                )
                cursor = (grants[-1].user_id, grants[-1].customer_id)
        yield from self._imports(read, user_id, since)
        shown: set[str] = set()
        after = ""
        while memories := read(partial(_memories, query, after)):
            cited = [
                ids[1]
                for memory in memories
                for revision in memory.revisions
                if revision.provenance.evidence.type is EvidenceType.TRANSCRIPT_MESSAGE
                and (ids := names.MESSAGE.match(revision.provenance.evidence.ref))
                and ids[1] not in shown
            ]
            if cited:
                messages = read(partial(_messages, cited))
                for message_id in sorted(messages):
                    message = messages[message_id]
                    shown.add(message_id)
                    yield message_record(message, may_read_evidence(identity, message))
            yield from (memory_record(m) for m in memories)
            after = memories[-1].id

    @staticmethod
    def _imports(
        read: Reader[Any], user_id: str | None, since: datetime | None
    ) -> Iterator[dict[str, Any]]:
        after = ""
        while batches := read(partial(_batches, user_id, after, since)):
            for batch in batches:
                yield batch_record(batch)
                ordinal = -1
                while items := read(partial(_items, batch.id, ordinal)):
                    yield from (
                        item_record(i) for i in items if i.skip_reason is not SkipReason.SECRET
                    )
                    ordinal = items[-1].ordinal
            after = batches[-1].id
