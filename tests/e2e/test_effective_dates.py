"""Effective dates and two clocks: A2, I1 (one truth at a time), I2 (write vs effective time)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.e2e.helpers import (
    ACTIVE,
    CANDIDATE,
    REJECTED,
    SUPERSEDED,
    USER,
    append,
    close_in_time,
    correct,
    create_memory,
    create_pref,
    get,
    list_all,
    names,
    new_conversation,
    next_monday,
    now,
    provenance,
    revision_name,
    revisions,
    to_dt,
    ts,
)
from tests.support.servers import Client

pytestmark = pytest.mark.timeout(120)

DAY = dt.timedelta(days=1)


def applicable_number(client: Client, name: str, at: dt.datetime | None) -> int:
    memory = get(client, name, as_of=at)
    if not memory.HasField("applicable_revision"):
        return 0
    return memory.applicable_revision.revision_number


def test_a2_correction_effective_next_monday(alice: Client) -> None:
    conversation = new_conversation()
    said_mornings = append(alice, conversation, "I prefer morning meetings", USER)
    created = create_memory(
        alice,
        "meeting_time",
        "prefers morning meetings",
        key_context="work",
        evidence=said_mornings.name,
    )
    memory = created.memory
    monday = next_monday()
    sunday = monday - dt.timedelta(hours=12)

    said_afternoons = append(
        alice, conversation, "From Monday, I prefer afternoon meetings for work", USER
    )
    before = now()
    corrected = correct(
        alice,
        memory,
        "prefers afternoon meetings",
        evidence=provenance(said_afternoons.name, quote="I prefer afternoon meetings"),
        valid_from=monday,
    )
    after = now()

    rev2 = corrected.revision
    assert rev2.name == revision_name(memory.name, 2)
    assert rev2.revision_number == 2
    assert rev2.replaces_revision_number == 1
    assert rev2.state == ACTIVE
    assert to_dt(rev2.valid_from) == monday
    assert not rev2.HasField("valid_until")
    assert corrected.memory.etag != memory.etag

    # Today (and Sunday) mornings still apply; from Monday on, afternoons.
    now_view = get(alice, memory.name)
    assert now_view.applicable_revision.revision_number == 1
    assert now_view.applicable_revision.value == "prefers morning meetings"
    assert now_view.applicable_revision.state == ACTIVE
    assert now_view.latest_revision.revision_number == 2
    assert corrected.memory.applicable_revision.revision_number == 1

    assert applicable_number(alice, memory.name, sunday) == 1
    assert applicable_number(alice, memory.name, monday - dt.timedelta(microseconds=1)) == 1
    assert applicable_number(alice, memory.name, monday) == 2
    assert applicable_number(alice, memory.name, monday + dt.timedelta(hours=9)) == 2
    assert applicable_number(alice, memory.name, monday + 60 * DAY) == 2
    assert get(alice, memory.name, as_of=monday).applicable_revision.value == (
        "prefers afternoon meetings"
    )

    # Lists compute the applicable revision at their as_of too.
    [on_sunday] = list_all(alice, key="meeting_time", as_of=sunday)
    assert on_sunday.applicable_revision.revision_number == 1
    [on_monday] = list_all(alice, key="meeting_time", as_of=monday)
    assert on_monday.applicable_revision.revision_number == 2

    # States are computed at the list's instant: revision 1 is superseded only from Monday.
    assert names(list_all(alice, revision_state=SUPERSEDED)) == []
    assert names(list_all(alice, revision_state=SUPERSEDED, as_of=monday)) == [memory.name]
    assert names(list_all(alice, revision_state=ACTIVE, as_of=sunday)) == [memory.name]

    # History: both revisions, oldest first, with lineage and both clocks.
    rev1_h, rev2_h = revisions(alice, memory.name)
    assert rev1_h.revision_number == 1
    assert rev1_h.value == "prefers morning meetings"
    assert not rev1_h.HasField("valid_from")
    assert to_dt(rev1_h.superseded_from) == monday
    assert rev1_h.superseded_by_revision_number == 2
    assert rev1_h.state == ACTIVE, "a revision replaced from a future instant stays ACTIVE"
    assert rev1_h.provenance.transcript_message == said_mornings.name

    assert rev2_h.revision_number == 2
    assert rev2_h.replaces_revision_number == 1
    assert rev2_h.superseded_by_revision_number == 0
    assert to_dt(rev2_h.valid_from) == monday
    assert rev2_h.provenance.transcript_message == said_afternoons.name
    assert rev2_h.provenance.quote == "I prefer afternoon meetings"
    assert rev2_h.provenance.speaker == USER

    # Two clocks: revision 2 was written now, although it takes effect on Monday.
    write_time = to_dt(rev2_h.create_time)
    assert before - dt.timedelta(seconds=1) <= write_time <= after + dt.timedelta(seconds=1)
    assert write_time < monday
    assert to_dt(rev1_h.create_time) <= write_time


def test_correction_without_valid_from_takes_effect_now(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    before = now()
    corrected = correct(alice, memory, "afternoons")
    after = now()
    assert corrected.revision.state == ACTIVE
    assert corrected.revision.replaces_revision_number == 1
    assert corrected.memory.applicable_revision.revision_number == 2
    assert get(alice, memory.name).applicable_revision.value == "afternoons"

    rev1, rev2 = revisions(alice, memory.name)
    assert rev1.state == SUPERSEDED
    assert rev1.superseded_by_revision_number == 2
    superseded_from = to_dt(rev1.superseded_from)
    assert before - dt.timedelta(seconds=1) <= superseded_from <= after + dt.timedelta(seconds=1)
    if rev2.HasField("valid_from"):
        assert rev2.valid_from == rev1.superseded_from
    assert rev2.state == ACTIVE

    # On the effective clock, the past before the correction still belongs to revision 1.
    assert applicable_number(alice, memory.name, before - dt.timedelta(minutes=5)) == 1
    assert applicable_number(alice, memory.name, after + dt.timedelta(minutes=5)) == 2
    assert names(list_all(alice, revision_state=SUPERSEDED)) == [memory.name]


def test_retroactive_correction(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    since = now() - dt.timedelta(days=2)
    corrected = correct(alice, memory, "afternoons since Friday", valid_from=since)
    assert corrected.memory.applicable_revision.revision_number == 2
    rev1, rev2 = revisions(alice, memory.name)
    assert rev1.state == SUPERSEDED
    assert to_dt(rev1.superseded_from) == since
    assert to_dt(rev2.valid_from) == since
    assert applicable_number(alice, memory.name, since - dt.timedelta(hours=1)) == 1
    assert applicable_number(alice, memory.name, since) == 2
    assert applicable_number(alice, memory.name, None) == 2


def test_i1_at_most_one_revision_applies_at_any_instant(alice: Client) -> None:
    t0 = next_monday()
    memory = create_pref(alice, "meeting_time", "v1 open start")
    memory = correct(alice, memory, "v2 from day 1", valid_from=t0 + DAY).memory
    memory = correct(alice, memory, "v3 from day 3", valid_from=t0 + 3 * DAY).memory
    memory = correct(
        alice,
        memory,
        "v4 day 5 to day 6",
        valid_from=t0 + 5 * DAY,
        valid_until=t0 + 6 * DAY,
    ).memory

    expected = {
        t0 - DAY: 1,
        t0 + dt.timedelta(hours=12): 1,
        t0 + DAY: 2,
        t0 + 2 * DAY: 2,
        t0 + 3 * DAY: 3,
        t0 + 4 * DAY: 3,
        t0 + 5 * DAY: 4,
        t0 + dt.timedelta(days=5, hours=12): 4,
        # revision 4 ended and revision 3 was superseded from day 5: nothing applies.
        t0 + 7 * DAY: 0,
    }
    history = revisions(alice, memory.name)
    assert [r.revision_number for r in history] == [1, 2, 3, 4]
    assert [r.replaces_revision_number for r in history] == [0, 1, 2, 3]
    assert [r.superseded_by_revision_number for r in history] == [2, 3, 4, 0]

    def applies(rev: object, at: dt.datetime) -> bool:
        assert hasattr(rev, "state")
        if rev.state in (CANDIDATE, REJECTED):
            return False
        starts = to_dt(rev.valid_from) if rev.HasField("valid_from") else None
        ends = [to_dt(rev.valid_until)] if rev.HasField("valid_until") else []
        if rev.HasField("superseded_from"):
            ends.append(to_dt(rev.superseded_from))
        return (starts is None or starts <= at) and all(at < end for end in ends)

    for at, number in expected.items():
        assert applicable_number(alice, memory.name, at) == number, at
        by_history = [r.revision_number for r in history if applies(r, at)]
        assert len(by_history) <= 1, (at, by_history)
        assert by_history == ([number] if number else []), (at, by_history)


def test_memory_effective_only_in_the_future(alice: Client) -> None:
    start = next_monday()
    end = start + 2 * DAY
    created = create_memory(
        alice,
        "office_days",
        "in the office next week",
        valid_from=start,
        valid_until=end,
    )
    assert to_dt(created.revision.valid_from) == start
    assert to_dt(created.revision.valid_until) == end
    assert not get(alice, created.memory.name).HasField("applicable_revision")
    assert applicable_number(alice, created.memory.name, start) == 1
    assert applicable_number(alice, created.memory.name, end - dt.timedelta(seconds=1)) == 1
    assert applicable_number(alice, created.memory.name, end) == 0, "valid_until is exclusive"


def test_i2_source_time_comes_from_the_evidence(alice: Client) -> None:
    conversation = new_conversation()
    message = append(alice, conversation, "I like tea", USER)
    created = create_memory(alice, "drink", "tea", evidence=message.name)
    source_time = created.revision.provenance.source_time
    assert created.revision.provenance.HasField("source_time")
    assert close_in_time(source_time, message.create_time), (source_time, message.create_time)
    [stored] = revisions(alice, created.memory.name)
    assert close_in_time(stored.provenance.source_time, message.create_time)


def test_i2_explicit_source_time_is_kept(alice: Client) -> None:
    conversation = new_conversation()
    said_long_ago = dt.datetime(2023, 5, 1, 9, 30, tzinfo=dt.UTC)
    message = append(alice, conversation, "Back in May I said I like coffee", USER)
    created = create_memory(
        alice,
        "drink",
        "coffee",
        evidence=provenance(message.name, source_time=said_long_ago),
    )
    assert to_dt(created.revision.provenance.source_time) == said_long_ago
    [stored] = revisions(alice, created.memory.name)
    assert stored.provenance.source_time == ts(said_long_ago)
    # The write clock is still now.
    assert to_dt(stored.create_time) > said_long_ago + dt.timedelta(days=365)
