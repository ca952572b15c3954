"""What the index may hold is derived from the records: the applicable text, or nothing."""

from __future__ import annotations

from datetime import timedelta

from memory_service.domain import rules
from memory_service.domain.indexing import future_boundaries, index_document
from memory_service.domain.model import RevisionStatus
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
