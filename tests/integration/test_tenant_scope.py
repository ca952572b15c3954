"""The tenant guard on real SQLite and PostgreSQL: every statement a unit of work sends must be
limited to its tenant, or it never reaches the database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import delete, func, insert, or_, select, text, update
from sqlalchemy.orm import Session

from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.storage.migrate import upgrade
from memory_service.kernel.storage.models import ImportItemRow, MemoryRow, OutboxRow, RevisionRow
from memory_service.kernel.storage.scoped import TENANT_TABLES, TenantScopeViolation
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.conftest import BACKENDS
from tests.integration.test_storage import make_memory
from tests.support.servers import database_url

memories = MemoryRow.__table__


@pytest.fixture(scope="module", params=BACKENDS)
def units(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlUnitOfWorkFactory]:
    """One database per backend for the module (the tests use their own tenants): the table of
    statements runs in seconds."""
    with database_url(request.param, tmp_path_factory.mktemp("scope"))() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        yield SqlUnitOfWorkFactory(engine, check_scope=True)
        engine.dispose()


def _outbox_row(tenant: str) -> dict[str, Any]:
    now = utcnow()
    return {
        "tenant_id": tenant,
        "memory_id": "m",
        "due_time": now,
        "create_time": now,
        "attempts": 0,
        "kind": "memory",
    }


SCOPED: dict[str, Callable[[Session], Any]] = {
    "select": lambda s: s.execute(select(memories).where(memories.c.tenant_id == "t1")),
    "select by ORM column": lambda s: s.execute(
        select(MemoryRow.id).where(MemoryRow.key == "k", MemoryRow.tenant_id == "t1")
    ),
    "aggregate": lambda s: s.scalar(
        select(func.count(MemoryRow.id)).where(MemoryRow.tenant_id == "t1")
    ),
    "nested select, both scoped": lambda s: s.execute(
        select(memories).where(
            memories.c.tenant_id == "t1",
            MemoryRow.id.in_(select(RevisionRow.memory_id).where(RevisionRow.tenant_id == "t1")),
        )
    ),
    "update": lambda s: s.execute(
        update(MemoryRow).where(MemoryRow.tenant_id == "t1", MemoryRow.id == "x").values(version=2)
    ),
    "delete": lambda s: s.execute(
        delete(RevisionRow).where(RevisionRow.tenant_id == "t1", RevisionRow.memory_id == "x")
    ),
    "insert": lambda s: s.execute(insert(OutboxRow.__table__).values(_outbox_row("t1"))),
    "insert many": lambda s: s.execute(
        insert(OutboxRow.__table__), [_outbox_row("t1"), _outbox_row("t1")]
    ),
    "raw SQL on no tenant table": lambda s: s.execute(text("SELECT 1")),
}

UNSCOPED: dict[str, Callable[[Session], Any]] = {
    "select without predicate": lambda s: s.execute(select(MemoryRow.id)),
    "select of another tenant": lambda s: s.execute(
        select(memories).where(memories.c.tenant_id == "t2")
    ),
    "predicate under OR": lambda s: s.execute(
        select(memories).where(or_(memories.c.tenant_id == "t1", memories.c.key == "k"))
    ),
    "predicate not equality": lambda s: s.execute(
        select(memories).where(memories.c.tenant_id.in_(["t1", "t2"]))
    ),
    "unscoped nested select": lambda s: s.execute(
        select(memories).where(
            memories.c.tenant_id == "t1",
            MemoryRow.id.in_(select(RevisionRow.memory_id)),
        )
    ),
    "aggregate across tenants": lambda s: s.scalar(select(func.count(MemoryRow.id))),
    "Core update": lambda s: s.execute(
        update(MemoryRow).where(MemoryRow.id == "x").values(version=2)
    ),
    "Core delete": lambda s: s.execute(delete(RevisionRow).where(RevisionRow.memory_id == "x")),
    "delete of another tenant": lambda s: s.execute(
        delete(RevisionRow).where(RevisionRow.tenant_id == "t2")
    ),
    "insert into another tenant": lambda s: s.execute(
        insert(OutboxRow.__table__).values(_outbox_row("t2"))
    ),
    "insert many, one row elsewhere": lambda s: s.execute(
        insert(OutboxRow.__table__), [_outbox_row("t1"), _outbox_row("t2")]
    ),
    "raw text": lambda s: s.execute(text("SELECT id FROM memories WHERE tenant_id = 't1'")),
    "driver SQL": lambda s: s.connection().exec_driver_sql("DELETE FROM import_items"),
}


@pytest.mark.parametrize("statement", SCOPED.values(), ids=SCOPED.keys())
def test_a_statement_limited_to_the_tenant_passes(
    units: SqlUnitOfWorkFactory, statement: Callable[[Session], Any]
) -> None:
    with units("t1", write=True) as uow:
        statement(uow.session)


@pytest.mark.parametrize("statement", UNSCOPED.values(), ids=UNSCOPED.keys())
def test_a_statement_not_limited_to_the_tenant_is_refused(
    units: SqlUnitOfWorkFactory, statement: Callable[[Session], Any]
) -> None:
    with pytest.raises(TenantScopeViolation), units("t1", write=True) as uow:
        statement(uow.session)


def test_a_cached_statement_shape_is_checked_again_with_each_tenant_value(
    units: SqlUnitOfWorkFactory,
) -> None:
    def by_tenant(tenant: str) -> Any:
        return select(memories.c.id).where(memories.c.tenant_id == tenant, memories.c.key == "k")

    with units("t1", write=False) as uow:
        uow.session.execute(by_tenant("t1"))
        with pytest.raises(TenantScopeViolation):
            uow.session.execute(by_tenant("t2"))


def test_nothing_of_a_refused_statement_reaches_the_database(units: SqlUnitOfWorkFactory) -> None:
    memory = make_memory("t4")
    with units("t4", write=True) as uow:
        uow.memories.add(memory)
        uow.commit()
    with units("t5", write=True) as uow:
        with pytest.raises(TenantScopeViolation):
            uow.session.execute(
                update(MemoryRow).where(MemoryRow.id == memory.id).values(version=9)
            )
        uow.commit()
    with units("t4", write=False) as uow:
        stored = uow.memories.get(memory.id)
    assert stored is not None
    assert stored.version == 1


def test_the_all_tenants_unit_of_work_is_the_named_way_across_tenants(
    units: SqlUnitOfWorkFactory,
) -> None:
    tenants = ("across-1", "across-2")
    for tenant in tenants:
        with units(tenant, write=True) as uow:
            uow.memories.add(make_memory(tenant))
            uow.commit()
    with units.all_tenants() as everyone:
        count = everyone.session.scalar(
            everyone.select(MemoryRow, func.count(MemoryRow.id)).where(
                MemoryRow.tenant_id.in_(tenants)
            )
        )
    assert count == 2


def test_every_repository_statement_passes_the_guard(units: SqlUnitOfWorkFactory) -> None:
    """The repositories build on the scoped helper: a full round of writes and reads is clean."""
    memory = make_memory("t3")
    with units("t3", write=True) as uow:
        uow.memories.add(memory)
        assert uow.memories.advance_version(memory.id, 1, utcnow())
        uow.memories.update_revision(memory.revisions[0])
        uow.memories.mark_deleted(memory.id, utcnow(), "hash")
        assert uow.memories.deleted_lineage("conversations/c/messages/m") is False
        uow.outbox.enqueue(memory.id, utcnow(), utcnow())
        assert list(uow.outbox.queued_changes()) == [memory.id]
        assert not uow.outbox.tenant_work()
        assert uow.imports.cancel_pending("u1", ["h"]) == 0
        assert uow.imports.blank_text("u1", ["h"], memory.id) == []
        assert uow.idempotency.redact_shown([memory.id]) == 0
        assert not uow.grants.remove("u1", "c1")
        uow.commit()


def test_every_table_is_a_tenant_table() -> None:
    """A new table without a tenant column would be outside the guard: say so here first."""
    assert ImportItemRow.__tablename__ in TENANT_TABLES
    assert len(TENANT_TABLES) == len(MemoryRow.metadata.tables)
