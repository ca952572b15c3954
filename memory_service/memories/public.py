"""What other slices may use of the memories slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.memories.app.recall import Outcome as Outcome
from memory_service.memories.app.recall import Recaller as Recaller
from memory_service.memories.app.recall import annotate as annotate
from memory_service.memories.domain import authority as authority
from memory_service.memories.domain import evidence as evidence
from memory_service.memories.domain import grounding as grounding
from memory_service.memories.domain.evidence_resolution import EvidenceResolver as EvidenceResolver
from memory_service.memories.domain.evidence_resolution import ResolvedEvidence as ResolvedEvidence
from memory_service.memories.domain.evidence_resolution import offer_of as offer_of
from memory_service.memories.domain.evidence_resolution import staleness as staleness
from memory_service.memories.domain.memory_requests import CreateMemory as CreateMemory
from memory_service.memories.domain.memory_requests import ProvenanceDraft as ProvenanceDraft
from memory_service.memories.domain.memory_requests import RevisionDraft as RevisionDraft
from memory_service.memories.domain.memory_writes import MemoryUseCases as MemoryUseCases
from memory_service.memories.domain.receipts import DeletionReceipt as DeletionReceipt
from memory_service.memories.domain.receipts import import_batch_receipt as import_batch_receipt
from memory_service.memories.domain.shown import ShownMemory as ShownMemory
from memory_service.memories.domain.shown import show_memory as show_memory
from memory_service.memories.storage.memories import SqlMemoryRepository as SqlMemoryRepository
from memory_service.memories.storage.memory_rows import visible as visible
from memory_service.memories.transport import convert as convert
from memory_service.memories.transport.convert import EnumMap as EnumMap
from memory_service.memories.transport.convert import set_time as set_time
from memory_service.memories.transport.idempotency import request_key as request_key
from memory_service.memories.transport.rpc import ServicerBase as ServicerBase
from memory_service.memories.transport.rpc import as_of_instant as as_of_instant
from memory_service.memories.transport.rpc import rpc as rpc
