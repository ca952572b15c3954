"""One scenario through the domain use cases on the dict-backed fake, SQLite and PostgreSQL:
the three must give the same answers, or the fast tests of the rules (tests/unit/*_table.py)
would be testing a storage that does not exist."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from memory_service.context.domain.proposals import Outcome
from memory_service.kernel.domain import model, rules
from memory_service.kernel.domain.errors import DomainError, WriteConflict
from memory_service.kernel.domain.model import (
    DocumentVersion,
    Identity,
    Memory,
    MemoryKind,
    Message,
    ProvenanceMethod,
    Revision,
    Scope,
    ScopeType,
    Speaker,
    Task,
    TaskCheckpoint,
    TaskState,
)
from memory_service.kernel.domain.ports import Candidate, UnitOfWork, Visibility
from memory_service.kernel.storage.migrate import upgrade
from memory_service.memories.domain.memory_requests import MemoryFilter
from memory_service.memories.domain.recall import ScopeHint
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.support.servers import database_url
from tests.support.world import World, at, message_name

CUSTOMER = Scope(ScopeType.CUSTOMER, "globex")
ORG = Scope(ScopeType.ORGANIZATION, "")


class Names:
    """Ids are random: each is replaced by the order in which the scenario first met it."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            for real, alias in self._seen.items():
                value = value.replace(real, alias)
            return value
        if isinstance(value, list | tuple):
            return type(value)(self(v) for v in value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        return value

    def learn(self, real: str) -> None:
        if real and real not in self._seen:
            self._seen[real] = f"<id{len(self._seen) + 1}>"


def _revision(revision: Revision) -> tuple[Any, ...]:
    confirmation = revision.confirmation
    return (
        revision.number,
        revision.value,
        revision.status.value,
        revision.valid_from,
        revision.valid_until,
        revision.superseded_from,
        revision.superseded_by_number,
        revision.replaces_number,
        revision.provenance.speaker.value,
        revision.provenance.method.value,
        revision.provenance.evidence.ref,
        revision.provenance.quote,
        revision.provenance.source_time,
        revision.create_time,
        revision.author_user_id,
        revision.status_reason,
        revision.source_change_time,
        (confirmation.user_id, confirmation.confirm_time) if confirmation else None,
    )


def _memory(memory: Memory) -> tuple[Any, ...]:
    return (
        memory.id,
        memory.tenant_id,
        memory.scope.type.value,
        memory.scope.id,
        memory.key,
        memory.key_context,
        memory.kind.value,
        memory.version,
        memory.create_time,
        memory.update_time,
        memory.delete_time,
        memory.key_hash,
        [_revision(r) for r in memory.revisions],
    )


def _outcome(outcome: Outcome) -> tuple[Any, ...]:
    override = outcome.override
    return (
        outcome.decision.value,
        outcome.reason,
        _memory(outcome.memory) if outcome.memory else None,
        _revision(outcome.revision) if outcome.revision else None,
        (override.parent_id, override.key, override.value, override.expire_time)
        if override
        else None,
    )


def scenario(world: World) -> list[tuple[str, Any]]:
    """Writes, corrections, proposals, confirmation, deletion, late work and reads, recorded
    as plain values (ids included: `Names` makes them comparable)."""
    names = Names()
    steps: list[tuple[str, Any]] = []
    mara, ben = world.who("mara"), world.who("ben")
    root = world.who("root", admin=True)

    def step(name: str, action: Callable[[], Any]) -> Any:
        try:
            result = action()
        except DomainError as error:
            refusal = ("refused", type(error).__name__, error.reason, error.metadata)
            steps.append((name, names(refusal)))
            return None
        for value in _ids(result):
            names.learn(value)
        steps.append((name, names(_plain(result))))
        return result

    def said(who: Any, text: str, hour: float, **kw: Any) -> Message:
        message: Message = step(f"say {text!r}", lambda: world.say(who, text, when=at(hour), **kw))
        return message

    world.grant("mara", "globex")
    first = said(mara, "I prefer morning meetings", 0)
    memory, _ = step("create", lambda: world.create(mara, first, "prefers morning meetings"))
    bens = said(ben, "I prefer morning meetings", 0.5, conversation="c1")
    step("ben's own", lambda: world.create(ben, bens, "prefers morning meetings"))
    step("ben cites mara", lambda: world.create(ben, first, "prefers morning meetings"))
    later = said(mara, "I prefer afternoon meetings", 1)
    step(
        "stale etag",
        lambda: world.correct(mara, memory, later, "prefers afternoon meetings", version=9),
    )
    memory, _ = step(
        "correct from tomorrow",
        lambda: world.correct(mara, memory, later, "prefers afternoon meetings", valid_from=at(26)),
    )
    step(
        "older words",
        lambda: world.correct(mara, memory, first, "prefers morning meetings", now=at(2)),
    )
    suggestion = said(
        mara, "Globex wants invoices by email", 2, speaker=Speaker.ASSISTANT, conversation="c2"
    )
    proposed = step(
        "assistant proposes",
        lambda: world.propose(mara, suggestion, "wants invoices by email", scope=CUSTOMER),
    )
    step(
        "confirm",
        lambda: world.write(
            mara,
            lambda uow: world.memories.confirm(uow, mara, proposed.memory.id, 1, None, "", at(3)),
        ),
    )
    once = said(mara, "Just for today, meetings after lunch", 3)
    step("one-off", lambda: world.propose(mara, once, "meetings after lunch", now=at(3)))
    policy = said(root, "Invoices are due in thirty days", 3.5, conversation="ops")
    org, _ = step(
        "organization",
        lambda: world.create(root, policy, "invoices are due in thirty days", scope=ORG),
    )
    step(
        "delete",
        lambda: world.write(root, lambda uow: world.memories.delete(uow, root, org.id, 1, at(4))),
    )
    step(
        "recreate from words said before the deletion",
        lambda: world.create(root, policy, "invoices are due in thirty days", scope=ORG),
    )
    again = said(root, "Invoices are due in thirty days", 5, conversation="ops")
    step(
        "recreate from newer words",
        lambda: world.create(root, again, "invoices are due in thirty days", scope=ORG, now=at(5)),
    )
    post = said(
        mara, "Globex wants invoices by post", 5.5, speaker=Speaker.ASSISTANT, conversation="c2"
    )
    step(
        "assistant proposes again",
        lambda: world.propose(mara, post, "wants invoices by post", scope=CUSTOMER),
    )
    step(
        "reject",
        lambda: world.write(
            mara,
            lambda uow: world.memories.reject(uow, mara, proposed.memory.id, 2, None, at(6)),
        ),
    )
    step(
        "reject again",
        lambda: world.write(
            mara,
            lambda uow: world.memories.reject(uow, mara, proposed.memory.id, 2, None, at(6)),
        ),
    )
    foreign = said(world.who("mara", tenant="other"), "I prefer noon", 6)
    elsewhere, _ = step(
        "other tenant", lambda: world.create(world.who("mara", tenant="other"), foreign, "noon")
    )

    def recall(who: Any, instant: float) -> Any:
        ids = [m.id for m in _all_memories(world, root)] + [elsewhere.id, "f" * 32]
        candidates = [Candidate(i, 0.5, n) for i in ids for n in (1, 2)]
        result = world.read(
            who,
            lambda uow: world.recall.validate(uow, who, candidates, at(instant), ScopeHint(), 20),
        )
        return (
            [(m.id, score, _in_force(m, at(instant))) for m, score in result.memories],
            result.candidate_count,
            sorted((reason.value, count) for reason, count in result.dropped.items()),
        )

    step("recall as mara, now", lambda: recall(mara, 10))
    step("recall as mara, in two days", lambda: recall(mara, 50))
    step("recall as ben", lambda: recall(ben, 10))
    step("recall as admin", lambda: recall(root, 10))
    for who in (mara, ben, root):
        step(f"list as {who.user_id}", partial(_pages, world, who))
    step(
        "transcript",
        lambda: world.read(mara, lambda uow: world.transcript.list(uow, mara, "c1", 0, 10)),
    )
    step("queued index work", lambda: world.read(mara, lambda uow: uow.outbox.queued_changes()))
    step("queued tenant work", lambda: world.read(mara, lambda uow: uow.outbox.tenant_work()))
    step(
        "live memories, counted and listed",
        lambda: world.read(
            mara, lambda uow: (uow.memories.count_live(), len(uow.memories.live_versions()))
        ),
    )
    for instant in (10, 50):
        step(
            f"searchable memories at {instant}",
            lambda instant=instant: world.read(
                mara, lambda uow: uow.memories.count_searchable(at(instant))
            ),
        )
    step("lineage of the deleted", lambda: _lineage(world, root, policy))
    step("documents", lambda: world.write(mara, lambda uow: _documents(uow, memory)))
    step("review queues", lambda: world.read(root, _review))
    step("tasks", lambda: world.write(mara, _tasks))
    for write in ("sequence", "stale update"):
        step(f"task {write}", partial(world.write, mara, partial(_task_conflict, write=write)))
    step(
        "tasks of another tenant",
        lambda: world.read(world.who("mara", tenant="other"), _tasks_seen),
    )
    step("archive", lambda: world.read(root, lambda uow: _archive(uow, first, elsewhere)))
    return steps


EVERYONE = Visibility(None, None)
PLAN = "https://docs.example.com/plan"


def _documents(uow: UnitOfWork, memory: Memory) -> tuple[Any, ...]:
    """A document's versions, and a revision marked when its source changed (once)."""
    before = uow.documents.get(PLAN)
    uow.documents.put(DocumentVersion(uow.tenant_id, PLAN, "v1", at(7), "mara"))
    uow.documents.put(DocumentVersion(uow.tenant_id, PLAN, "v2", at(8), "ben"))
    number = memory.revisions[-1].number
    marked = [uow.documents.mark_source_changed(memory.id, number, at(8)) for _ in range(2)]
    uow.commit()
    return before, uow.documents.get(PLAN), marked, uow.memories.citing_document(PLAN)


def _review(uow: UnitOfWork) -> tuple[Any, ...]:
    queue = uow.review
    return (
        queue.flagged(EVERYONE, "", 10),
        queue.with_candidates(EVERYONE, "", 10),
        queue.sharing_keys(EVERYONE, 10),
        queue.sharing_keys(Visibility(frozenset({"mara"}), frozenset(), False), 10),
        queue.unused_since(EVERYONE, at(3), "", 10),
        queue.pending_items(None, "", 10),
    )


def _tasks(uow: UnitOfWork) -> tuple[Any, ...]:
    """A task's life through the port: checkpoints and the compare-and-set update."""
    tasks = uow.tasks
    opened = Task(uow.tenant_id, "import-1", "mara", TaskState.OPEN, 0, at(8), at(8))
    tasks.add(opened)
    for number in (1, 2):
        tasks.add_checkpoint("mara", "import-1", TaskCheckpoint(number, number, 3, "", "{}", at(8)))
    tasks.update(replace(opened, checkpoint_count=2, update_time=at(9)), opened)
    uow.commit()
    return (
        tasks.get("mara", "import-1"),
        tasks.get("ben", "import-1"),
        tasks.owners_of("import-1", 10),
        tasks.list_checkpoints("mara", "import-1", 1, 10),
    )


def _task_conflict(uow: UnitOfWork, write: str) -> str:
    """A write the stored task no longer allows: a taken checkpoint number, or an update
    expecting a state the task has left. Each is a WriteConflict, and nothing is kept."""
    tasks = uow.tasks
    task = tasks.get("mara", "import-1")
    assert task is not None
    try:
        if write == "sequence":
            tasks.add_checkpoint("mara", "import-1", TaskCheckpoint(2, 2, 3, "", "", at(9)))
        else:
            stale = replace(task, checkpoint_count=0)
            tasks.update(replace(task, state=TaskState.COMPLETED, end_time=at(9)), stale)
    except WriteConflict:
        return "conflict"
    uow.commit()
    return "written"


def _tasks_seen(uow: UnitOfWork) -> tuple[Any, ...]:
    return uow.tasks.get("mara", "import-1"), uow.tasks.owners_of("import-1", 10)


def _archive(uow: UnitOfWork, message: Message, elsewhere: Memory) -> tuple[Any, ...]:
    archive = uow.archive
    return (
        archive.has_memories(),
        sorted(archive.ids_in_use("memory", [elsewhere.id, "f" * 32])),
        sorted(archive.ids_in_use("message", [message.id])),
        sorted(archive.messages([message.id, "f" * 32]).items()),
        archive.customers_after("", None, 10),
        archive.batches_after(None, "", None, 10),
        archive.sequence_taken(message),
    )


def _in_force(memory: Memory, instant: datetime) -> int:
    revision = rules.applicable_revision(memory, instant)
    return 0 if revision is None else revision.number


def _all_memories(world: World, admin: Any) -> list[Memory]:
    return world.read(
        admin,
        lambda uow: world.memories.list(
            uow, admin, MemoryFilter(show_deleted=True), "", 100, at(10)
        ),
    )


def _pages(world: World, who: Any) -> list[list[Memory]]:
    """Every page of two (a third fetched tells whether another page follows, as the API
    pages), so paging is compared too."""
    pages: list[list[Memory]] = []
    after = ""
    while True:
        fetched = world.read(who, partial(_list_page, world, who, after))
        pages.append(fetched[:2])
        if len(fetched) <= 2:
            return pages
        after = fetched[1].id


def _list_page(world: World, who: Identity, after: str, uow: UnitOfWork) -> list[Memory]:
    return world.memories.list(uow, who, MemoryFilter(show_deleted=True), after, 3, at(10))


def _lineage(world: World, who: Any, message: Message) -> bool:
    return world.read(who, lambda uow: uow.memories.deleted_lineage(message_name(message)))


def _plain(value: Any) -> Any:
    if isinstance(value, Memory):
        return _memory(value)
    if isinstance(value, Revision):
        return _revision(value)
    if isinstance(value, Outcome):
        return _outcome(value)
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, MemoryKind | ProvenanceMethod):
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return value


def _ids(value: Any) -> Iterator[str]:
    """Every id a result carries, in a fixed order, so `Names` numbers them alike."""
    if isinstance(value, Memory):
        yield value.id
        for revision in value.revisions:
            yield from _ids(revision)
    elif isinstance(value, Revision):
        yield value.memory_id
    elif isinstance(value, Message):
        yield value.id
        yield rules.lineage_ref_hash(message_name(value))  # what a deletion keeps of it
    elif isinstance(value, Outcome):
        if value.memory:
            yield from _ids(value.memory)
        if value.override:
            yield value.override.id
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _ids(item)


def _refused(result: Any) -> bool:
    return isinstance(result, tuple) and bool(result) and result[0] == "refused"


@contextmanager
def _sql(backend: str, workdir: Path) -> Iterator[SqlUnitOfWorkFactory]:
    with database_url(backend, workdir)() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        try:
            yield SqlUnitOfWorkFactory(engine, check_scope=True)
        finally:
            engine.dispose()


class _Clock:
    """A millisecond per call: ids (milliseconds, then random bits) then sort by creation in
    every run, even when the fake makes several within one real millisecond."""

    def __init__(self) -> None:
        self._now = 1_780_000_000.0

    def time(self) -> float:
        self._now += 0.001
        return self._now


def test_the_fake_sqlite_and_postgresql_answer_one_scenario_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model, "time", _Clock())
    with ExitStack() as stack:
        results = {
            "fake": scenario(World()),
            "sqlite": scenario(World(stack.enter_context(_sql("sqlite", tmp_path)))),
            "postgres": scenario(World(stack.enter_context(_sql("postgres", tmp_path)))),
        }
    assert len(results["fake"]) > 20
    assert results["sqlite"] == results["fake"]
    assert results["postgres"] == results["fake"]
    refused = [name for name, result in results["fake"] if _refused(result)]
    assert refused == [
        "ben cites mara",
        "stale etag",
        "older words",
        "recreate from words said before the deletion",
        "reject again",
    ]
