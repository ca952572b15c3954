"""The index watch's check of a tenant on real SQLite and PostgreSQL: a complete index costs
one count of the records (and the sidecar's), nothing else; a short one still reads the outbox
and queues the tenant's resync."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from memory_service.app.index_watch import INCOMPLETE, IndexWatch
from memory_service.domain.model import utcnow
from memory_service.storage.unit_of_work import SqlUnitOfWorkFactory
from tests.support.world import World


class _Points:
    """The sidecar's point count for the tenant, as the watch asks it."""

    def __init__(self, points: int) -> None:
        self.points = points

    def tenant_points(self, tenant_id: str) -> int:
        return self.points


def _selects(units: SqlUnitOfWorkFactory, watch: IndexWatch) -> tuple[str | None, list[str]]:
    sent: list[str] = []

    def record(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        words = statement.replace("\n", " ").split()
        if words[0] == "SELECT" and "FROM" in words:
            sent.append(words[words.index("FROM") + 1])

    event.listen(units.engine, "before_cursor_execute", record)
    try:
        reason = watch._examine("acme")
    finally:
        event.remove(units.engine, "before_cursor_execute", record)
    watch.close()
    return reason, sent


def test_a_complete_index_is_checked_by_its_counts_alone(units: SqlUnitOfWorkFactory) -> None:
    """Fails on previous main: the check read the outbox's pending work every time."""
    world = World(units)
    mara = world.who("mara")
    world.create(mara, world.say(mara, "I prefer mornings"), "mornings")
    watch = IndexWatch(_Points(1), units, 10)  # type: ignore[arg-type]
    assert _selects(units, watch) == (None, ["memories"])


def test_a_short_index_still_reads_the_outbox_and_queues_a_resync(
    units: SqlUnitOfWorkFactory,
) -> None:
    world = World(units)
    mara = world.who("mara")
    world.create(mara, world.say(mara, "I prefer mornings"), "mornings")
    store = units.outbox_store()
    delivered = store.claim("test", 10, utcnow(), 30)
    store.complete("test", [item.id for item in delivered])  # indexed, then the index lost it
    queued: list[bool] = []
    watch = IndexWatch(_Points(0), units, 10, on_queued=lambda: queued.append(True))  # type: ignore[arg-type]
    reason, sent = _selects(units, watch)
    assert reason is not None
    assert reason.startswith(INCOMPLETE)
    assert "index_outbox" in sent
    assert queued == [True]
    with units("acme", write=False) as uow:
        assert uow.outbox.pending(utcnow())[1]  # the tenant's resync is queued


def test_a_memory_committed_as_the_check_begins_is_on_its_way_not_missing(
    units: SqlUnitOfWorkFactory,
) -> None:
    """Fails on previous main: the check took its instant before reading the records, so a
    memory stamped after that instant and committed before the read was in the records but not
    yet due in the outbox, and recall answered INDEX_INCOMPLETE while ingest ran."""
    world = World(units)
    mara = world.who("mara")
    world.create(mara, world.say(mara, "I prefer mornings"), "mornings")
    store = units.outbox_store()
    store.complete("test", [item.id for item in store.claim("test", 10, utcnow(), 30)])
    written: list[bool] = []

    def write_as_the_check_reads(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not written and statement.lstrip().startswith("SELECT"):
            written.append(True)
            evidence = world.say(mara, "I prefer window seats")
            world.create(mara, evidence, "window seats", key="seating", now=utcnow())

    watch = IndexWatch(_Points(1), units, 10)  # type: ignore[arg-type]
    event.listen(units.engine, "before_cursor_execute", write_as_the_check_reads)
    try:
        reason = watch._examine("acme")
    finally:
        event.remove(units.engine, "before_cursor_execute", write_as_the_check_reads)
        watch.close()
    assert written == [True]
    assert reason is None
