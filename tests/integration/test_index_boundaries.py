"""Every instant at which a memory's applicable revision changes by itself (a scheduled
correction, an expiry) reaches the index, on real SQLite and PostgreSQL, through the real
outbox drain with the clock moved forward: however many a memory gathers, whatever was queued
before, for restored memories, and for memories written before the drain queued boundaries
(repaired by a rebuild, and by migration 0017)."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest
from alembic import command
from sqlalchemy import text

from memory_service.imports.domain.restore_run import RestoreRun
from memory_service.imports.domain.service import ImportUseCases
from memory_service.kernel.domain.model import (
    ArchiveFormat,
    ImportBatch,
    ImportState,
    Memory,
    MemoryKind,
    RestoreMode,
    Scope,
    ScopeType,
    new_id,
    utcnow,
)
from memory_service.kernel.storage import migrate
from memory_service.memories.domain.indexing import SCHEDULED_AHEAD
from memory_service.memories.domain.memory_requests import CreateMemory
from memory_service.memories.workers import outbox as outbox_module
from memory_service.memories.workers.outbox import OutboxWorker
from memory_service.testing.outbox import drain_once
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.support import exports, records
from tests.support.index import RecordingIndex
from tests.support.world import World


class _Drain:
    """The real drain on a clock the test moves."""

    def __init__(self, units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = utcnow()
        monkeypatch.setattr(outbox_module, "utcnow", lambda: self.now)
        self.index = RecordingIndex()
        self.worker = OutboxWorker(units.outbox_store(), units, self.index)

    def at(self, instant: datetime) -> dict[str, str]:
        """Drains everything due at `instant`; the index's texts then."""
        self.now = instant
        for _ in range(50):
            if not drain_once(self.worker):
                break
        return self.index.texts


def _scheduled(
    world: World, now: datetime, count: int, until: datetime | None = None, key: str = "meeting"
) -> Memory:
    """Mara's `key`, then `count` corrections to `plan n` from day n on, all written `now`;
    `until`: the first value's end."""
    mara = world.who("mara")
    command = CreateMemory(
        Scope(ScopeType.USER, "mara"),
        key,
        "",
        MemoryKind.PREFERENCE,
        world.draft(world.say(mara, "mornings", when=now), "mornings", valid_until=until),
    )
    memory, _ = world.write(mara, lambda uow: world.memories.create(uow, mara, command, now))
    for n in range(1, count + 1):
        said = world.say(mara, f"from day {n}, plan {n}", when=now)
        memory, _ = world.correct(
            mara, memory, said, f"plan {n}", valid_from=now + timedelta(days=n), now=now
        )
    return memory


def _queued(units: SqlUnitOfWorkFactory, memory_id: str) -> list[datetime]:
    store = units.outbox_store()
    with store._all_tenants() as everyone:
        return sorted(
            everyone.session.scalars(
                text("SELECT due_time FROM index_outbox WHERE memory_id = :m"), {"m": memory_id}
            )
        )


def test_every_scheduled_correction_reaches_the_index_however_many_a_memory_gathers(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on c5cee18: a write queued its memory's first four boundaries and nothing queued
    the rest, so from the fifth scheduled correction on the index kept the fourth's text."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    count = SCHEDULED_AHEAD * 2 + 1
    memory = _scheduled(World(units), start, count)
    assert drain.at(start)[memory.id].endswith(": mornings")
    for n in range(1, count + 1):
        day = start + timedelta(days=n)
        assert drain.at(day + timedelta(minutes=1))[memory.id].endswith(f": plan {n}")
        ahead = _queued(units, memory.id)
        assert len(ahead) == len(set(ahead)) <= SCHEDULED_AHEAD, "no boundary queued twice"
    assert _queued(units, memory.id) == []


def test_a_far_boundary_queued_earlier_does_not_hide_a_nearer_one(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on a3a706e (found by a hostile review): a memory held until day 100 had that
    instant queued by its creation, so at day 4 the drain saw "something queued ahead" and
    queued nothing; day 5's correction waited for day 100."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    memory = _scheduled(World(units), start, SCHEDULED_AHEAD + 1, until=start + timedelta(days=100))
    drain.at(start)
    for n in range(1, SCHEDULED_AHEAD + 2):
        day = start + timedelta(days=n, minutes=1)
        assert drain.at(day)[memory.id].endswith(f": plan {n}")


def _restore(units: SqlUnitOfWorkFactory, memory: Memory, now: datetime) -> None:
    batch = SimpleNamespace(id=new_id(), user_id="u", restore_mode=RestoreMode.CLEAN)
    with units(memory.tenant_id, write=True) as uow:
        run = RestoreRun(uow, batch, now)  # type: ignore[arg-type]
        run.write_memories([("line 1", memory)])
        run.flush()
        assert run.restored == 1, run.skipped
        uow.commit()


def test_a_restored_memory_leaves_the_index_when_it_expires(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on a3a706e (hostile review): a restore queued the memory's change for now and
    none of its boundaries, so an expired memory stayed searchable."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    memory_id = new_id()
    memory = records.memory(
        records.revision(1, start - timedelta(days=1), memory_id=memory_id, value="on leave",
                         valid_until=start + timedelta(hours=1)),
        created=start - timedelta(days=1), memory_id=memory_id, tenant="acme",
    )  # fmt: skip
    _restore(units, memory, start)
    assert memory_id in drain.at(start)
    assert memory_id not in drain.at(start + timedelta(hours=2))


def test_a_restored_archive_follows_its_scheduled_correction(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on a3a706e (hostile review), through the archive's own checks: revision 2 of the
    exported memory takes effect in an hour, and the index kept revision 1 after it."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    hour = (start + timedelta(hours=1)).replace(microsecond=0)
    stamp = hour.strftime("%Y-%m-%dT%H:%M:%SZ")
    first = exports.revision("mornings", confirmation=exports.confirmed_by("alice"))
    first["temporal"].update(superseded_from=stamp, superseded_by=2)
    second = exports.revision(
        "afternoons", number=2, confirmation=exports.confirmed_by("alice"), replaces=1
    )
    second["temporal"].update(valid_from=stamp)
    archive = exports.archive(exports.memory(revisions=[first, second], etag='"v2"'))
    world = World(units)
    batch = ImportBatch(
        new_id(), "acme", "alice", ArchiveFormat.CRMMEM_EXPORT, "", ImportState.PENDING, start
    )
    with units("acme", write=True) as uow:
        uow.imports.add_batch(batch, archive)
        ImportUseCases(world.memories)._restore(uow, batch, archive, start)
        uow.commit()
    assert batch.state is ImportState.SUCCEEDED, batch.error
    assert list(drain.at(start).values()) == ["contact.channel: mornings"]
    assert list(drain.at(hour + timedelta(minutes=1)).values()) == ["contact.channel: afternoons"]


def _lose_queued_boundaries(units: SqlUnitOfWorkFactory, memory_id: str) -> None:
    """The state a memory written before 0017 can be in: its queued boundaries all drained,
    more ahead, none queued."""
    store = units.outbox_store()
    with store._all_tenants() as everyone:
        everyone.session.execute(
            text("DELETE FROM index_outbox WHERE memory_id = :m"), {"m": memory_id}
        )
        everyone.session.commit()


def test_a_rebuild_queues_the_boundaries_a_memory_lost(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on a3a706e (hostile review): refills are due when queued, so a rebuild never
    queued a memory's boundaries again."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    world = World(units)
    memory = _scheduled(world, start, 2)
    drain.at(start)
    _lose_queued_boundaries(units, memory.id)
    admin = world.who("root", admin=True)
    world.write(admin, lambda uow: world.memories.reindex(uow, admin, start))
    drain.at(start)
    assert drain.at(start + timedelta(days=2, minutes=1))[memory.id].endswith(": plan 2")


def test_migration_0017_queues_every_memory_with_an_instant_ahead_or_behind(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memories the index has wrong at the deploy are those whose missed boundary already
    passed (an expired restore, a fifth correction): found by the hostile review of d946732,
    whose first 0017 queued only memories with a boundary still ahead."""
    drain = _Drain(units, monkeypatch)
    now = drain.now
    before = now - timedelta(days=7)  # written and drained a week before the deploy
    world = World(units)
    expired_id = new_id()
    expired = records.memory(
        records.revision(1, before, memory_id=expired_id, value="on leave",
                         valid_until=now - timedelta(days=2)),
        created=before, memory_id=expired_id, tenant="acme",
    )  # fmt: skip
    _restore(units, expired, before)
    fifth = _scheduled(world, before, SCHEDULED_AHEAD + 1)  # the fifth two days ago
    waiting = _scheduled(world, now, 2, key="seat")  # boundaries ahead
    plain_said = world.say(world.who("mara"), "tea", when=before)
    plain, _ = world.create(world.who("mara"), plain_said, "tea", key="drink", now=before)
    gone = _scheduled(world, now, 1, key="desk")
    mara = world.who("mara")
    world.write(mara, lambda uow: world.memories.delete(uow, mara, gone.id, None, now))
    drain.at(before)
    drain.at(before + timedelta(days=1, minutes=1))
    for memory in (expired, fifth, waiting, plain, gone):  # as they could be before 0017
        _lose_queued_boundaries(units, memory.id)
    drain.index.texts[expired_id] = "k: on leave"
    drain.index.texts[fifth.id] = f"meeting: plan {SCHEDULED_AHEAD}"
    config = migrate._config()
    with units.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0016")
        command.upgrade(config, "0017")
    queued = [m.id for m in (expired, fifth, waiting, plain, gone) if _queued(units, m.id)]
    assert queued == [expired_id, fifth.id, waiting.id]
    texts = drain.at(now + timedelta(minutes=1))
    assert expired_id not in texts
    assert texts[fifth.id].endswith(f": plan {SCHEDULED_AHEAD + 1}")
    assert drain.at(now + timedelta(days=2, minutes=1))[waiting.id].endswith(": plan 2")


def test_a_drain_that_lost_its_lease_leaves_the_boundaries_to_the_drain_that_took_it(
    units: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails on d946732 (hostile review): a drain whose lease expired while it worked still
    queued the boundaries it read, one of which the other drain had already passed."""
    drain = _Drain(units, monkeypatch)
    start = drain.now
    memory = _scheduled(World(units), start, 2)
    slow = OutboxWorker(units.outbox_store(), units, RecordingIndex())
    stale = slow._prepare()  # read at start: days 1 and 2 ahead
    assert stale is not None
    texts = drain.at(start + timedelta(days=1, minutes=1))  # the lease long gone; day 1 passed
    assert texts[memory.id].endswith(": plan 1")
    after_other = _queued(units, memory.id)
    assert len(after_other) == 1
    slow._settle(stale, slow._send(stale))
    assert _queued(units, memory.id) == after_other
