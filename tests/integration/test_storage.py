"""Storage against real SQLite and PostgreSQL: schema, tenant scoping and compare-and-swap."""

from __future__ import annotations

import threading
from datetime import timedelta

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from memory_service.kernel.domain.model import Memory, new_id, utcnow
from memory_service.kernel.domain.ports import MemoryQuery, Visibility
from memory_service.kernel.storage.migrate import is_current
from memory_service.kernel.storage.models import Base
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.support import records

EVERYTHING = Visibility(user_ids=None, customer_ids=None)


def make_memory(tenant: str, user: str = "u1", key: str = "meeting_time") -> Memory:
    now, memory_id = utcnow(), new_id()
    first = records.revision(
        1,
        now,
        memory_id=memory_id,
        value="prefers mornings",
        valid_until=now + timedelta(days=3),
        provenance=records.user_statement(quote="mornings"),
        author_user_id=user,
    )
    return records.memory(
        first, created=now, memory_id=memory_id, tenant=tenant, user=user, key=key
    )


def test_migrations_match_the_models(engine: Engine) -> None:
    assert is_current(engine)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []


def test_round_trip_keeps_times_and_unknown_source_time(units: SqlUnitOfWorkFactory) -> None:
    memory = make_memory("t1")
    with units("t1", write=True) as uow:
        uow.memories.add(memory)
        uow.commit()
    with units("t1", write=False) as uow:
        loaded = uow.memories.get(memory.id)
    assert loaded is not None
    original, stored = memory.revisions[0], loaded.revisions[0]
    assert stored.valid_until == original.valid_until
    assert stored.create_time == original.create_time
    assert stored.provenance.source_time is None  # unknown stays unknown (I2)
    assert stored.valid_until is not None
    assert stored.valid_until.tzinfo is not None


def test_every_read_is_tenant_scoped(units: SqlUnitOfWorkFactory) -> None:
    ours, theirs = make_memory("t1"), make_memory("t2")
    for tenant, memory in (("t1", ours), ("t2", theirs)):
        with units(tenant, write=True) as uow:
            uow.memories.add(memory)
            uow.commit()
    with units("t1", write=False) as uow:
        assert uow.memories.get(theirs.id) is None
        assert uow.memories.find_live(theirs.scope, theirs.key, "") is not None  # its own copy
        listed = uow.memories.list_after(MemoryQuery(EVERYTHING), "", 100)
        assert [m.id for m in listed] == [ours.id]
        assert not uow.memories.advance_version(theirs.id, 1, utcnow())


def test_exactly_one_of_many_racing_writers_wins_the_version(
    units: SqlUnitOfWorkFactory,
) -> None:
    memory = make_memory("t1")
    with units("t1", write=True) as uow:
        uow.memories.add(memory)
        uow.commit()
    barrier = threading.Barrier(6)
    wins: list[bool] = []

    def writer() -> None:
        barrier.wait()
        with units("t1", write=True) as uow:
            won = uow.memories.advance_version(memory.id, 1, utcnow())
            uow.commit()
        wins.append(won)

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 5 + [True]
