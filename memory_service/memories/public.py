"""What other slices may use of the memories slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.memories.app.recall import Outcome, Recaller, annotate
from memory_service.memories.domain import authority, evidence, grounding
from memory_service.memories.domain.evidence_resolution import (
    EvidenceResolver,
    ResolvedEvidence,
    offer_of,
    staleness,
)
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.memories.domain.receipts import DeletionReceipt, import_batch_receipt
from memory_service.memories.domain.shown import ShownMemory, show_memory
from memory_service.memories.storage.memories import SqlMemoryRepository
from memory_service.memories.storage.memory_rows import visible
from memory_service.memories.transport import convert
from memory_service.memories.transport.convert import EnumMap, set_time
from memory_service.memories.transport.idempotency import request_key
from memory_service.memories.transport.rpc import ServicerBase, as_of_instant, rpc

__all__ = [
    "CreateMemory",
    "DeletionReceipt",
    "EnumMap",
    "EvidenceResolver",
    "MemoryUseCases",
    "Outcome",
    "ProvenanceDraft",
    "Recaller",
    "ResolvedEvidence",
    "RevisionDraft",
    "ServicerBase",
    "ShownMemory",
    "SqlMemoryRepository",
    "annotate",
    "as_of_instant",
    "authority",
    "convert",
    "evidence",
    "grounding",
    "import_batch_receipt",
    "offer_of",
    "request_key",
    "rpc",
    "set_time",
    "show_memory",
    "staleness",
    "visible",
]
