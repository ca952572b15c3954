"""`list_after` reads a page of memories and their revisions in one joined statement (the read
a context makes). It must give exactly what reading each memory on its own gives (`get`),
over memories with several revisions of every state, deletion markers, other scopes and
another tenant's rows, and its limit must count memories, never revision rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from memory_service.kernel.domain.model import (
    Confirmation,
    EvidenceRef,
    EvidenceType,
    Memory,
    MemoryKind,
    Override,
    ParentType,
    Provenance,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    new_id,
    utcnow,
)
from memory_service.kernel.domain.ports import MemoryQuery, Visibility
from memory_service.kernel.storage.migrate import upgrade
from memory_service.memories.storage.memory_listing import SUBJECT_RANGES_MAX_CUSTOMERS
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.support import records

CALLER = Visibility(frozenset({"u1"}), frozenset({"c1"}))
EVERYONE = Visibility(None, None)
DAY = timedelta(days=1)


def _memory(tenant: str, scope: Scope, key: str, now: datetime, revisions: int) -> Memory:
    memory_id = new_id()
    memory = replace(
        records.memory(created=now, memory_id=memory_id, tenant=tenant, key=key),
        scope=scope,
        kind=MemoryKind.FACT,
        version=revisions,
        update_time=now + timedelta(seconds=revisions),
    )
    for number in range(1, revisions + 1):
        memory.revisions.append(
            records.revision(number, now + timedelta(seconds=number), memory_id=memory_id)
        )
    return memory


def _dataset(now: datetime) -> dict[str, list[Memory]]:
    """Per tenant, memories whose revisions cover what a context must tell apart."""
    user, customer = Scope(ScopeType.USER, "u1"), Scope(ScopeType.CUSTOMER, "c1")
    history = _memory("t1", user, "history", now, 4)
    first, second, third, fourth = history.revisions
    first.superseded_from, first.superseded_by_number = now - timedelta(days=2), 2
    second.superseded_from = now + timedelta(days=1)  # superseded from a future instant
    second.superseded_by_number = 3
    third.status, third.status_reason = RevisionStatus.CANDIDATE, "not grounded"
    fourth.valid_from = now + timedelta(days=5)  # not yet effective
    fourth.valid_until = now + timedelta(days=9)
    documented = _memory("t1", customer, "documented", now, 2)
    documented.revisions[0].status = RevisionStatus.REJECTED
    documented.revisions[1].provenance = Provenance(
        Speaker.TOOL,
        ProvenanceMethod.DOCUMENT,
        EvidenceRef(EvidenceType.DOCUMENT, "https://docs.example/terms"),
        "net 30",
        now - timedelta(hours=1),
        "v7",
        "payment terms are net 30",
    )
    documented.revisions[1].source_change_time = now
    confirmed = _memory("t1", Scope(ScopeType.ORGANIZATION, ""), "confirmed", now, 1)
    confirmed.revisions[0].confirmation = Confirmation("u2", now, "admin", now)
    expired = _memory("t1", user, "expired", now, 1)
    expired.revisions[0].valid_until = now - timedelta(seconds=1)
    return {
        "t1": [
            history,
            documented,
            confirmed,
            expired,
            _memory("t1", user, "deleted", now, 2),
            _memory("t1", Scope(ScopeType.USER, "u2"), "other_user", now, 2),
            _memory("t1", Scope(ScopeType.CUSTOMER, "c2"), "other_customer", now, 3),
            *(_memory("t1", user, f"plain_{n}", now, 1 + n % 3) for n in range(6)),
        ],
        "t2": [_memory("t2", user, "history", now, 3), _memory("t2", customer, "x", now, 1)],
    }


@pytest.fixture
def stored(units: SqlUnitOfWorkFactory) -> dict[str, list[Memory]]:
    now = utcnow()
    data = _dataset(now)
    for tenant, memories in data.items():
        with units(tenant, write=True) as uow:
            for memory in memories:
                uow.memories.add(memory)
            uow.commit()
    with units("t1", write=True) as uow:
        uow.memories.mark_deleted(data["t1"][4].id, now, "hash")
        uow.commit()
    return data


def _one_by_one(units: SqlUnitOfWorkFactory, ids: list[str]) -> list[Memory]:
    with units("t1", write=False) as uow:
        found = [uow.memories.get(memory_id) for memory_id in ids]
    return [memory for memory in found if memory is not None]


def _visible(memory: Memory, visibility: Visibility, deleted: bool) -> bool:
    scope = memory.scope
    if memory.key == "deleted" and not deleted:
        return False
    if scope.type is ScopeType.USER:
        return visibility.user_ids is None or scope.id in visibility.user_ids
    if scope.type is ScopeType.CUSTOMER:
        return visibility.customer_ids is None or scope.id in visibility.customer_ids
    return True


@pytest.mark.parametrize("visibility", [CALLER, EVERYONE], ids=["caller", "everyone"])
@pytest.mark.parametrize("show_deleted", [False, True], ids=["live", "with_markers"])
def test_list_after_gives_what_reading_each_memory_gives(
    units: SqlUnitOfWorkFactory,
    stored: dict[str, list[Memory]],
    visibility: Visibility,
    show_deleted: bool,
) -> None:
    expected_ids = sorted(m.id for m in stored["t1"] if _visible(m, visibility, show_deleted))
    query = MemoryQuery(visibility, show_deleted=show_deleted)
    with units("t1", write=False) as uow:
        listed = uow.memories.list_after(query, "", 500)
    assert [m.id for m in listed] == expected_ids
    assert listed == _one_by_one(units, expected_ids)
    history = next(m for m in listed if m.key == "history")
    assert [r.number for r in history.revisions] == [1, 2, 3, 4]


def test_the_limit_counts_memories_not_revisions(
    units: SqlUnitOfWorkFactory, stored: dict[str, list[Memory]]
) -> None:
    """Pages of two memories with up to four revisions each: every memory comes once, whole."""
    expected_ids = sorted(m.id for m in stored["t1"] if _visible(m, EVERYONE, False))
    pages, after = [], ""
    with units("t1", write=False) as uow:
        while page := uow.memories.list_after(MemoryQuery(EVERYONE), after, 2):
            assert len(page) <= 2
            pages.append(page)
            after = page[-1].id
    listed = [memory for page in pages for memory in page]
    assert [m.id for m in listed] == expected_ids
    assert listed == _one_by_one(units, expected_ids)
    assert sum(len(m.revisions) for m in listed) > 2 * len(pages)  # pages held many revisions


@pytest.mark.parametrize(
    ("caller", "ranges"),
    [(CALLER, 3), (Visibility(frozenset({"u1"}), frozenset()), 2)],
    ids=["user_and_customer", "no_customer"],
)
def test_a_context_read_seeks_the_callers_subjects_in_the_index(
    tmp_path: Path, caller: Visibility, ranges: int
) -> None:
    """SQLite answers a context's read with one range of (tenant, scope_type, scope_id, live,
    id) per kind of subject the caller has, never a walk of the tenant's memories (29 ms for
    35 memories among 80,000 before 0018; a caller of no customer walked until 98885d7)."""
    engine = create_database_engine(f"sqlite:///{tmp_path / 'plan.db'}")
    upgrade(engine)
    units = SqlUnitOfWorkFactory(engine)
    now = utcnow()
    with units("t1", write=True) as uow:
        for n in range(20):
            uow.memories.add(_memory("t1", Scope(ScopeType.USER, f"u{n}"), f"k{n}", now, 1))
        uow.commit()
    sent: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    with units("t1", write=False) as uow:
        uow.memories.list_after(MemoryQuery(caller), "", 100)
    event.remove(engine, "before_cursor_execute", record)
    statement, parameters = sent[-1]
    with engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
    engine.dispose()
    searches = [
        row[3] for row in plan if "memories " in row[3] and "memory_revisions" not in row[3]
    ]
    assert (
        searches
        == [
            "SEARCH memories USING INDEX ix_memories_subject"
            " (tenant_id=? AND scope_type=? AND scope_id=? AND live=?)"
        ]
        * ranges
    ), plan


@pytest.mark.parametrize(
    "customers", [SUBJECT_RANGES_MAX_CUSTOMERS, SUBJECT_RANGES_MAX_CUSTOMERS + 1]
)
def test_a_caller_of_few_or_many_customers_pages_through_exactly_what_it_sees(
    units: SqlUnitOfWorkFactory, customers: int
) -> None:
    """Read by subject (up to SUBJECT_RANGES_MAX_CUSTOMERS granted customers) or by a walk of
    the tenant (more), every page after the last: each visible memory once, in id order."""
    now = utcnow()
    granted = frozenset(f"c{n}" for n in range(customers))
    scopes = [
        *(Scope(ScopeType.CUSTOMER, customer) for customer in sorted(granted)),
        Scope(ScopeType.CUSTOMER, "elsewhere"),
        Scope(ScopeType.USER, "u1"),
        Scope(ScopeType.USER, "u2"),
        Scope(ScopeType.ORGANIZATION, ""),
    ]
    with units("t1", write=True) as uow:
        made = [_memory("t1", scope, f"k{n}", now, 1) for scope in scopes for n in range(3)]
        for memory in made:
            uow.memories.add(memory)
        uow.commit()
    hidden = {"elsewhere", "u2"}
    expected = sorted(m.id for m in made if m.scope.id not in hidden)
    seen: list[str] = []
    with units("t1", write=False) as uow:
        after = ""
        while page := uow.memories.list_after(
            MemoryQuery(Visibility(frozenset({"u1"}), granted)), after, 7
        ):
            seen += [m.id for m in page]
            after = page[-1].id
    assert seen == expected


def test_migration_0019_gives_organization_memories_the_empty_scope_id(
    units: SqlUnitOfWorkFactory,
) -> None:
    """ProposeMemory once kept the id it was sent for the organization's scope. Every such
    memory gets the empty id, so reads find it alike (found by hostile reviews of 9285535,
    98885d7 and 2791fa8): a live one with a new version (not past the integer limit) and its
    index change queued, its key context naming the old id (numbered until free) if its key is
    taken, and an override beside it following it (one beside no live memory stays: moved, it
    would shadow another); a deletion marker keeps its hash; a live memory keeps no hash (an
    earlier 0018 wrote one, which restore refuses); running it twice changes nothing more."""
    from alembic import command

    from memory_service.kernel.storage import migrate

    now = utcnow()
    hq = Scope(ScopeType.ORGANIZATION, "hq")
    odd = replace(_memory("t1", hq, "currency", now, 1), version=2**31 - 1)
    clash = _memory("t1", Scope(ScopeType.ORGANIZATION, "HQ@2"), "office", now, 1)
    crowded = _memory("t1", hq, "desk", now, 1)
    held = [
        _memory("t1", Scope(ScopeType.ORGANIZATION, ""), key, now, 1) for key in ("office", "desk")
    ]
    held += [
        replace(_memory("t1", Scope(ScopeType.ORGANIZATION, ""), "desk", now, 1), key_context=c)
        for c in ("scope-hq", "scope-hq-2")
    ]
    gone = _memory("t1", hq, "phone", now, 1)
    later = now + timedelta(days=20)
    for_crowded, alone = (
        Override(new_id(), "t1", ParentType.CONVERSATION, "c1", key, "", hq, "v", later, now, "u1")
        for key in ("desk", "nothing")
    )
    with units("t1", write=True) as uow:
        for memory in (odd, clash, crowded, *held, gone):
            uow.memories.add(memory)
        uow.overrides.add(for_crowded)
        uow.overrides.add(alone)
        uow.commit()
    with units("t1", write=True) as uow:
        uow.memories.mark_deleted(gone.id, now, "deleted")
        uow.commit()
    with units.engine.begin() as connection:  # what the first form of 0018 left
        connection.execute(
            text("UPDATE memories SET key_hash = 'h' WHERE id = :m"), {"m": held[0].id}
        )
        hashes_before = dict(connection.execute(text("SELECT id, key_hash FROM memories")).all())
    hashes_before[held[0].id] = ""
    config = migrate._config()
    for _ in range(2):
        with units.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0018")
            command.upgrade(config, "0019")
    mine = (odd, clash, crowded, held[0], gone)
    with units("t1", write=False) as uow:
        after = {m.id: uow.memories.get(m.id) for m in mine}
        overrides = [uow.overrides.get(o.id) for o in (for_crowded, alone)]
        queued = uow.outbox.queued_changes()
        few = uow.memories.list_after(MemoryQuery(CALLER), "", 100)
        many = frozenset(f"c{n}" for n in range(SUBJECT_RANGES_MAX_CUSTOMERS + 1))
        walked = uow.memories.list_after(MemoryQuery(Visibility(frozenset({"u1"}), many)), "", 100)
    assert {m.id: (m.scope.id, m.key_context, m.version) for m in after.values() if m} == {
        odd.id: ("", "", odd.version),
        clash.id: ("", "scope-hq-2", clash.version + 1),
        crowded.id: ("", "scope-hq-3", crowded.version + 1),
        held[0].id: ("", "", held[0].version),
        gone.id: ("", "", gone.version),
    }
    assert set(queued) == {odd.id, clash.id, crowded.id}
    # an override follows the live memory it stood beside; one beside none stays as it was
    assert [(o.scope.id, o.key_context) for o in overrides if o] == [
        ("", "scope-hq-3"),
        ("hq", ""),
    ]
    visible = {odd.id, clash.id, crowded.id, *(m.id for m in held)}
    assert {m.id for m in few} == {m.id for m in walked} == visible
    with units.engine.connect() as connection:
        assert dict(connection.execute(text("SELECT id, key_hash FROM memories")).all()) == (
            hashes_before
        )


def test_the_fake_lists_memories_changed_since_an_instant_as_sql_does(
    units: SqlUnitOfWorkFactory,
) -> None:
    """Fails on cce73a6: the fake ignored `changed_since` (an incremental export's filter)."""
    from memory_service.testing.fake_storage import FakeUnitOfWorkFactory

    now = utcnow()
    listed = []
    for factory in (units, FakeUnitOfWorkFactory()):
        with factory("t1", write=True) as uow:
            uow.memories.add(_memory("t1", Scope(ScopeType.USER, "u1"), "old", now - DAY, 1))
            uow.memories.add(_memory("t1", Scope(ScopeType.USER, "u1"), "new", now, 1))
            uow.commit()
        with factory("t1", write=False) as uow:
            query = MemoryQuery(CALLER, changed_since=now - DAY / 2)
            listed.append([m.key for m in uow.memories.list_after(query, "", 10)])
    assert listed == [["new"], ["new"]]
