"""What other slices may use of the tasks slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.tasks.domain.tasks import TaskUseCases as TaskUseCases
from memory_service.tasks.transport.convert_tasks import task_proto as task_proto
