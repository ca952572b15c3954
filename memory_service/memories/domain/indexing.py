"""What the search index should hold for a memory: derived from the records, never the reverse."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Memory, RevisionStatus


@dataclass(frozen=True)
class IndexDocument:
    memory_id: str
    tenant_id: str
    version: int
    revision_number: int
    text: str
    scope_type: str
    scope_id: str


def index_document(memory: Memory, now: datetime) -> IndexDocument | None:
    """The applicable revision's text, or None: then the memory must not be searchable."""
    revision = rules.applicable_revision(memory, now)
    if revision is None:
        return None
    subject = f"{memory.key} ({memory.key_context})" if memory.key_context else memory.key
    return IndexDocument(
        memory_id=memory.id,
        tenant_id=memory.tenant_id,
        version=memory.version,
        revision_number=revision.number,
        text=f"{subject.replace('_', ' ')}: {revision.value}",
        scope_type=memory.scope.type.value,
        scope_id=memory.scope.id,
    )


def future_boundaries(memory: Memory, now: datetime) -> list[datetime]:
    """Instants at which the applicable revision changes by itself; the index follows then."""
    instants = set()
    for revision in memory.revisions:
        if revision.status is not RevisionStatus.ACTIVE:
            continue
        for instant in (revision.valid_from, revision.valid_until, revision.superseded_from):
            if instant is not None and instant > now:
                instants.add(instant)
    return sorted(instants)


# Boundaries queued at a time: whenever the drain indexes a memory it queues the next few it
# finds missing (a memory can gather many scheduled corrections; the last one queued, once
# indexed, queues the next few), so every boundary is reached with a few rows at a time.
SCHEDULED_AHEAD = 4


def boundaries_to_queue(memory: Memory, now: datetime) -> list[datetime]:
    """The future boundaries the drain makes sure are queued when it indexes the memory; none
    for a deleted memory, which nothing will make searchable again."""
    return [] if memory.deleted else future_boundaries(memory, now)[:SCHEDULED_AHEAD]


class IndexUnavailable(Exception):
    """The index as a whole could not be reached (down, restarting, hung): nothing is wrong
    with the items themselves, so the drain waits for the index rather than each item backing
    off on its own."""


def missing_from_index(
    live_before: Mapping[str, int],
    changes_before: Mapping[str, datetime],
    indexed: int,
    memories_after: Iterable[Memory],
    now: datetime,
) -> int:
    """How many memories that should be searchable now the index lacks, beyond those whose own
    change is still on its way; 0 when the index is complete.

    The inputs are read in this order, each after the one before: the tenant's live memories
    with their versions, then its queued changes (`OutboxRepository.queued_changes`); the
    index's point count (`indexed`); the clock (`now`); the same memories as they are after
    that count. Index writes run while they are read, and the order leaves none of them
    counted as missing:

    - a memory unchanged between the two reads with no change queued before the count was
      written to the index before it (the drain writes to the index, then completes the
      change);
    - a memory changed between the reads (created, corrected, confirmed, deleted) is not
      expected: its change was either written before the count, and is in it, or after;
    - a memory that expired and was removed from the index before the count is not expected:
      what should be searchable is decided on a clock read after it;
    - a removal still queued offsets nothing: only an expected memory's change is on its way.

    Points the index holds beyond these (a memory changed meanwhile, a removal on its way) can
    still hide as many missing ones until the next check.
    """
    unexplained = 0
    for memory in memories_after:
        if live_before.get(memory.id) != memory.version or index_document(memory, now) is None:
            continue
        due = changes_before.get(memory.id)
        if due is None or due > now:
            unexplained += 1
    return max(0, unexplained - indexed)
