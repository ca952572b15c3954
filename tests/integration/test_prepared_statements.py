"""Prepared statements on the driver's cursor (`TenantScoped._run`) and read units of work, on
real SQLite and PostgreSQL: the cursor path reads what SQLAlchemy's path reads, fails as it
fails, is held to the tenant guard, and a read leaves its connection clean for the next tenant."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam, event, func, select, text, update
from sqlalchemy.exc import DBAPIError

from memory_service.kernel.domain.errors import DatabaseUnavailable, WriteConflict
from memory_service.kernel.domain.model import CustomerGrant, utcnow
from memory_service.kernel.domain.ports import MemoryQuery
from memory_service.kernel.storage.migrate import upgrade
from memory_service.kernel.storage.models import Base, MemoryRow, OutboxRow
from memory_service.kernel.storage.scoped import TenantScoped, TenantScopeViolation, _plain
from memory_service.unit_of_work import SqlUnitOfWork, SqlUnitOfWorkFactory, create_database_engine
from tests.conftest import BACKENDS
from tests.integration.test_storage import EVERYTHING, make_memory
from tests.support.servers import database_url


@pytest.fixture(scope="module", params=BACKENDS)
def units(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlUnitOfWorkFactory]:
    """One guarded database per backend for the module; each test uses its own tenants."""
    with database_url(request.param, tmp_path_factory.mktemp("prepared"))() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        yield SqlUnitOfWorkFactory(engine, check_scope=True)
        engine.dispose()


@contextmanager
def through_sqlalchemy(engine: Engine) -> Iterator[None]:
    """A cursor listener: prepared statements then take SQLAlchemy's own execution path."""

    def seen(*_: Any) -> None:
        pass

    event.listen(engine, "after_cursor_execute", seen)
    try:
        yield
    finally:
        event.remove(engine, "after_cursor_execute", seen)


class Probe(TenantScoped):
    """Prepared statements a repository must never build, to see the guard refuse them."""

    def unscoped(self) -> Any:
        return self._run(("probe", "unscoped"), lambda p: select(MemoryRow.id)).all()

    def other_tenant(self, tenant: str) -> Any:
        return self._run(
            ("probe", "other tenant"),
            lambda p: select(MemoryRow.id).where(MemoryRow.tenant_id == bindparam("other")),
            other=tenant,
        ).all()

    def unscoped_update(self) -> int:
        return self._run(
            ("probe", "unscoped update"),
            lambda p: update(MemoryRow).values(version=bindparam("new_version")),
            new_version=99,
        ).rowcount

    def insert_row(self, model: type[Base], values: dict[str, Any]) -> None:
        self._insert_row(model, values)

    def broken(self) -> Any:
        return self._run(
            ("probe", "broken"),
            lambda p: p.select(MemoryRow, func.no_such_function(MemoryRow.id)),
        ).all()


def _store(units: SqlUnitOfWorkFactory, tenant: str) -> list[str]:
    memories = [make_memory(tenant, key=f"k{n}") for n in range(3)]
    with units(tenant, write=True) as uow:
        for memory in memories:
            uow.memories.add(memory)
        uow.grants.add(CustomerGrant(tenant, "u1", "c1", "admin", utcnow()))
        uow.commit()
    return [memory.id for memory in memories]


def _everything_read(uow: SqlUnitOfWork, ids: list[str]) -> tuple[Any, ...]:
    lineage = ids[0]
    return (
        uow.memories.get(ids[0]),
        uow.memories.get("no-such-id"),
        uow.memories.get_many([*ids, "no-such-id"]),
        uow.memories.get_many([]),
        uow.memories.list_after(MemoryQuery(EVERYTHING), "", 2),
        uow.memories.list_after(MemoryQuery(EVERYTHING), ids[0], 100),
        uow.memories.count_live(),
        uow.memories.deletions(*_scoped_key(uow, ids[0]), lineage),
        uow.memories.deleted_lineage(lineage),
        uow.grants.customers_of("u1"),
        uow.grants.granted_among("u1", ["c1", "c2"]),
        uow.grants.granted_among("u1", []),
    )


def _scoped_key(uow: SqlUnitOfWork, memory_id: str) -> tuple[Any, str, str]:
    memory = uow.memories.get(memory_id)
    assert memory is not None
    return memory.scope, memory.key, memory.key_context


def test_a_prepared_statement_reads_alike_on_the_cursor_and_through_sqlalchemy(
    units: SqlUnitOfWorkFactory,
) -> None:
    ids = _store(units, "alike")
    with units("alike", write=False) as uow:
        assert _plain(uow.session.connection())
        on_the_cursor = _everything_read(uow, ids)
    with through_sqlalchemy(units.engine), units("alike", write=False) as uow:
        assert not _plain(uow.session.connection())
        through = _everything_read(uow, ids)
    assert on_the_cursor == through
    assert on_the_cursor[0] is not None
    assert on_the_cursor[0].revisions
    assert on_the_cursor[6] == 3


def test_an_update_on_the_cursor_counts_the_rows_it_changed(units: SqlUnitOfWorkFactory) -> None:
    ids = _store(units, "versions")
    with units("versions", write=True) as uow:
        assert _plain(uow.session.connection())
        assert uow.memories.advance_version(ids[0], 1, utcnow())
        assert not uow.memories.advance_version(ids[0], 1, utcnow())  # already advanced
        uow.commit()
    with units("versions", write=False) as uow:
        stored = uow.memories.get(ids[0])
    assert stored is not None
    assert stored.version == 2


def test_an_insert_on_the_cursor_that_clashes_is_a_write_conflict(
    units: SqlUnitOfWorkFactory,
) -> None:
    memory = make_memory("clash")
    with units("clash", write=True) as uow:
        assert _plain(uow.session.connection())
        uow.memories.add(memory)
        uow.commit()
    with pytest.raises(WriteConflict), units("clash", write=True) as uow:
        uow.memories.add(memory)


def test_the_guard_refuses_an_insert_into_another_tenant_on_the_cursor(
    units: SqlUnitOfWorkFactory,
) -> None:
    now = utcnow()
    row = {"memory_id": "m", "due_time": now, "create_time": now, "attempts": 0, "kind": "memory"}
    with units("inserter", write=True) as uow:
        assert _plain(uow.session.connection())
        probe = Probe(uow.session, "inserter")
        probe.insert_row(OutboxRow, {**row, "tenant_id": "inserter"})
        with pytest.raises(TenantScopeViolation):
            probe.insert_row(OutboxRow, {**row, "tenant_id": "someone-else"})
        uow.commit()
    with units.all_tenants() as everyone:
        tenants = everyone.session.scalars(
            everyone.select(OutboxRow, OutboxRow.tenant_id).where(
                OutboxRow.tenant_id.in_(["inserter", "someone-else"])
            )
        ).all()
    assert tenants == ["inserter"]


@pytest.mark.parametrize("attempt", ["unscoped", "other tenant", "unscoped update"])
def test_the_guard_refuses_an_unscoped_prepared_statement_on_the_cursor(
    units: SqlUnitOfWorkFactory, attempt: str
) -> None:
    ids = _store(units, f"victim-{attempt}")
    with units(f"attacker-{attempt}", write=True) as uow:
        assert _plain(uow.session.connection())  # the cursor path, not SQLAlchemy's listener
        probe = Probe(uow.session, f"attacker-{attempt}")
        run = {
            "unscoped": probe.unscoped,
            "other tenant": lambda: probe.other_tenant(f"victim-{attempt}"),
            "unscoped update": probe.unscoped_update,
        }[attempt]
        with pytest.raises(TenantScopeViolation):
            run()
        uow.commit()
    with units(f"victim-{attempt}", write=False) as uow:
        assert {uow.memories.get(i).version for i in ids} == {1}  # type: ignore[union-attr]


def _broken_read(units: SqlUnitOfWorkFactory, on_the_cursor: bool) -> None:
    with units("errors", write=False) as uow:
        assert _plain(uow.session.connection()) == on_the_cursor
        Probe(uow.session, "errors").broken()


def test_a_driver_error_on_the_cursor_is_the_error_sqlalchemy_raises(
    units: SqlUnitOfWorkFactory,
) -> None:
    with pytest.raises((DBAPIError, DatabaseUnavailable)) as on_the_cursor:
        _broken_read(units, on_the_cursor=True)
    with through_sqlalchemy(units.engine), pytest.raises(type(on_the_cursor.value)) as through:
        _broken_read(units, on_the_cursor=False)
    causes = [
        error.__cause__ if isinstance(error, DatabaseUnavailable) else error
        for error in (on_the_cursor.value, through.value)
    ]
    assert type(causes[0]) is type(causes[1])
    assert isinstance(causes[0], DBAPIError)  # never the driver's own exception


def _idle(dbapi_connection: Any) -> bool:
    if hasattr(dbapi_connection, "in_transaction"):  # sqlite3
        return not dbapi_connection.in_transaction
    from psycopg.pq import TransactionStatus

    return bool(dbapi_connection.info.transaction_status == TransactionStatus.IDLE)


def test_a_read_leaves_its_connection_clean_for_the_next_tenant(
    units: SqlUnitOfWorkFactory,
) -> None:
    first = _store(units, "clean-1")
    second = _store(units, "clean-2")
    returned: list[tuple[int, bool]] = []

    def checked_in(dbapi_connection: Any, _record: Any) -> None:
        returned.append((id(dbapi_connection), _idle(dbapi_connection)))

    def failing_read() -> None:
        with units("clean-1", write=False) as uow:
            uow.memories.get(first[0])
            raise KeyError("the caller's own failure, mid-read")

    def failed_statement() -> None:
        with units("clean-1", write=False) as uow:  # on PostgreSQL it aborts the transaction
            uow.session.execute(text("SELECT no_such_column FROM no_such_table"))

    def committed_read() -> None:
        with units("clean-1", write=False) as uow:
            uow.commit()

    event.listen(units.engine, "checkin", checked_in)
    try:
        with units("clean-1", write=False) as uow:
            assert uow.memories.get(first[0]) is not None
        with pytest.raises(KeyError):
            failing_read()
        with pytest.raises((DBAPIError, DatabaseUnavailable)):
            failed_statement()
        with pytest.raises(RuntimeError):
            committed_read()  # a read never commits
        with units("clean-2", write=False) as uow:
            assert uow.memories.get(first[0]) is None  # the other tenant's memory
            assert uow.memories.get(second[0]) is not None
            with pytest.raises(TenantScopeViolation):
                Probe(uow.session, "clean-2").other_tenant("clean-1")
    finally:
        event.remove(units.engine, "checkin", checked_in)
    assert len(returned) == 5
    assert all(idle for _, idle in returned), returned


def test_a_connection_lost_mid_read_is_unavailable_and_the_next_read_works(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """PostgreSQL only: the server ends the session between two statements of a read."""
    with database_url("postgres", tmp_path_factory.mktemp("lost"))() as url:
        engine = create_database_engine(url)
        try:
            upgrade(engine)
            units = SqlUnitOfWorkFactory(engine, check_scope=True)
            ids = _store(units, "lost")

            def read_while_the_server_ends_the_session() -> None:
                with units("lost", write=False) as uow:
                    assert uow.memories.get(ids[0]) is not None
                    dbapi: Any = uow.session.connection().connection.dbapi_connection
                    with engine.connect() as admin:
                        admin.execute(
                            text("SELECT pg_terminate_backend(:pid)"),
                            {"pid": dbapi.info.backend_pid},
                        )
                        admin.commit()
                    uow.memories.get(ids[0])

            with pytest.raises(DatabaseUnavailable):
                read_while_the_server_ends_the_session()
            for _ in range(3):  # the lost connection was discarded, not handed out again
                with units("lost", write=False) as uow:
                    assert uow.memories.get(ids[0]) is not None
        finally:
            engine.dispose()
