"""What other slices may use of the imports slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.imports.storage.imports import import_item_of as import_item_of
