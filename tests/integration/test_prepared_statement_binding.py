"""Attacks on how the cursor path (`TenantScoped._run`) fills a plan's parameters: IN lists of
many lengths share one plan (more lengths than it keeps SQL texts for), ids that differ only in
characters drivers treat specially, and the values reach the database in their own places. Each
read is compared with SQLAlchemy's own path on real SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from memory_service.kernel.domain.errors import DatabaseUnavailable
from memory_service.kernel.domain.model import CustomerGrant, MemoryKind, ScopeType, utcnow
from memory_service.kernel.domain.ports import MemoryQuery, Visibility
from memory_service.kernel.storage.migrate import upgrade
from memory_service.kernel.storage.scoped import _plain
from memory_service.unit_of_work import SqlUnitOfWork, SqlUnitOfWorkFactory, create_database_engine
from tests.conftest import BACKENDS
from tests.integration.test_prepared_statements import through_sqlalchemy
from tests.integration.test_storage import EVERYTHING, make_memory
from tests.support.servers import database_url

ODD_IDS = ["c-ünï-☃", "c'quote", 'c"dq', "c%s", "c%(x)s", "c?", "c:name", "c\\back", "c" * 120]


@pytest.fixture(scope="module", params=BACKENDS)
def units(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlUnitOfWorkFactory]:
    with database_url(request.param, tmp_path_factory.mktemp("binding"))() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        yield SqlUnitOfWorkFactory(engine, check_scope=True)
        engine.dispose()


def test_in_lists_of_every_length_find_exactly_their_rows(units: SqlUnitOfWorkFactory) -> None:
    """More than the plan's cached lengths (64), in shuffled order and back again: each IN list
    must bind its own items, never a cached text of another length's."""
    tenant = "lengths"
    memories = [make_memory(tenant, key=f"k{n}") for n in range(120)]
    with units(tenant, write=True) as uow:
        for memory in memories:
            uow.memories.add(memory)
        uow.commit()
    ids = [memory.id for memory in memories]
    rng = random.Random(7)
    lengths = list(range(0, 121)) + [rng.randrange(0, 121) for _ in range(60)]
    rng.shuffle(lengths)
    with units(tenant, write=False) as uow:
        assert _plain(uow.session.connection())
        for length in lengths:
            wanted = rng.sample(ids, length)
            asked = [*wanted, *(f"missing-{n}" for n in range(length % 3))]
            found = uow.memories.get_many(asked)
            assert sorted(found) == sorted(wanted), length
            assert all(found[i].id == i and found[i].tenant_id == tenant for i in wanted)


def test_odd_characters_bind_as_values_alike_on_both_paths(units: SqlUnitOfWorkFactory) -> None:
    tenant = "odd-ids"
    granted = ODD_IDS[::2]
    with units(tenant, write=True) as uow:
        for customer in granted:
            uow.grants.add(CustomerGrant(tenant, "ü-user", customer, "admin", utcnow()))
        uow.commit()
    asked = [*ODD_IDS, "c", "%", "_"]
    with units(tenant, write=False) as uow:
        on_the_cursor = (
            uow.grants.granted_among("ü-user", asked),
            uow.grants.customers_of("ü-user"),
            uow.grants.granted_among("u%", asked),
        )
    with through_sqlalchemy(units.engine), units(tenant, write=False) as uow:
        through = (
            uow.grants.granted_among("ü-user", asked),
            uow.grants.customers_of("ü-user"),
            uow.grants.granted_among("u%", asked),
        )
    assert on_the_cursor == through
    assert on_the_cursor[0] == frozenset(granted)
    assert on_the_cursor[1] == frozenset(granted)
    assert on_the_cursor[2] == frozenset()


def test_a_read_of_another_tenants_ids_finds_nothing_on_the_cursor(
    units: SqlUnitOfWorkFactory,
) -> None:
    """The tenant is a parameter like the ids: after many lengths it is still bound in its place."""
    mine = [make_memory("owner", key=f"k{n}") for n in range(5)]
    with units("owner", write=True) as uow:
        for memory in mine:
            uow.memories.add(memory)
        uow.commit()
    ids = [memory.id for memory in mine]
    with units("stranger", write=False) as uow:
        for length in range(1, 6):
            assert uow.memories.get_many(ids[:length]) == {}
            assert uow.memories.get(ids[length - 1]) is None
    with units("owner", write=False) as uow:
        assert sorted(uow.memories.get_many(ids)) == sorted(ids)


def test_filtered_pages_bind_times_enums_and_flags_alike_on_both_paths(
    units: SqlUnitOfWorkFactory,
) -> None:
    """A page's filters bind a datetime (SQLite stores it as text, PostgreSQL as a timestamp),
    enums, a boolean and a limit: each in its own place, the rows decoded back to the same
    aware datetimes."""
    tenant = "filters"
    memories = [make_memory(tenant, user=f"u{n % 3}", key=f"k{n}") for n in range(12)]
    with units(tenant, write=True) as uow:
        for memory in memories:
            uow.memories.add(memory)
        uow.commit()
    now = utcnow()
    queries = [
        MemoryQuery(EVERYTHING),
        MemoryQuery(EVERYTHING, changed_since=now - timedelta(hours=1)),
        MemoryQuery(EVERYTHING, changed_since=now + timedelta(hours=1)),
        MemoryQuery(EVERYTHING, scope_type=ScopeType.USER, scope_id="u1"),
        MemoryQuery(EVERYTHING, key="k4", kind=MemoryKind.PREFERENCE),
        MemoryQuery(EVERYTHING, kind=MemoryKind.FACT),
        MemoryQuery(EVERYTHING, show_deleted=True),
        MemoryQuery(Visibility(frozenset({"u2"}), frozenset())),
        MemoryQuery(Visibility(frozenset({"u0", "u2"}), frozenset({"c1"}))),
    ]

    def pages(uow: SqlUnitOfWork) -> list[object]:
        got = []
        for query in queries:
            for limit in (1, 5, 100):
                page = uow.memories.list_after(query, "", limit)
                after = page[-1].id if page else ""
                got.append((page, uow.memories.list_after(query, after, limit)))
        return got

    with units(tenant, write=False) as uow:
        on_the_cursor = pages(uow)
    with through_sqlalchemy(units.engine), units(tenant, write=False) as uow:
        through = pages(uow)
    assert on_the_cursor == through
    everything = on_the_cursor[2][0]
    assert len(everything) == 12
    assert all(m.revisions[0].valid_until.tzinfo is not None for m in everything)
    assert len(on_the_cursor[1 * 3 + 2][0]) == 12  # changed in the last hour: all
    assert on_the_cursor[2 * 3 + 2][0] == []  # changed after the next hour: none
    assert {m.scope.id for m in on_the_cursor[3 * 3 + 2][0]} == {"u1"}
    assert {m.scope.id for m in on_the_cursor[7 * 3 + 2][0]} == {"u2"}


def test_concurrent_reads_that_fail_midway_hand_every_connection_back_clean(
    units: SqlUnitOfWorkFactory,
) -> None:
    """More reading threads than the pool keeps (10), a third raising mid-read and a third
    failing a statement: afterwards nothing is checked out, no session idles in a transaction
    (PostgreSQL), and each tenant still reads only its own rows."""
    mine = make_memory("busy-1", key="k")
    theirs = make_memory("busy-2", key="k")
    for memory in (mine, theirs):
        with units(memory.tenant_id, write=True) as uow:
            uow.memories.add(memory)
            uow.commit()
    errors: list[BaseException] = []

    def reader(worker: int) -> None:
        for round_ in range(15):
            tenant, own, other = (
                ("busy-1", mine.id, theirs.id) if (worker + round_) % 2 else
                ("busy-2", theirs.id, mine.id)
            )  # fmt: skip
            try:
                with units(tenant, write=False) as uow:
                    assert uow.memories.get(own) is not None
                    assert uow.memories.get(other) is None
                    if round_ % 3 == 1:
                        raise LookupError("the caller's own failure")
                    if round_ % 3 == 2:
                        uow.session.execute(text("SELECT no_such_column FROM no_such_table"))
            except LookupError:
                continue
            except (DBAPIError, DatabaseUnavailable) as error:
                if round_ % 3 != 2:  # only the bad statement may fail (SQLite: OperationalError)
                    errors.append(error)
            except BaseException as error:  # an assertion above, or anything unexpected
                errors.append(error)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors[:3]
    pool: Any = units.engine.pool
    assert pool.checkedout() == 0
    if units.engine.dialect.name == "postgresql":
        with units.engine.connect() as connection:
            stuck = connection.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND state LIKE 'idle in transaction%'"
                )
            ).scalar_one()
        assert stuck == 0
    with units("busy-1", write=False) as uow:
        assert sorted(uow.memories.get_many([mine.id, theirs.id])) == [mine.id]
