"""What other slices may use of the exports slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.exports.domain.export import SCHEMA_ID as SCHEMA_ID
from memory_service.exports.domain.export import ExportUseCases as ExportUseCases
from memory_service.exports.domain.export import content_hash as content_hash
from memory_service.exports.domain.export import evidence_parts as evidence_parts
