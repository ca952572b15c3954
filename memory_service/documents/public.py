"""What other slices may use of the documents slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.documents.domain import documents
from memory_service.documents.domain.documents import (
    MAX_NAMED_MEMORIES,
    DocumentReport,
    DocumentUseCases,
    document_excerpt,
    document_ref,
    refuse_secret_in_uri,
)

__all__ = [
    "MAX_NAMED_MEMORIES",
    "DocumentReport",
    "DocumentUseCases",
    "document_excerpt",
    "document_ref",
    "documents",
    "refuse_secret_in_uri",
]
