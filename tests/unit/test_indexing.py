"""What the index may hold is derived from the records: the applicable text, or nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import RevisionStatus
from memory_service.kernel.domain.ports import ON_ITS_WAY
from memory_service.memories.domain.indexing import (
    SCHEDULED_AHEAD,
    boundaries_to_queue,
    future_boundaries,
    index_document,
    missing_from_index,
)
from tests.support import records
from tests.unit.test_rules import T0, memory, revision


def test_document_carries_the_applicable_revision_and_the_version() -> None:
    m = memory(revision(1))
    document = index_document(m, T0)
    assert document is not None
    assert (document.revision_number, document.version) == (1, m.version)
    assert document.text == "k: v1"


def test_nothing_is_indexed_without_an_applicable_revision() -> None:
    assert index_document(memory(revision(1, status=RevisionStatus.CANDIDATE)), T0) is None
    deleted = memory(revision(1))
    deleted.delete_time = T0
    assert index_document(deleted, T0) is None


def test_a_future_correction_schedules_a_reindex_when_it_takes_effect() -> None:
    monday = T0 + timedelta(days=1)
    m = memory(revision(1))
    newcomer = revision(2, monday)
    m.revisions.append(newcomer)
    rules.supersede(m, newcomer, monday)
    assert future_boundaries(m, T0) == [monday]
    assert index_document(m, T0).revision_number == 1  # type: ignore[union-attr]
    assert index_document(m, monday).revision_number == 2  # type: ignore[union-attr]


def test_the_drain_queues_the_next_few_boundaries_and_none_of_a_deleted_memory() -> None:
    m = memory(revision(1))
    days = [T0 + timedelta(days=n) for n in range(1, SCHEDULED_AHEAD + 3)]
    for number, day in enumerate(days, 2):
        newcomer = revision(number, day)
        m.revisions.append(newcomer)
        rules.supersede(m, newcomer, day)
    assert boundaries_to_queue(m, T0) == days[:SCHEDULED_AHEAD]
    assert boundaries_to_queue(m, days[SCHEDULED_AHEAD - 1]) == days[SCHEDULED_AHEAD:]
    m.delete_time = T0
    assert boundaries_to_queue(m, T0) == []


def check(
    indexed: int,
    changes: dict[str, datetime] | None = None,
    deleted: str = "",
    changed: str = "",
) -> int:
    """Four live memories: two searchable now, a proposal, one valid from next week; the names
    in `changes` are of these memories (or of one deleted before the first read)."""
    revisions = {
        "a": revision(1),
        "b": revision(1),
        "c": revision(1, status=RevisionStatus.CANDIDATE),
        "d": revision(1, T0 + timedelta(days=3)),
    }
    named = {n: records.memory(r, created=T0, memory_id=n) for n, r in revisions.items()}
    before = {m.id: m.version for m in named.values()}
    if changed:
        named[changed].version += 1
    after = [m for name, m in named.items() if name != deleted]
    return missing_from_index(before, changes or {}, indexed, after, T0)


def test_missing_counts_only_what_should_be_searchable_and_is_not_on_its_way() -> None:
    assert check(indexed=2) == 0  # the proposal and next week's memory are not missing
    assert check(indexed=0) == 2
    assert check(indexed=0, changes={"a": T0}) == 1  # a change due now: on its way
    assert check(indexed=0, changes={"a": ON_ITS_WAY}) == 1  # being retried
    assert check(indexed=4) == 0


def test_a_change_due_later_does_not_excuse_a_missing_point() -> None:
    """Next week's correction is queued, yet today's revision should be searchable today."""
    assert check(indexed=0, changes={"a": T0 + timedelta(days=7)}) == 2


def test_queued_removals_offset_nothing() -> None:
    """A wiped index is not complete because memories that should not be searchable have
    removals queued: only an expected memory's change is on its way."""
    assert check(indexed=0, changes={"c": T0, "d": T0, "gone": T0}) == 2


def test_a_memory_gone_or_changed_between_the_reads_is_not_expected() -> None:
    """Deleted, or changed (its change perhaps written after the count) meanwhile: neither is
    counted missing."""
    assert check(indexed=1, deleted="a") == 0
    assert check(indexed=1, changed="a") == 0
