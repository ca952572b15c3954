"""Memories to and from the wire: the requests of MemoryService read into domain values once,
and a memory, its revisions and a recall written back. Every field error names the proto path;
the fields every service shares are in kernel/transport/fields.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from memory_service.documents.public import document_excerpt
from memory_service.documents.public import document_ref as checked_document_ref
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import etag_of
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Memory,
    ProvenanceMethod,
    Revision,
    Scope,
    ScopeType,
    utcnow,
)
from memory_service.kernel.domain.rules import check_interval, names_a_subject
from memory_service.kernel.transport.fields import (
    KINDS,
    METHODS,
    SCOPE_TYPES,
    SPEAKERS,
    STATES,
    EnumMap,
    check_request_id,
    key_field,
    set_time,
    subject_id,
    to_time,
)
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    MemoryFilter,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.recall import DropReason, RecallResult, ScopeHint
from memory_service.memories.domain.receipts import DeletionReceipt
from memory_service.memories.domain.shown import (
    ShownMemory,
    ShownRevision,
    show_memory,
    show_revision,
)

C = TypeVar("C", covariant=True)

MAX_RECALL_LIMIT = 50
DEFAULT_RECALL_LIMIT = 5
DROP_REASONS = EnumMap.named(DropReason, service_pb.DropReason)
_SCOPE_PROTOS = SCOPE_TYPES.protos
_KIND_PROTOS = KINDS.protos
_STATE_PROTOS = STATES.protos
_SPEAKER_PROTOS = SPEAKERS.protos
_METHOD_PROTOS = METHODS.protos


# --- requests -> domain ----------------------------------------------------------------------


def revision_draft(draft: pb.RevisionDraft, field: str = "revision") -> RevisionDraft:
    value = draft.value.strip()
    if not value:
        raise InvalidArgument(f"{field}.value", "is required")
    valid_from = to_time(draft, "valid_from", f"{field}.valid_from")
    valid_until = to_time(draft, "valid_until", f"{field}.valid_until")
    check_interval(valid_from, valid_until, field)
    if not draft.HasField("provenance"):
        raise InvalidArgument(f"{field}.provenance", "is required: every memory rests on evidence")
    return RevisionDraft(
        value, valid_from, valid_until, provenance_draft(draft.provenance, f"{field}.provenance")
    )


def provenance_draft(provenance: pb.Provenance, field: str) -> ProvenanceDraft:
    method = METHODS.required(provenance.method, f"{field}.method")
    speaker = SPEAKERS.optional(provenance.speaker, f"{field}.speaker")
    if method is ProvenanceMethod.REVIEW_DECISION:
        raise InvalidArgument(f"{field}.method", "is output only: ResolveConflict writes it")
    which = provenance.WhichOneof("evidence")
    version = excerpt = ""
    if which == "transcript_message" and provenance.transcript_message:
        evidence = EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, provenance.transcript_message)
    elif which == "import_item" and provenance.import_item:
        evidence = EvidenceRef(EvidenceType.IMPORT_ITEM, provenance.import_item)
    elif which == "document":
        uri, version = document_ref(provenance.document, f"{field}.document")
        excerpt = document_excerpt(provenance.document.excerpt, f"{field}.document")
        evidence = EvidenceRef(EvidenceType.DOCUMENT, uri)
    else:
        raise InvalidArgument(field, "needs evidence: transcript_message, import_item or document")
    if (method is ProvenanceMethod.DOCUMENT) != (evidence.type is EvidenceType.DOCUMENT):
        raise InvalidArgument(
            f"{field}.method", "PROVENANCE_METHOD_DOCUMENT goes with document evidence, and only it"
        )
    return ProvenanceDraft(
        speaker=speaker,
        method=method,
        evidence=evidence,
        quote=provenance.quote.strip(),
        source_time=to_time(provenance, "source_time", f"{field}.source_time"),
        document_version=version,
        excerpt=excerpt,
    )


def document_ref(document: pb.DocumentSource, field: str) -> tuple[str, str]:
    """(uri, version) of a document reference, validated (documents/domain/documents.py)."""
    return checked_document_ref(document.uri, document.version, field)


def scope(message: pb.Scope, field: str, *, customer_id_required: bool) -> Scope:
    """A scope as every request gives one: a customer's names the customer (where the request
    cannot leave it to a default)."""
    scope_type = SCOPE_TYPES.required(message.type, f"{field}.type")
    scope_id = scope_subject(
        scope_type,
        message.id,
        f"{field}.id",
        required=customer_id_required and scope_type is ScopeType.CUSTOMER,
    )
    return Scope(scope_type, scope_id)


def scope_subject(scope_type: ScopeType | None, value: str, field: str, *, required: bool) -> str:
    """A scope's id, in a scope or a filter: the organization's names nothing (it is the
    tenant; reads find organization memory under the empty id alone)."""
    scope_id = subject_id(value, field, required=required)
    if scope_id and scope_type is None:
        raise InvalidArgument(field, "needs scope_type")
    if scope_id and scope_type is not None and not names_a_subject(scope_type):
        raise InvalidArgument(field, "must be empty for the organization scope")
    return scope_id


def create_command(request: service_pb.CreateMemoryRequest) -> CreateMemory:
    check_request_id(request.request_id)
    memory = request.memory
    scope_of_memory = scope(memory.scope, "memory.scope", customer_id_required=True)
    kind = KINDS.required(memory.kind, "memory.kind")
    if not request.HasField("revision"):
        raise InvalidArgument("revision", "is required")
    return CreateMemory(
        scope=scope_of_memory,
        key=key_field(memory.key, "memory.key", required=True),
        key_context=key_field(memory.key_context, "memory.key_context", required=False),
        kind=kind,
        revision=revision_draft(request.revision),
    )


def memory_filter(request: service_pb.ListMemoriesRequest) -> MemoryFilter:
    scope_type = SCOPE_TYPES.optional(request.scope_type, "scope_type")
    scope_id = scope_subject(scope_type, request.scope_id, "scope_id", required=False)
    return MemoryFilter(
        scope_type=scope_type,
        scope_id=scope_id,
        key=key_field(request.key, "key", required=False),
        kind=KINDS.optional(request.kind, "kind"),
        revision_state=STATES.optional(request.revision_state, "revision_state"),
        value_contains=request.value_contains.strip(),
        show_deleted=request.show_deleted,
    )


def recall_query(query: str) -> str:
    if not query.strip():
        raise InvalidArgument("query", "is required")
    return query.strip()


def recall_limit(limit: int) -> int:
    if limit < 0 or limit > MAX_RECALL_LIMIT:
        raise InvalidArgument("limit", f"must be between 0 and {MAX_RECALL_LIMIT}")
    return limit or DEFAULT_RECALL_LIMIT


def scope_hint(scope_type: int, scope_id: str) -> ScopeHint:
    parsed = SCOPE_TYPES.optional(scope_type, "scope_type")
    return ScopeHint(parsed, scope_subject(parsed, scope_id, "scope_id", required=False))


# --- domain -> responses ---------------------------------------------------------------------


def shown_revision_proto(shown: ShownRevision) -> pb.MemoryRevision:
    out = pb.MemoryRevision()
    fill_revision(out, shown)
    return out


def revision_proto(revision: Revision, instant: datetime) -> pb.MemoryRevision:
    """A revision record at `instant`, for the answers whose app entry returns records
    (review, imports, proposals): the state and inference worked out here (`show_revision`)."""
    return shown_revision_proto(show_revision(revision, instant))


def fill_revision(out: pb.MemoryRevision, shown: ShownRevision) -> None:
    """Writes the shown revision into `out` in place: a context converts hundreds, and building
    each message apart and copying it in cost about as much again. Fields left at their default
    are not written (proto3 leaves them off the wire either way) and an absent time's
    sub-message is not touched: each attribute of a protobuf message is a round trip into its
    C object. Its state and whether it was inferred come worked out (memories/domain/shown.py)."""
    revision, state, inferred = shown
    provenance = revision.provenance
    out.name = names.revision(revision.memory_id, revision.number)
    out.revision_number = revision.number
    out.value = revision.value
    out.state = _STATE_PROTOS[state]
    if revision.replaces_number:
        out.replaces_revision_number = revision.replaces_number
    if revision.superseded_by_number:
        out.superseded_by_revision_number = revision.superseded_by_number
    out.author_user_id = revision.author_user_id
    if inferred:
        out.inferred = True
    if revision.status_reason:
        out.status_reason = revision.status_reason
    source = out.provenance
    source.speaker = _SPEAKER_PROTOS[provenance.speaker]
    source.method = _METHOD_PROTOS[provenance.method]
    if provenance.quote:
        source.quote = provenance.quote
    # The evidence is a oneof: its field is written even when empty (that marks which one).
    match provenance.evidence.type:
        case EvidenceType.TRANSCRIPT_MESSAGE:
            source.transcript_message = provenance.evidence.ref
        case EvidenceType.IMPORT_ITEM:
            source.import_item = provenance.evidence.ref
        case EvidenceType.DOCUMENT:
            document = source.document
            document.uri = provenance.evidence.ref
            document.version = provenance.document_version
            document.excerpt = provenance.excerpt
        case EvidenceType.KEPT_MEMORY:
            source.kept_memory = provenance.evidence.ref
    if revision.source_change_time is not None:
        set_time(out.source_change_time, revision.source_change_time)
    if provenance.source_time is not None:
        set_time(source.source_time, provenance.source_time)
    if revision.valid_from is not None:
        set_time(out.valid_from, revision.valid_from)
    if revision.valid_until is not None:
        set_time(out.valid_until, revision.valid_until)
    if revision.superseded_from is not None:
        set_time(out.superseded_from, revision.superseded_from)
    set_time(out.create_time, revision.create_time)
    if revision.confirmation is not None:
        out.confirmation.user_id = revision.confirmation.user_id
        set_time(out.confirmation.confirm_time, revision.confirmation.confirm_time)
        out.confirmation.restored_by_user_id = revision.confirmation.restored_by
        set_time(out.confirmation.restore_time, revision.confirmation.restore_time)


def shown_memory_proto(shown: ShownMemory) -> pb.Memory:
    out = pb.Memory()
    fill_memory(out, shown)
    return out


def memory_proto(memory: Memory, instant: datetime) -> pb.Memory:
    """A memory record at `instant`, for the answers whose app entry returns records (review,
    imports, proposals, an ABORTED status's current memory): what applies is worked out here
    (`show_memory`). Every other answer arrives shown."""
    return shown_memory_proto(show_memory(memory, instant))


def fill_memory(out: pb.Memory, shown: ShownMemory) -> None:
    """Writes the shown memory into `out` in place: its applicable and latest revisions come
    worked out (memories/domain/shown.py), so conversion decides nothing."""
    memory, applicable, latest = shown
    out.name = names.memory(memory.id)
    scope = out.scope
    scope.type = _SCOPE_PROTOS[memory.scope.type]
    if memory.scope.id:
        scope.id = memory.scope.id
    out.key = memory.key
    if memory.key_context:
        out.key_context = memory.key_context
    out.kind = _KIND_PROTOS[memory.kind]
    out.etag = etag_of(memory)
    if applicable is not None:
        fill_revision(out.applicable_revision, applicable)
    if latest is not None and latest is applicable:
        out.latest_revision.CopyFrom(out.applicable_revision)  # usually: converted once
    elif latest is not None:
        fill_revision(out.latest_revision, latest)
    set_time(out.create_time, memory.create_time)
    set_time(out.update_time, memory.update_time)
    if memory.delete_time is not None:
        set_time(out.delete_time, memory.delete_time)


class _Changed(Protocol[C]):
    def __call__(self, *, memory: pb.Memory, revision: pb.MemoryRevision) -> C: ...


def changed(response: _Changed[C]) -> Callable[[ShownMemory, ShownRevision], C]:
    """A response of a write that changed one memory: the memory and the revision it wrote,
    shown as of the write's own instant."""
    return lambda memory, revision: response(
        memory=shown_memory_proto(memory), revision=shown_revision_proto(revision)
    )


def batch_created(
    created: Sequence[tuple[ShownMemory, ShownRevision]],
) -> service_pb.BatchCreateMemoriesResponse:
    """One CreateMemoryResponse per memory a batch created, in request order."""
    one = changed(service_pb.CreateMemoryResponse)
    return service_pb.BatchCreateMemoriesResponse(
        responses=[one(memory, revision) for memory, revision in created]
    )


def receipt_proto(receipt: DeletionReceipt) -> service_pb.DeletionReceipt:
    out = service_pb.DeletionReceipt(
        removed=[service_pb.DeletionEffect(copy=c, detail=d) for c, d in receipt.removed],
        not_reached=[service_pb.DeletionEffect(copy=c, detail=d) for c, d in receipt.not_reached],
    )
    set_time(out.marker_expire_time, receipt.marker_expire_time)
    return out


def add_recalled(
    out: RepeatedCompositeFieldContainer[service_pb.RecalledMemory], result: RecallResult
) -> None:
    """Each recalled memory written into a new element of `out` in place: building each
    message apart and copying it into the reply cost a quarter of the conversion again. Each
    comes shown at the revision its validation found applicable."""
    for shown, score in result.recalled:
        recalled = out.add()
        recalled.score = score
        fill_memory(recalled.memory, shown)


def dropped_protos(result: RecallResult) -> list[service_pb.DroppedCandidates]:
    return [
        service_pb.DroppedCandidates(reason=DROP_REASONS.proto(reason), count=n)
        for reason, n in sorted(result.dropped.items())
    ]


class ShowsCurrentMemory:
    """A servicer mixin for services whose calls write memories: an ABORTED answer carries
    the memory as it stands now, shown as every other answer shows one."""

    def shown_current(self, memory: Memory) -> pb.Memory | None:
        return memory_proto(memory, utcnow())
