"""What the index may hold is derived from the records: the applicable text, or nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory_service.domain import rules
from memory_service.domain.indexing import future_boundaries, index_document, missing_from_index
from memory_service.domain.model import Memory, RevisionStatus
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


class _Records:
    """Just enough of a unit of work for the completeness check; logs what is read when."""

    def __init__(self, memories: dict[str, Memory], on_the_way: int, reads: list[str]) -> None:
        self._memories = memories
        self._on_the_way = on_the_way
        self._reads = reads
        self.memories = self
        self.outbox = self

    def live_ids(self) -> list[str]:
        self._reads.append("records")
        return sorted(self._memories)

    def count_live(self) -> int:
        self._reads.append("count")
        return len(self._memories)

    def get_many(self, ids: list[str]) -> dict[str, Memory]:
        return {i: self._memories[i] for i in ids}

    def pending(self, now: datetime) -> tuple[int, bool]:
        self._reads.append("outbox")
        return self._on_the_way, False


def check(indexed: int, on_the_way: int = 0) -> tuple[int, list[str]]:
    proposal = memory(revision(1, status=RevisionStatus.CANDIDATE))
    future = memory(revision(1, T0 + timedelta(days=3)))
    memories = {"a": memory(revision(1)), "b": memory(revision(1)), "c": proposal, "d": future}
    reads: list[str] = []
    records = _Records(memories, on_the_way, reads)

    def count() -> int:
        reads.append("index")
        return indexed

    return missing_from_index(records, count, lambda: T0), reads  # type: ignore[arg-type]


def test_missing_counts_only_what_should_be_searchable_and_is_not_on_its_way() -> None:
    assert check(indexed=2)[0] == 0  # the proposal and next week's memory are not missing
    assert check(indexed=0)[0] == 2
    assert check(indexed=0, on_the_way=1)[0] == 1  # a change still in the outbox
    assert check(indexed=4)[0] == 0


def test_the_index_is_counted_after_the_records_are_read() -> None:
    """A change delivered between the reads is then in the count, not missing from both."""
    assert check(indexed=1)[1] == ["count", "index", "records", "outbox", "index"]


def test_a_complete_index_costs_two_counts_and_lists_no_ids() -> None:
    """The check runs for every recalled tenant every interval: listing a large tenant's ids
    each time cost more than the rest of the check."""
    assert check(indexed=4) == (0, ["count", "index"])
