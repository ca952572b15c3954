"""Reading this service's own export back (docs/export-format.md): every line becomes a domain
record under the rules the API applies to the same fields (ids and names, lengths, NUL,
numbers, states, interval order, the authority rule, secrets), or the batch fails naming the
line and field. Whether a valid record may be written here (ids, keys, deletion markers) is
decided in `restore_run.py` against the store."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_service.documents.public import document_excerpt, document_ref, document_version
from memory_service.exports.public import SCHEMA_ID, content_hash, evidence_parts
from memory_service.imports.domain.fields import (
    archive_error,
    check_content_hash,
    get_enum,
    get_id,
    get_number,
    get_object,
    get_optional_number,
    get_required_time,
    get_subject,
    get_text,
    get_time,
    get_typed,
    refuse_secret,
)
from memory_service.imports.domain.parsers import ArchiveError, stored
from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import parse_etag
from memory_service.kernel.domain.model import (
    ArchiveFormat,
    Confirmation,
    Customer,
    CustomerGrant,
    EvidenceRef,
    EvidenceType,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
    Memory,
    MemoryKind,
    Message,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    SkipReason,
    Speaker,
    TurnStatus,
)
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.public import (
    Offered,
    grounding,
    initial_status,
    said_time,
    user_said_it,
)

SHA256 = re.compile(r"[0-9a-f]{64}")
DELETED_EVIDENCE = re.compile(r"sha256:[0-9a-f]{64}")
# Evidence references by type; DOCUMENT's is checked by documents/domain/documents.py with its
# version.
REFERENCES = {
    EvidenceType.TRANSCRIPT_MESSAGE: names.MESSAGE,
    EvidenceType.IMPORT_ITEM: names.IMPORT_ITEM,
    EvidenceType.KEPT_MEMORY: names.MEMORY,
}
# Methods that come with one kind of evidence only, and evidence only they come with.
EVIDENCE_OF = {
    ProvenanceMethod.DOCUMENT: EvidenceType.DOCUMENT,
    ProvenanceMethod.REVIEW_DECISION: EvidenceType.KEPT_MEMORY,
}


@dataclass(frozen=True)
class Restorer:
    """Who runs the restore and when: restored confirmations say so."""

    user_id: str
    time: datetime


# --- records ----------------------------------------------------------------------------------


def check_header(record: dict[str, Any], path: str) -> str:
    """The first line: which export this is ("full" or "incremental")."""
    if record.get("record") != "export":
        raise ArchiveError(f"{path}.record", "the first line must be the export header")
    kind = get_typed(record, "export_type", str, path)
    if kind not in ("full", "incremental"):
        raise ArchiveError(f"{path}.export_type", "must be full or incremental")
    get_time(record, "since", path, optional=True)
    get_required_time(record, "export_date", path)
    return str(kind)


def to_memory(
    record: dict[str, Any],
    tenant_id: str,
    path: str,
    secrets: SecretDetector | None,
    restorer: Restorer,
) -> Memory:
    memory_id = get_id(record, "id", path)
    scope = _scope(get_object(record, "scope", path), f"{path}.scope")
    temporal = get_object(record, "temporal", path)
    created = get_required_time(temporal, "created_at", f"{path}.temporal")
    updated = get_required_time(temporal, "updated_at", f"{path}.temporal")
    deleted = get_time(temporal, "deleted_at", f"{path}.temporal", optional=True)
    if updated < created:
        raise ArchiveError(f"{path}.temporal.updated_at", "is before created_at")
    if deleted is not None and deleted < created:
        raise ArchiveError(f"{path}.temporal.deleted_at", "is before created_at")
    key, key_context, key_hash = _key(record, deleted is not None, path)
    version = _version(record, path)
    memory = Memory(
        id=memory_id,
        tenant_id=tenant_id,
        scope=scope,
        key=key,
        key_context=key_context,
        kind=get_enum(record, "kind", MemoryKind, path),
        version=version,
        create_time=created,
        update_time=updated,
        delete_time=deleted,
        key_hash=key_hash,
    )
    _add_revisions(memory, get_typed(record, "revisions", list, path), path, secrets, restorer)
    return memory


def _scope(scope_record: dict[str, Any], path: str) -> Scope:
    scope_type = get_enum(scope_record, "type", ScopeType, path)
    if not rules.names_a_subject(scope_type):
        if get_typed(scope_record, "id", str, path):
            raise ArchiveError(f"{path}.id", "must be empty for ORGANIZATION")
        return Scope(scope_type, "")
    return Scope(scope_type, get_subject(scope_record, "id", path))


def _key(record: dict[str, Any], deleted: bool, path: str) -> tuple[str, str, str]:
    """(key, key_context, key_hash): a live memory's key as the API accepts it, or the hash a
    deletion marker keeps in its place."""
    key = get_typed(record, "key", str, path)
    key_context = get_typed(record, "key_context", str, path)
    key_hash = get_typed(record, "key_hash", str, path)
    if not deleted:
        if not rules.KEY_PATTERN.fullmatch(key):
            raise ArchiveError(f"{path}.key", "is not a valid key")
        if key_context and not rules.KEY_PATTERN.fullmatch(key_context):
            raise ArchiveError(f"{path}.key_context", "is not a valid key")
        if key_hash:
            raise ArchiveError(f"{path}.key_hash", "is only set on deleted memories")
    elif (key, key_context) != ("deleted", "") or not SHA256.fullmatch(key_hash):
        raise ArchiveError(f"{path}.key", "a deleted memory keeps only the hash of its key")
    return key, key_context, key_hash


def _version(record: dict[str, Any], path: str) -> int:
    """The memory's version, from its etag as the API reads one."""
    try:
        version = parse_etag(get_typed(record, "etag", str, path), f"{path}.etag", required=True)
    except InvalidArgument as error:
        raise archive_error(error) from None
    if version is None or version > rules.MAX_STORED_INT:
        raise ArchiveError(f"{path}.etag", f"names a version past {rules.MAX_STORED_INT}")
    return version


def _add_revisions(
    memory: Memory,
    revisions: list[Any],
    path: str,
    secrets: SecretDetector | None,
    restorer: Restorer,
) -> None:
    """The revisions, numbered 1, 2, ... in order, each passing the secret rule; the etag is no
    older than they are and a supersession names one of them."""
    if not revisions:
        raise ArchiveError(f"{path}.revisions", "is empty")
    for index, raw in enumerate(revisions):
        where = f"{path}.revisions[{index}]"
        revision = _revision(raw, memory, where, restorer)
        if revision.number != index + 1:
            raise ArchiveError(f"{where}.number", f"must be {index + 1}: numbers are consecutive")
        refuse_secret(revision.value, f"{where}.content", secrets)
        refuse_secret(revision.provenance.quote, f"{where}.provenance.quote", secrets)
        refuse_secret(revision.provenance.excerpt, f"{where}.provenance.document.excerpt", secrets)
        memory.revisions.append(revision)
    if memory.version < len(memory.revisions):
        raise ArchiveError(f"{path}.etag", "is older than the memory's revisions")
    for index, revision in enumerate(memory.revisions):
        if revision.superseded_by_number > len(memory.revisions):
            raise ArchiveError(
                f"{path}.revisions[{index}].temporal.superseded_by", "names no revision"
            )


def _revision(raw: Any, memory: Memory, path: str, restorer: Restorer) -> Revision:
    if not isinstance(raw, dict):
        raise ArchiveError(path, "is not an object")
    number = get_number(raw, "number", path, 1, rules.MAX_REVISION_NUMBER)
    status = get_enum(raw, "status", RevisionStatus, path)
    value = _content(raw, memory, status, path)
    temporal = get_object(raw, "temporal", path)
    valid_from = get_time(temporal, "valid_from", f"{path}.temporal", optional=True)
    valid_until = get_time(temporal, "valid_until", f"{path}.temporal", optional=True)
    try:
        rules.check_interval(valid_from, valid_until, f"{path}.temporal")
    except InvalidArgument as error:
        raise archive_error(error) from None
    superseded_by, superseded_from = _supersession(temporal, number, f"{path}.temporal")
    provenance = _provenance(get_object(raw, "provenance", path), memory.deleted, path)
    confirmed = _confirmation(raw, path, restorer)
    author = get_subject(raw, "author_user_id", path)
    if status is RevisionStatus.ACTIVE and confirmed is None and not memory.deleted:
        _check_authority(memory, value, provenance, author, path)
    return Revision(
        memory_id=memory.id,
        number=number,
        value=value,
        valid_from=valid_from,
        valid_until=valid_until,
        status=status,
        provenance=provenance,
        create_time=get_required_time(temporal, "created_at", f"{path}.temporal"),
        author_user_id=author,
        replaces_number=_replaces(raw, number, path),
        superseded_from=superseded_from,
        superseded_by_number=superseded_by,
        confirmation=confirmed,
        status_reason=get_text(raw, "status_reason", path, rules.MAX_VALUE_CHARS),
        source_change_time=_source_change_time(raw, provenance, path),
    )


def _content(raw: dict[str, Any], memory: Memory, status: RevisionStatus, path: str) -> str:
    """The revision's value, matching its content hash: empty and DELETED on a deletion
    marker, else present and in a state the store keeps."""
    value = get_text(raw, "content", path, rules.MAX_VALUE_CHARS)
    check_content_hash(raw, value, path)
    if memory.deleted:
        if status is not RevisionStatus.DELETED or value:
            raise ArchiveError(f"{path}.status", "a deleted memory's revisions are DELETED, empty")
    elif status in (RevisionStatus.DELETED, RevisionStatus.SUPERSEDED):
        raise ArchiveError(f"{path}.status", f"{status.value} is not a stored state here")
    elif not value.strip():
        raise ArchiveError(f"{path}.content", "is required")
    return value


def _supersession(temporal: dict[str, Any], number: int, path: str) -> tuple[int, datetime | None]:
    """(superseded_by, superseded_from): a later revision and when, or neither."""
    superseded_by = get_optional_number(
        temporal, "superseded_by", path, number + 1, rules.MAX_REVISION_NUMBER
    )
    superseded_from = get_time(temporal, "superseded_from", path, optional=True)
    if bool(superseded_by) != (superseded_from is not None):
        raise ArchiveError(
            f"{path}.superseded_by", "and superseded_from are set together or not at all"
        )
    return superseded_by, superseded_from


def _confirmation(raw: dict[str, Any], path: str, restorer: Restorer) -> Confirmation | None:
    """Who confirmed the revision and when, as exported; the restorer and the restore time
    are added, so a restored confirmation says it was restored."""
    confirmation = raw.get("confirmation")
    if confirmation is None:
        return None
    if not isinstance(confirmation, dict):
        raise ArchiveError(f"{path}.confirmation", "is not an object")
    where = f"{path}.confirmation"
    return Confirmation(
        get_subject(confirmation, "user_id", where),
        get_required_time(confirmation, "confirm_time", where),
        restored_by=restorer.user_id,
        restore_time=restorer.time,
    )


def _check_authority(
    memory: Memory, value: str, provenance: Provenance, author: str, path: str
) -> None:
    """An unconfirmed ACTIVE revision of a live memory is authoritative on its own: a document
    fact the API would write ACTIVE, or the subject's own words (I5)."""
    if provenance.method is ProvenanceMethod.DOCUMENT:
        _check_document_authority(memory, value, provenance, author, path)
    elif not user_said_it(provenance.speaker, provenance.method):
        # I5: only the subject's own words are authoritative without a confirmation
        raise ArchiveError(
            f"{path}.status", "an inferred revision is ACTIVE only with a confirmation"
        )


def _check_document_authority(
    memory: Memory, value: str, provenance: Provenance, author: str, path: str
) -> None:
    """An unconfirmed ACTIVE document fact passes the rule the API writes it under
    (`initial_status`): customer or organization memory, its excerpt supporting it."""
    status, why = initial_status(memory.scope, provenance, author, provenance.excerpt, value)
    if status is not RevisionStatus.ACTIVE:
        raise ArchiveError(f"{path}.status", f"is ACTIVE only with a confirmation: {why}")


def _source_change_time(raw: dict[str, Any], provenance: Provenance, path: str) -> datetime | None:
    """Absent in 2.0 exports; only a revision citing a document has one."""
    if raw.get("source_change_time") is None:
        return None
    changed = get_time(raw, "source_change_time", path, optional=True)
    if provenance.evidence.type is not EvidenceType.DOCUMENT:
        raise ArchiveError(f"{path}.source_change_time", "is set only on document evidence")
    return changed


def _replaces(raw: dict[str, Any], number: int, path: str) -> int:
    replaces = get_optional_number(raw, "replaces", path, 1, rules.MAX_REVISION_NUMBER)
    if replaces >= number:
        raise ArchiveError(f"{path}.replaces", "must name an earlier revision")
    return replaces


def _provenance(raw: dict[str, Any], deleted: bool, path: str) -> Provenance:
    where = f"{path}.provenance"
    evidence_type = get_enum(raw, "evidence_type", EvidenceType, where)
    method = get_enum(raw, "extraction_method", ProvenanceMethod, where)
    if EVIDENCE_OF.get(method, evidence_type) is not evidence_type or (
        method not in EVIDENCE_OF and evidence_type in EVIDENCE_OF.values()
    ):
        raise ArchiveError(f"{where}.evidence_type", f"does not go with {method.value}")
    ref = get_text(raw, "evidence", where, rules.MAX_EVIDENCE_REF_CHARS)
    if deleted:
        valid = DELETED_EVIDENCE.fullmatch(ref) is not None
    elif evidence_type in REFERENCES:
        valid = REFERENCES[evidence_type].match(ref) is not None
    else:
        valid = True  # a document's URI: checked with its version below
    if not valid:
        raise ArchiveError(f"{where}.evidence", "is not a reference of its evidence type")
    version, excerpt = _document(raw, evidence_type, ref, deleted, where)
    kept = raw.get("kept_memory")
    expected_kept = ref if evidence_type is EvidenceType.KEPT_MEMORY and not deleted else None
    if kept != expected_kept:
        raise ArchiveError(f"{where}.kept_memory", "does not match the evidence reference")
    conversation_ref, message_ref = evidence_parts(evidence_type, ref)
    if (raw.get("conversation_ref"), raw.get("message_ref")) != (conversation_ref, message_ref):
        raise ArchiveError(f"{where}.message_ref", "does not match the evidence reference")
    quote = get_text(raw, "quote", where, rules.MAX_QUOTE_CHARS)
    if deleted and quote:
        raise ArchiveError(f"{where}.quote", "a deleted memory keeps no quote")
    return Provenance(
        speaker=get_enum(raw, "speaker", Speaker, where),
        method=method,
        evidence=EvidenceRef(evidence_type, ref),
        quote=quote,
        source_time=get_time(raw, "source_time", where, optional=True),
        document_version=version,
        excerpt=excerpt,
    )


def _document(
    raw: dict[str, Any], evidence_type: EvidenceType, ref: str, deleted: bool, where: str
) -> tuple[str, str]:
    """(version, excerpt) of document evidence, checked as the API checks them
    (documents/domain/documents.py); a deletion marker keeps the version only."""
    document = raw.get("document")
    if evidence_type is not EvidenceType.DOCUMENT:
        if document is not None:
            raise ArchiveError(f"{where}.document", "is set only on document evidence")
        return "", ""
    field = f"{where}.document"
    if not isinstance(document, dict):
        raise ArchiveError(field, "is required for document evidence")
    uri = get_typed(document, "uri", (str, type(None)), field)
    version = get_typed(document, "version", str, field)
    excerpt = get_text(document, "excerpt", field, rules.MAX_EXCERPT_CHARS)
    try:
        if deleted:
            if uri is not None or excerpt:
                raise ArchiveError(field, "a deleted memory keeps only the document's version")
            return document_version(version, field), ""
        document_ref(uri if isinstance(uri, str) else "", version, field)
        if uri != ref:
            raise ArchiveError(f"{field}.uri", "does not match the evidence reference")
        return version, document_excerpt(excerpt, field)
    except InvalidArgument as error:
        raise archive_error(error) from None


def to_message(record: dict[str, Any], tenant_id: str, path: str) -> Message | None:
    """The message a revision cites; None when the export carries only its reference."""
    message_id = get_id(record, "id", path)
    conversation = get_typed(record, "conversation_ref", str, path).removeprefix("conversations/")
    if not rules.CONVERSATION_ID_PATTERN.fullmatch(conversation):
        raise ArchiveError(f"{path}.conversation_ref", "is not conversations/{conversation}")
    if (
        get_typed(record, "name", str, path)
        != f"conversations/{conversation}/messages/{message_id}"
    ):
        raise ArchiveError(f"{path}.name", "does not match conversation_ref and id")
    text = get_typed(record, "content", (str, type(None)), path)
    message = Message(
        id=message_id,
        tenant_id=tenant_id,
        conversation_id=conversation,
        sequence=get_number(record, "sequence", path, 1, rules.MAX_STORED_INT),
        speaker=get_enum(record, "speaker", Speaker, path),
        text=stored(text or "", f"{path}.content", rules.MAX_MESSAGE_CHARS),
        status=get_enum(record, "status", TurnStatus, path),
        author_user_id=get_subject(record, "owner_user_id", path),
        create_time=get_required_time(record, "created_at", path),
    )
    given = get_typed(record, "content_hash", str, path)
    if text is None:
        if not given.startswith("sha256:") or not SHA256.fullmatch(given[7:]):
            raise ArchiveError(f"{path}.content_hash", "is not sha256:{64 hex digits}")
        return None
    if given != content_hash(text):
        raise ArchiveError(f"{path}.content_hash", "does not match the content")
    return message


def to_customer(record: dict[str, Any], tenant_id: str, path: str) -> tuple[Customer, str]:
    """The customer and the name it is looked up by."""
    name = get_text(record, "display_name", path, rules.MAX_DISPLAY_NAME_CHARS).strip()
    if not name:
        raise ArchiveError(f"{path}.display_name", "is required")
    try:
        match_name = rules.customer_match_name(name, f"{path}.display_name")
    except InvalidArgument as error:
        raise archive_error(error) from None
    customer = Customer(
        tenant_id,
        get_subject(record, "customer_id", path),
        name,
        get_required_time(record, "created_at", path),
    )
    return customer, match_name


def to_grant(record: dict[str, Any], tenant_id: str, path: str) -> CustomerGrant:
    return CustomerGrant(
        tenant_id,
        get_subject(record, "user_id", path),
        get_subject(record, "customer_id", path),
        get_subject(record, "granted_by_user_id", path),
        get_required_time(record, "created_at", path),
    )


def to_batch(record: dict[str, Any], tenant_id: str, path: str) -> ImportBatch:
    state = get_enum(record, "state", ImportState, path)
    if state not in (ImportState.SUCCEEDED, ImportState.FAILED):
        raise ArchiveError(f"{path}.state", "only finished batches are restored")
    digest = get_typed(record, "archive_sha256", str, path)
    if not SHA256.fullmatch(digest):
        raise ArchiveError(f"{path}.archive_sha256", "is not 64 hex digits")
    high = rules.MAX_STORED_INT
    return ImportBatch(
        id=get_id(record, "id", path),
        tenant_id=tenant_id,
        user_id=get_subject(record, "user_id", path),
        format=get_enum(record, "format", ArchiveFormat, path),
        archive_sha256=digest,
        state=state,
        create_time=get_required_time(record, "created_at", path),
        error=get_text(record, "error", path, rules.MAX_MESSAGE_CHARS),
        accepted_count=get_number(record, "accepted_count", path, 0, high),
        skipped_count=get_number(record, "skipped_count", path, 0, high),
        unresolved_count=get_number(record, "unresolved_count", path, 0, high),
        missing_count=get_number(record, "missing_attachment_count", path, 0, high),
        complete_time=get_time(record, "completed_at", path, optional=True),
    )


def to_item(
    record: dict[str, Any], tenant_id: str, path: str, secrets: SecretDetector | None
) -> ImportItem:
    skip = get_enum(record, "skip_reason", SkipReason, path)
    if skip is SkipReason.SECRET:
        raise ArchiveError(f"{path}.skip_reason", "a skipped secret is never exported")
    text = get_text(record, "content", path, rules.MAX_MESSAGE_CHARS)
    refuse_secret(text, f"{path}.content", secrets)
    lineage = get_typed(record, "lineage_hash", str, path)
    if lineage and not SHA256.fullmatch(lineage):
        raise ArchiveError(f"{path}.lineage_hash", "is not 64 hex digits")
    return ImportItem(
        id=get_id(record, "id", path),
        batch_id=get_id(record, "batch_id", path),
        tenant_id=tenant_id,
        user_id=get_subject(record, "user_id", path),
        ordinal=get_number(record, "ordinal", path, 0, rules.MAX_STORED_INT),
        outcome=get_enum(record, "outcome", ItemOutcome, path),
        skip_reason=skip,
        speaker=get_enum(record, "speaker", Speaker, path),
        text=text,
        lineage_hash=lineage,
        source_time=get_time(record, "source_time", path, optional=True),
        source_ref=get_text(record, "source_ref", path, rules.MAX_SOURCE_REF_CHARS),
        attachment=get_text(record, "attachment", path, rules.MAX_SOURCE_REF_CHARS),
        review=get_enum(record, "review", ItemReview, path),
        memory_id=get_id(record, "memory_id", path, optional=True),
    )


def check_said(memory: Memory, said: dict[str, tuple[str, str]], path: str) -> None:
    """A revision that is authoritative on its own words (ACTIVE, the subject's statement, no
    confirmation) rests on a message the archive carries: said by the subject (a user memory)
    or its author, and supporting the value under the grounding rule the API applies. So an
    archive cannot make a user have said what no message of theirs says. `said` maps message
    ids to (owner, text) of the messages earlier in the archive."""
    if memory.deleted:
        return
    for index, revision in enumerate(memory.revisions):
        if revision.status is not RevisionStatus.ACTIVE or revision.confirmation is not None:
            continue
        if revision.provenance.evidence.type is not EvidenceType.TRANSCRIPT_MESSAGE:
            continue
        where = f"{path}.revisions[{index}].provenance.evidence"
        ids = names.MESSAGE.match(revision.provenance.evidence.ref)
        found = said.get(ids[1]) if ids else None
        if found is None:
            raise ArchiveError(where, "an ACTIVE statement needs its message earlier in the export")
        owner, text = found
        speaker = (
            memory.scope.id if memory.scope.type is ScopeType.USER else revision.author_user_id
        )
        if owner != speaker:
            raise ArchiveError(where, "the message was not said by the memory's subject")
        problem = grounding(revision.value, revision.provenance.quote, text)
        if problem:
            raise ArchiveError(f"{path}.revisions[{index}].content", problem)


def check_schema(record: dict[str, Any], path: str) -> str:
    if record.get("schema") != SCHEMA_ID:
        raise ArchiveError(f"{path}.schema", f"is not {SCHEMA_ID}")
    kind = record.get("record")
    if kind not in KINDS:
        raise ArchiveError(f"{path}.record", "is not a record type of this export")
    return str(kind)


KINDS = ("export", "memory", "message", "customer", "grant", "import_batch", "import_item")


def extends(stored_memory: Memory, incoming: Memory) -> bool:
    """Whether `incoming` is a later state of `stored_memory`: a newer etag and the same
    revisions, each written by the same author at the same time from the same evidence."""
    if incoming.version <= stored_memory.version:
        return False
    if (incoming.scope, incoming.kind) != (stored_memory.scope, stored_memory.kind):
        return False
    if len(incoming.revisions) < len(stored_memory.revisions):
        return False
    for old, new in zip(stored_memory.revisions, incoming.revisions, strict=False):
        if (old.number, old.create_time, old.author_user_id) != (
            new.number,
            new.create_time,
            new.author_user_id,
        ):
            return False
        if not incoming.deleted and old.value and old.value != new.value:
            return False
    return True


def restore_offer(memory: Memory) -> Offered | None:
    """What a restored memory offers to the stale-evidence rule: its newest active revision,
    said in the subject's own words as exported. None for a memory with nothing active (or
    deleted), which brings nothing back."""
    if memory.deleted:
        return None
    active = [r for r in memory.revisions if r.status is RevisionStatus.ACTIVE]
    if not active:
        return None
    newest = max(active, key=said_time)
    return Offered(said_time(newest), newest.value, True)
