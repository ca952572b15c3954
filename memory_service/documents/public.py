"""What other slices may use of the documents slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.documents.domain.documents import MAX_NAMED_MEMORIES as MAX_NAMED_MEMORIES
from memory_service.documents.domain.documents import DocumentReport as DocumentReport
from memory_service.documents.domain.documents import DocumentUseCases as DocumentUseCases
from memory_service.documents.domain.documents import document_excerpt as document_excerpt
from memory_service.documents.domain.documents import document_ref as document_ref
from memory_service.documents.domain.documents import document_version as document_version
from memory_service.documents.domain.documents import refuse_secret_in_uri as refuse_secret_in_uri
