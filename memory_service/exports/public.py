"""What other slices may use of the exports slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.exports.domain.export import (
    SCHEMA_ID,
    ExportUseCases,
    content_hash,
    evidence_parts,
)

__all__ = [
    "SCHEMA_ID",
    "ExportUseCases",
    "content_hash",
    "evidence_parts",
]
