"""memoryctl's client (the stubs, the caller's token, JSON or tables) and what every command
shows of a memory: times, states, sources and the one-line row.

Tables and progress counters are the few lines here, not a library: what they need is aligned
columns and one counter rewritten with `\r`, and the one table library installed beside the
service (rich) arrives only through the sidecar's model-export extra, so memoryctl, which ships
with the memory service alone, would have to add it and its three dependencies to every install."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC

import grpc
from crmmem.memory.v1 import context_service_pb2_grpc as ctx_grpc
from crmmem.memory.v1 import import_service_pb2_grpc as imp_grpc
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp


class Cli:
    def __init__(self, channel: grpc.Channel, address: str, token: str, as_json: bool) -> None:
        self.address = address
        self.auth: tuple[tuple[str, str | bytes], ...] = (("authorization", f"Bearer {token}"),)
        self.memories = svc_grpc.MemoryServiceStub(channel)
        self.context = ctx_grpc.ContextServiceStub(channel)
        self.imports = imp_grpc.ImportServiceStub(channel)
        self.as_json = as_json

    def emit(self, message: Message, rows: list[list[str]], headers: list[str]) -> None:
        if self.as_json:
            print(json.dumps(MessageToDict(message, preserving_proto_field_name=True), indent=2))
            return
        table(headers, rows)


def table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def when(stamp: Timestamp, empty: str = "-") -> str:
    if not stamp.seconds and not stamp.nanos:
        return empty
    return stamp.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M")


def state(revision: pb.MemoryRevision) -> str:
    return pb.RevisionState.Name(revision.state).removeprefix("REVISION_STATE_").lower()


def source(revision: pb.MemoryRevision) -> str:
    provenance = revision.provenance
    speaker = pb.Speaker.Name(provenance.speaker).removeprefix("SPEAKER_").lower()
    method = pb.ProvenanceMethod.Name(provenance.method).removeprefix("PROVENANCE_METHOD_")
    evidence = provenance.transcript_message or provenance.import_item or provenance.kept_memory
    if provenance.HasField("document"):
        evidence = f"{provenance.document.uri} @ {provenance.document.version}"
    confirmed = (
        f", confirmed by {revision.confirmation.user_id}" if revision.confirmation.user_id else ""
    )
    return f"{speaker} ({method.lower()}{confirmed}) {evidence}"


def memory_rows(memories: Sequence[pb.Memory]) -> list[list[str]]:
    rows = []
    for memory in memories:
        revision = (
            memory.applicable_revision
            if memory.HasField("applicable_revision")
            else memory.latest_revision
        )
        scope = pb.ScopeType.Name(memory.scope.type).removeprefix("SCOPE_TYPE_").lower()
        key = "/".join(p for p in (memory.key, memory.key_context) if p)
        rows.append(
            [memory.name, f"{scope}:{memory.scope.id}" if memory.scope.id else scope, key,
             revision.value, f"r{revision.revision_number} {state(revision)}"]
        )  # fmt: skip
    return rows
