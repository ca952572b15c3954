"""What a memory request asks for, as domain values: the transport builds them from the proto
once, and the use cases (memory_writes.py, memory_reads.py, evidence_resolution.py) read them.
They hold no rule and take no unit of work, so the transport may import this module whole."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory_service.kernel.domain.model import (
    EvidenceRef,
    MemoryKind,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)


@dataclass(frozen=True)
class ProvenanceDraft:
    speaker: Speaker | None
    method: ProvenanceMethod
    evidence: EvidenceRef
    quote: str = ""
    source_time: datetime | None = None
    document_version: str = ""  # DOCUMENT evidence only
    excerpt: str = ""  # DOCUMENT evidence only


@dataclass(frozen=True)
class RevisionDraft:
    value: str
    valid_from: datetime | None
    valid_until: datetime | None
    provenance: ProvenanceDraft


@dataclass(frozen=True)
class CreateMemory:
    scope: Scope
    key: str
    key_context: str
    kind: MemoryKind
    revision: RevisionDraft


@dataclass(frozen=True)
class MemoryFilter:
    scope_type: ScopeType | None = None
    scope_id: str = ""
    key: str = ""
    kind: MemoryKind | None = None
    revision_state: RevisionStatus | None = None
    value_contains: str = ""
    show_deleted: bool = False
