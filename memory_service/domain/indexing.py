"""What the search index should hold for a memory: derived from the records, never the reverse."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memory_service.domain import rules
from memory_service.domain.model import Memory, RevisionStatus
from memory_service.domain.ports import UnitOfWork

EXPECTED_CHUNK = 500


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


class IndexUnavailable(Exception):
    """The index as a whole could not be reached (down, restarting, hung): nothing is wrong
    with the items themselves, so the drain waits for the index rather than each item backing
    off on its own."""


def missing_from_index(
    uow: UnitOfWork, count_points: Callable[[], int], clock: Callable[[], datetime]
) -> int:
    """How many memories that should be searchable now the index lacks, beyond those whose own
    change is still on its way (the outbox); 0 when the index is complete.

    `count_points` reads the tenant's point count from the index. It is called after the
    records are read: a change delivered in between is then in the count, never missing from
    both. The instant that decides what is due is read from `clock` after the records too: a
    memory is stamped before its commit, so one committed just before the read, stamped after
    an instant taken earlier, would be in the records yet not on its way, and counted missing
    while ingest runs. Wiped, restored from an old snapshot, or a fresh Qdrant node: the count
    falls short and no queued change explains it.

    The common case (every tenant recalled, every interval) compares two counts: listing a
    large tenant's live ids took most of the check's time. Only a short count reads the
    records, from the start again (ids, the outbox, the index).
    """
    counted = uow.memories.count_live()
    if count_points() >= counted:
        return 0
    live = uow.memories.live_ids()
    now = clock()
    on_the_way, _ = uow.outbox.pending(now)
    indexed = count_points()
    if indexed >= len(live):
        return 0
    expected = 0
    for start in range(0, len(live), EXPECTED_CHUNK):
        memories = uow.memories.get_many(live[start : start + EXPECTED_CHUNK])
        expected += sum(1 for m in memories.values() if index_document(m, now) is not None)
    return max(0, expected - on_the_way - indexed)
