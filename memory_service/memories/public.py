"""What other slices may use of the memories slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.memories.app.recall import Outcome as Outcome
from memory_service.memories.app.recall import Recaller as Recaller
from memory_service.memories.app.recall import annotate as annotate
from memory_service.memories.domain.authority import default_subject as default_subject
from memory_service.memories.domain.authority import initial_status as initial_status
from memory_service.memories.domain.authority import own_memory as own_memory
from memory_service.memories.domain.authority import user_said_it as user_said_it
from memory_service.memories.domain.evidence import Offered as Offered
from memory_service.memories.domain.evidence import archive_time as archive_time
from memory_service.memories.domain.evidence import said_time as said_time
from memory_service.memories.domain.evidence_resolution import EvidenceResolver as EvidenceResolver
from memory_service.memories.domain.evidence_resolution import ResolvedEvidence as ResolvedEvidence
from memory_service.memories.domain.evidence_resolution import offer_of as offer_of
from memory_service.memories.domain.evidence_resolution import staleness as staleness
from memory_service.memories.domain.grounding import grounding as grounding
from memory_service.memories.domain.grounding import is_ungrounded as is_ungrounded
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
from memory_service.memories.transport.convert import ShowsCurrentMemory as ShowsCurrentMemory
from memory_service.memories.transport.convert import add_recalled as add_recalled
from memory_service.memories.transport.convert import document_ref as document_ref
from memory_service.memories.transport.convert import fill_memory as fill_memory
from memory_service.memories.transport.convert import memory_proto as memory_proto
from memory_service.memories.transport.convert import recall_limit as recall_limit
from memory_service.memories.transport.convert import recall_query as recall_query
from memory_service.memories.transport.convert import receipt_proto as receipt_proto
from memory_service.memories.transport.convert import revision_proto as revision_proto
from memory_service.memories.transport.convert import scope as scope
