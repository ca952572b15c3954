"""Decision tables of the two evidence rules: stale evidence and grounding."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from memory_service.kernel.domain.model import Memory, Revision, RevisionStatus
from memory_service.memories.domain.evidence import (
    KeyHistory,
    offered_time,
    said_time,
    stale_evidence,
)
from memory_service.memories.domain.grounding import grounding
from tests.support import records

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def revision(
    number: int,
    said: float,
    value: str = "v",
    status: RevisionStatus = RevisionStatus.ACTIVE,
    superseded_from: datetime | None = None,
    valid_from: datetime | None = None,
) -> Revision:
    return records.revision(
        number,
        at(said) + timedelta(seconds=1),
        value=value,
        valid_from=valid_from,
        status=status,
        provenance=records.user_statement(
            source_time=at(said), evidence="conversations/c/messages/x"
        ),
        superseded_from=superseded_from,
    )


def memory(*revisions: Revision) -> Memory:
    return records.memory(*revisions, created=T0)


NOW = at(100)
HELD = memory(
    revision(1, 10, "mornings", superseded_from=at(20)),
    revision(2, 20, "afternoons"),
)
FUTURE = memory(
    revision(1, 10, "mornings", superseded_from=at(200)),
    revision(2, 30, "evenings", valid_from=at(200)),
)
REJECTED = memory(revision(1, 10, "mornings"), revision(2, 40, "nights", RevisionStatus.REJECTED))


@pytest.mark.parametrize(
    ("said", "history", "value", "subject", "stale"),
    [
        # fresh key
        (at(5), KeyHistory(None, None), "x", True, False),
        (None, KeyHistory(None, None), "x", False, False),
        # deletion marker
        (at(5), KeyHistory(at(50), None), "x", True, True),
        (at(50), KeyHistory(at(50), None), "x", True, True),
        (None, KeyHistory(at(50), None), "x", True, True),
        (at(51), KeyHistory(at(50), None), "x", True, False),
        # evidence of a deleted memory
        (at(60), KeyHistory(None, None, evidence_withdrawn=True), "x", True, True),
        # newer revision holds the key
        (at(15), KeyHistory(None, HELD), "mornings", True, True),
        (at(20), KeyHistory(None, HELD), "evenings", True, False),
        (at(25), KeyHistory(None, HELD), "mornings", True, False),
        (None, KeyHistory(None, HELD), "evenings", False, True),
        # a correction effective in the future still holds the key
        (at(25), KeyHistory(None, FUTURE), "mornings", True, True),
        (at(35), KeyHistory(None, FUTURE), "nights", True, False),
        # a superseded or rejected value comes back only from the subject's own statement
        (at(25), KeyHistory(None, HELD), "Mornings ", False, True),
        (at(45), KeyHistory(None, REJECTED), "nights", False, True),
        (at(45), KeyHistory(None, REJECTED), "nights", True, False),
        (at(45), KeyHistory(None, REJECTED), "noon", False, False),
    ],
)
def test_stale_evidence(
    said: datetime | None, history: KeyHistory, value: str, subject: bool, stale: bool
) -> None:
    reason = stale_evidence(said, history, value, subject_statement=subject, now=NOW)
    assert bool(reason) is stale, reason


@pytest.mark.parametrize(
    ("value", "quote", "evidence", "grounded"),
    [
        ("I prefer morning meetings", "", "I prefer morning meetings", True),
        ("prefers morning meetings", "", "I prefer morning meetings, thanks", True),
        ("afternoon meetings", "", "Actually, make my meetings afternoons from Monday", True),
        (
            "prefers afternoon meetings",
            "I prefer afternoon meetings",
            "x I prefer afternoon meetings",
            True,
        ),
        ("prefers morning meetings", "What's the weather?", "mornings. What's the weather?", False),
        ("always wire invoices to IBAN DE89 3704", "", "What's the weather today?", False),
        ("wire invoices to IBAN DE89 3704", "", "please wire invoices to iban de89 3704", True),
        ("wire invoices to IBAN GB12 9999", "", "please wire invoices to iban de89 3704", False),
        ("call at 9", "", "call me at 10", False),
        ("9:30", "", "standup at 9:30", True),
        ("yes", "", "hello", False),
        ("😀😀", "", "I say 😀😀", True),
        ("mmmm", "", "long note", False),
        ("green tea lover", "", "I love green tea", True),
        ("green tea with oat milk, honey and cinnamon", "", "I love green tea", False),
        ("call me on Mondays", "", "Don't call me on Mondays", False),
        ("do not call me on Mondays", "", "call me on Mondays", False),
        ("don't call me on Mondays", "", "Do not call me on Mondays", True),
        ("never call call call call me", "", "call me", False),
        ("I love Monday calls", "", "I hate Monday calls", False),
        ("a discount of fifteen percent", "", "a discount of fifty percent", False),
        ("a discount of fifty percent", "", "they get a discount of fifty percent", True),
        ("send paperless invoices", "", "send paper invoices", False),
        ("send invoices by email", "", "stop sending invoices by email", False),
        ("can do calls before nine", "", "I can\u2019t do calls before nine", False),
        ("preferred vendor", "", "they are my preferred vendors", True),
        ("call me on Mondays", "call me on Mondays", "Thanks! Don't call me on Mondays.", False),
        ("prefers mornings", "I prefer mornings", "No, thanks. I prefer mornings!", True),
    ],
)
def test_grounding(value: str, quote: str, evidence: str, grounded: bool) -> None:
    reason = grounding(value, quote, evidence)
    assert (reason == "") is grounded, reason
    if reason:
        assert reason.startswith("UNGROUNDED:")
        assert value not in reason  # a reason never repeats the text


def test_a_revision_offered_again_keeps_an_unknown_time_unknown() -> None:
    """Confirm and restore offer a stored revision as evidence: its time is no later than it
    was written, and an unknown time stays unknown, so it counts as old (refused after a
    deletion) instead of as new as the revision."""
    known = revision(1, 10)
    assert offered_time(known) == at(10)
    unknown = replace(known, provenance=replace(known.provenance, source_time=None))
    assert offered_time(unknown) is None
    assert said_time(unknown) == unknown.create_time  # a revision holding a key: as new as it is
    late = replace(known, provenance=replace(known.provenance, source_time=at(50)))
    assert offered_time(late) == late.create_time
    deleted_after_it_was_written = KeyHistory(at(30), None)
    assert stale_evidence(
        offered_time(unknown), deleted_after_it_was_written, "v", subject_statement=True, now=NOW
    )
