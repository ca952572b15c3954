"""The reply's conversion skips defaults and absent times to save protobuf round trips; the
bytes on the wire must stay those of writing every field (the proto is the public contract).
The reference below is that plain field-by-field writing, kept here as the golden."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service.context.app.context import BuiltContext
from memory_service.context.domain.context import Applicability, Applying, Context
from memory_service.context.transport import convert_context
from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.etags import etag_of
from memory_service.kernel.domain.model import (
    Confirmation,
    EvidenceRef,
    EvidenceType,
    Memory,
    MemoryKind,
    Message,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
)
from memory_service.kernel.transport.fields import KINDS, METHODS, SCOPE_TYPES, SPEAKERS, STATES
from memory_service.memories.domain import authority
from memory_service.memories.domain.shown import show_memory
from memory_service.memories.transport import convert
from memory_service.transcripts.transport.convert_transcripts import TURN_STATUSES, message_proto
from tests.support import records

NOW = datetime(2026, 12, 1, 7, 30, 12, 345678, tzinfo=UTC)
EPOCH_PLUS = datetime(1970, 1, 1, 0, 0, 1, 1, tzinfo=UTC)


def _time(target: Timestamp, value: datetime | None) -> None:
    if value is not None:
        target.FromDatetime(value)


def _timestamp(value: datetime) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(value)
    return out


def reference_revision(out: pb.MemoryRevision, revision: Revision, instant: datetime) -> None:
    provenance = revision.provenance
    out.name = names.revision(revision.memory_id, revision.number)
    out.revision_number = revision.number
    out.value = revision.value
    out.state = STATES.proto(rules.state_at(revision, instant))
    out.replaces_revision_number = revision.replaces_number
    out.superseded_by_revision_number = revision.superseded_by_number
    out.author_user_id = revision.author_user_id
    out.inferred = authority.inferred(provenance)
    out.status_reason = revision.status_reason
    source = out.provenance
    source.speaker = SPEAKERS.proto(provenance.speaker)
    source.method = METHODS.proto(provenance.method)
    source.quote = provenance.quote
    evidence = provenance.evidence
    if evidence.type is EvidenceType.TRANSCRIPT_MESSAGE:
        source.transcript_message = evidence.ref
    elif evidence.type is EvidenceType.IMPORT_ITEM:
        source.import_item = evidence.ref
    elif evidence.type is EvidenceType.DOCUMENT:
        source.document.uri = evidence.ref
        source.document.version = provenance.document_version
        source.document.excerpt = provenance.excerpt
    else:
        source.kept_memory = evidence.ref
    _time(out.source_change_time, revision.source_change_time)
    _time(source.source_time, provenance.source_time)
    _time(out.valid_from, revision.valid_from)
    _time(out.valid_until, revision.valid_until)
    _time(out.superseded_from, revision.superseded_from)
    _time(out.create_time, revision.create_time)
    if revision.confirmation is not None:
        out.confirmation.user_id = revision.confirmation.user_id
        _time(out.confirmation.confirm_time, revision.confirmation.confirm_time)
        out.confirmation.restored_by_user_id = revision.confirmation.restored_by
        _time(out.confirmation.restore_time, revision.confirmation.restore_time)


def reference_memory(memory: Memory, applicable: Revision | None, instant: datetime) -> pb.Memory:
    out = pb.Memory()
    out.name = names.memory(memory.id)
    out.scope.type = SCOPE_TYPES.proto(memory.scope.type)
    out.scope.id = memory.scope.id
    out.key = memory.key
    out.key_context = memory.key_context
    out.kind = KINDS.proto(memory.kind)
    out.etag = etag_of(memory)
    if applicable is not None:
        reference_revision(out.applicable_revision, applicable, instant)
    if memory.latest is not None:
        reference_revision(out.latest_revision, memory.latest, instant)
    _time(out.create_time, memory.create_time)
    _time(out.update_time, memory.update_time)
    _time(out.delete_time, memory.delete_time)
    return out


def _provenance(kind: str) -> Provenance:
    if kind == "document":
        return Provenance(
            Speaker.TOOL,
            ProvenanceMethod.DOCUMENT,
            EvidenceRef(EvidenceType.DOCUMENT, "crm://docs/42"),
            "net 30",
            NOW - timedelta(days=9, microseconds=1),
            "v7",
            "payment terms are net 30",
        )
    if kind == "import":
        return Provenance(
            Speaker.THIRD_PARTY,
            ProvenanceMethod.IMPORT,
            EvidenceRef(EvidenceType.IMPORT_ITEM, ""),  # an empty oneof member still marks it
        )
    if kind == "kept":
        return Provenance(
            Speaker.ASSISTANT,
            ProvenanceMethod.REVIEW_DECISION,
            EvidenceRef(EvidenceType.KEPT_MEMORY, "memories/other"),
        )
    if kind == "inferred":
        return Provenance(
            Speaker.ASSISTANT,
            ProvenanceMethod.ASSISTANT_INFERENCE,
            EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, records.MESSAGE),
        )
    return records.user_statement(quote="mornings", source_time=NOW - timedelta(hours=2))


def shapes() -> list[Memory]:
    """One memory of every shape a reply carries."""
    past, future = NOW - timedelta(days=3), NOW + timedelta(days=3)
    rev = records.revision
    plain = records.memory(rev(1, past), created=past, memory_id="plain")
    superseded = records.memory(
        rev(1, past, status=RevisionStatus.SUPERSEDED, superseded_by_number=2,
            superseded_from=NOW - timedelta(days=1), valid_until=future),
        rev(2, NOW - timedelta(days=1), replaces_number=1, valid_from=NOW - timedelta(days=1)),
        created=past, memory_id="superseded",
    )  # fmt: skip
    future_switch = records.memory(
        rev(1, past, superseded_from=future, superseded_by_number=2),
        rev(2, NOW, replaces_number=1, valid_from=future, status=RevisionStatus.CANDIDATE,
            status_reason="value is not grounded in its evidence",
            provenance=_provenance("inferred")),
        created=past, memory_id="future-switch",
    )  # fmt: skip
    rejected = records.memory(
        rev(1, past, status=RevisionStatus.REJECTED, status_reason="the user said no"),
        created=past, memory_id="rejected",
    )  # fmt: skip
    document = records.memory(
        rev(1, past, provenance=_provenance("document"), source_change_time=NOW - timedelta(1)),
        created=past, memory_id="document",
    )  # fmt: skip
    restored = records.memory(
        rev(1, past, provenance=_provenance("import"),
            confirmation=Confirmation("mara", past, "admin", NOW - timedelta(minutes=5))),
        rev(2, NOW, provenance=_provenance("kept"), replaces_number=1,
            confirmation=Confirmation("mara", NOW)),
        created=past, memory_id="restored",
    )  # fmt: skip
    expired = records.memory(
        rev(1, past - timedelta(days=30), valid_until=past, valid_from=past - timedelta(days=30)),
        created=past, memory_id="expired",
    )  # fmt: skip
    deleted = replace(
        records.memory(rev(1, past, status=RevisionStatus.DELETED), created=past, memory_id="gone"),
        delete_time=NOW - timedelta(minutes=1), version=4, key_hash="h",
    )  # fmt: skip
    marker = replace(
        records.memory(created=past, memory_id="marker"), delete_time=NOW, key="", version=2
    )
    customer = replace(
        records.memory(rev(1, past), created=past, memory_id="customer"),
        scope=Scope(ScopeType.CUSTOMER, "cust-1"), key_context="renewal", kind=MemoryKind.FACT,
    )  # fmt: skip
    organization = replace(
        records.memory(rev(1, past, provenance=_provenance("inferred")), created=past,
                       memory_id="org"),
        scope=Scope(ScopeType.ORGANIZATION, ""), update_time=NOW,
    )  # fmt: skip
    return [plain, superseded, future_switch, rejected, document, restored, expired, deleted,
            marker, customer, organization]  # fmt: skip


@pytest.mark.parametrize("memory", shapes(), ids=lambda m: m.id)
def test_memory_bytes_are_those_of_writing_every_field(memory: Memory) -> None:
    for applicable in {id(r): r for r in [*memory.revisions, None]}.values():
        expected = reference_memory(memory, applicable, NOW)
        got = convert.shown_memory_proto(show_memory(memory, NOW, applicable))
        assert got.SerializeToString(deterministic=True) == expected.SerializeToString(
            deterministic=True
        )
        assert got == expected


def test_context_bytes_are_those_of_writing_every_field() -> None:
    memories = [m for m in shapes() if m.revisions]
    applying = [
        Applying(show_memory(m, NOW, m.revisions[-1]), reason)
        for m, reason in zip(memories, [*Applicability] * len(memories), strict=False)
    ]
    reply = convert_context.context_proto(BuiltContext(Context(NOW, memories=applying), None))
    assert len(reply.memories) == len(applying)
    for entry, item in zip(reply.memories, applying, strict=True):
        expected = reference_memory(item.memory, item.revision, NOW)
        assert entry.memory.SerializeToString(deterministic=True) == (
            expected.SerializeToString(deterministic=True)
        )
        assert entry.reason == convert_context.APPLICABILITY.proto(item.reason)
        assert entry.source_changed == (item.revision.source_change_time is not None)
        assert entry.HasField("memory")


def test_window_bytes_are_those_of_building_each_message() -> None:
    window = [
        Message("m1", "t", "c1", 1, Speaker.USER, "mornings please", TurnStatus.COMPLETED,
                "mara", NOW - timedelta(seconds=30)),
        Message("m2", "t", "c1", 2, Speaker.ASSISTANT, "noted", TurnStatus.FAILED, "", NOW),
        Message("m3", "t", "c1", 3, Speaker.TOOL, "crm says net 30", TurnStatus.COMPLETED,
                "mara", EPOCH_PLUS),
    ]  # fmt: skip
    reply = convert_context.context_proto(BuiltContext(Context(NOW, window=window), None))
    expected = [
        transcript_pb.Message(
            name=names.message(m.conversation_id, m.id),
            speaker=SPEAKERS.proto(m.speaker),
            text=m.text,
            status=TURN_STATUSES.proto(m.status),
            author_user_id=m.author_user_id,
            sequence=m.sequence,
            create_time=_timestamp(m.create_time),
        )
        for m in window
    ]  # fmt: skip
    assert [m.SerializeToString(deterministic=True) for m in reply.recent_messages] == [
        m.SerializeToString(deterministic=True) for m in expected
    ]
    assert message_proto(window[1]) == expected[1]
