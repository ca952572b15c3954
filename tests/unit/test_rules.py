"""The time rules, without a database or a wire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Memory, Revision, RevisionStatus
from tests.support import records

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


def revision(number: int, valid_from: datetime | None = None, **changes: object) -> Revision:
    return records.revision(number, T0, valid_from=valid_from, **changes)


def memory(*revisions: Revision) -> Memory:
    return records.memory(*revisions, created=T0)


def correct(target: Memory, valid_from: datetime) -> Revision:
    newcomer = revision(target.revisions[-1].number + 1, valid_from)
    target.revisions.append(newcomer)
    rules.supersede(target, newcomer, valid_from)
    return newcomer


def test_future_correction_leaves_current_revision_in_force_until_it_starts() -> None:
    monday = T0 + timedelta(days=1)
    m = memory(revision(1))
    correct(m, monday)
    assert rules.applicable_revision(m, T0).number == 1  # type: ignore[union-attr]
    assert rules.applicable_revision(m, monday).number == 2  # type: ignore[union-attr]
    assert rules.state_at(m.revisions[0], T0) is RevisionStatus.ACTIVE
    assert rules.state_at(m.revisions[0], monday) is RevisionStatus.SUPERSEDED
    assert m.revisions[0].superseded_by_number == 2


def test_backdated_correction_also_cuts_a_pending_future_one() -> None:
    m = memory(revision(1))
    correct(m, T0 + timedelta(days=7))
    correct(m, T0 + timedelta(days=1))
    assert rules.applicable_revision(m, T0 + timedelta(days=8)).number == 3  # type: ignore[union-attr]
    assert rules.applicable_revision(m, T0).number == 1  # type: ignore[union-attr]


def test_candidates_rejected_and_deleted_never_apply() -> None:
    for status in (RevisionStatus.CANDIDATE, RevisionStatus.REJECTED, RevisionStatus.DELETED):
        assert rules.applicable_revision(memory(revision(1, status=status)), T0) is None


def test_interval_end_is_exclusive() -> None:
    r = revision(1, T0, valid_until=T0 + timedelta(hours=1))
    assert rules.applies_at(r, T0)
    assert not rules.applies_at(r, T0 + timedelta(hours=1))
    assert not rules.applies_at(r, T0 - timedelta(microseconds=1))


@settings(max_examples=200, deadline=None)
@given(
    offsets=st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=8),
    probes=st.lists(st.integers(min_value=-1500, max_value=1500), min_size=1, max_size=20),
)
def test_at_most_one_revision_applies_at_any_instant(offsets: list[int], probes: list[int]) -> None:
    """I1 over arbitrary correction sequences, and the newest correction wins from its start."""
    m = memory(revision(1))
    for offset in offsets:
        correct(m, T0 + timedelta(minutes=offset))
    newest = m.revisions[-1]
    for probe in probes:
        instant = T0 + timedelta(minutes=probe)
        applying = [r for r in m.revisions if rules.applies_at(r, instant)]
        assert len(applying) <= 1
        if newest.valid_from is not None and instant >= newest.valid_from:
            assert applying == [newest]


def test_quote_matching_ignores_case_and_spacing_but_not_words() -> None:
    assert rules.quote_occurs("Morning   MEETINGS", "I prefer morning\nmeetings, thanks")
    assert not rules.quote_occurs("afternoon meetings", "I prefer morning meetings")


def test_a_quote_is_whole_words_of_its_evidence() -> None:
    assert not rules.quote_occurs("wire 1500", "please wire 15000 euros")
    assert not rules.quote_occurs("call me", "recall me later")
    assert rules.quote_occurs("wire 15000", "please wire 15000 euros")
    assert rules.quote_occurs("$5 fee", "a $5 fee")
