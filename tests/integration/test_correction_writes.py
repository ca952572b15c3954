"""A correction's write transaction on real SQLite and PostgreSQL: the statements it sends (its
latency budget is mostly their count, all inside SQLite's one writer lock), and what the request
id does with them: a replay writes nothing and answers the same bytes, an expired id is reserved
again, and retention forgets an id with every row listing what its answer shows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from sqlalchemy import Engine, event

from memory_service.kernel.app.transactions import Answer, Transactions
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.errors import Aborted
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    MemoryKind,
    ProvenanceMethod,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
    utcnow,
)
from memory_service.kernel.domain.names import message as message_name
from memory_service.kernel.domain.ports import StoredResponse
from memory_service.kernel.storage.idempotency import purge_idempotency_keys
from memory_service.kernel.transport.idempotency import request_key
from memory_service.memories.app.memories import MemoryCommands
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.memories.transport import convert
from memory_service.transcripts.domain.transcripts import TranscriptUseCases
from memory_service.unit_of_work import SqlUnitOfWorkFactory

MARA = Identity("t1", "mara")
SAID = "I prefer mornings"
TTL = timedelta(hours=24)


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The statements sent meanwhile, as 'VERB table' ('SELECT memories', ...)."""
    sent: list[str] = []

    def record(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        words = statement.split()
        verb = words[0].upper()
        if verb == "SELECT" and words[1].startswith("("):
            sent.append("SELECT lookups")  # one row of scalar subqueries
            return
        place = {"SELECT": "FROM", "DELETE": "FROM", "INSERT": "INTO", "UPDATE": "UPDATE"}
        sent.append(f"{verb} {words[words.index(place[verb]) + 1]}")

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


class World:
    """One user's memory and the message it rests on, and the correction entry under test."""

    def __init__(self, units: SqlUnitOfWorkFactory, ttl: timedelta = TTL) -> None:
        self.units = units
        self.tx = Transactions(units, ttl)
        memories = MemoryUseCases(AccessPolicy(GrantTableAuthorizer()))
        self.commands = MemoryCommands(self.tx, memories)
        quiet = request_key(
            "x", service_pb.CorrectMemoryRequest(), service_pb.CorrectMemoryResponse
        )

        def append(uow: Any) -> Answer[Any]:
            return Answer(
                TranscriptUseCases().append(
                    uow, MARA, "c1", Speaker.USER, SAID, TurnStatus.COMPLETED, utcnow()
                )
            )

        message = self.tx.write(MARA, quiet, append)
        self.evidence = message_name(message.conversation_id, message.id)
        create = CreateMemory(
            Scope(ScopeType.USER, "mara"), "meeting_time", "", MemoryKind.PREFERENCE, self.draft()
        )
        created = self.tx.write(
            MARA,
            quiet,
            lambda uow: Answer(memories.create(uow, MARA, create, utcnow())[0]),
        )
        self.memory_id = created.id
        self.version = created.version

    def draft(self, value: str = "mornings") -> RevisionDraft:
        provenance = ProvenanceDraft(
            Speaker.USER,
            ProvenanceMethod.USER_STATEMENT,
            EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, self.evidence),
            quote="mornings",
        )
        return RevisionDraft(value, None, None, provenance)

    def correct(
        self, request_id: str, version: int | None = None, value: str = "mornings"
    ) -> service_pb.CorrectMemoryResponse:
        """CorrectMemory as the transport calls it: the same request key and answer."""
        request = service_pb.CorrectMemoryRequest(
            name=f"memories/{self.memory_id}", request_id=request_id
        )
        request.revision.value = value
        return self.commands.correct(
            MARA,
            request_key("CorrectMemory", request, service_pb.CorrectMemoryResponse),
            self.memory_id,
            self.version if version is None else version,
            self.draft(value),
            convert.changed(service_pb.CorrectMemoryResponse),
        )


@pytest.fixture
def world(units: SqlUnitOfWorkFactory) -> World:
    return World(units)


# The correction of an ACTIVE revision by its subject's own words, with a new request id. On
# SQLite the request id's row goes in once, with its answer (the writer lock keeps any other
# writer out meanwhile); PostgreSQL inserts it first, so a duplicate in flight waits on it.
READS = [
    "SELECT idempotency_keys",  # a replay?
    "SELECT memories",  # with its revisions, in one read
    "SELECT transcript_messages",  # the evidence
    "SELECT lookups",  # the key's last deletion and the evidence lineage's withdrawal
]
WRITES = [
    "UPDATE memories",  # the version's compare-and-swap
    "INSERT memory_revisions",
    "UPDATE memory_revisions",  # the supersession of the revision it replaces
]
EXPECTED = {
    "sqlite": [*READS, *WRITES, "INSERT idempotency_keys", "INSERT index_outbox"],
    "postgresql": [
        *READS[:1],
        "INSERT idempotency_keys",
        *READS[1:],
        *WRITES,
        "UPDATE idempotency_keys",
        "INSERT index_outbox",
    ],
}


def test_a_correction_sends_only_the_statements_its_rules_need(world: World) -> None:
    engine = world.units.engine
    with statements(engine) as sent:
        answer = world.correct(str(uuid.uuid4()))
    assert answer.memory.etag == f'"v{world.version + 1}"'
    assert sent == EXPECTED[engine.dialect.name]
    # a new request id has no expired row to forget
    assert not [s for s in sent if s.startswith("DELETE")]


def test_a_replay_sends_one_read_and_answers_the_same_bytes(world: World) -> None:
    request_id = str(uuid.uuid4())
    first = world.correct(request_id)
    with statements(world.units.engine) as sent:
        again = world.correct(request_id)
    assert again.SerializeToString() == first.SerializeToString()
    assert sent == ["SELECT idempotency_keys"]


def test_a_correction_at_an_old_etag_is_aborted_and_stores_no_answer(world: World) -> None:
    world.correct(str(uuid.uuid4()))
    request_id = str(uuid.uuid4())
    with pytest.raises(Aborted):
        world.correct(request_id, version=world.version)  # the etag before that correction
    with world.units("t1", write=False) as uow:
        assert uow.idempotency.get("mara", request_id) is None  # rolled back with the work
    assert world.correct(request_id, version=world.version + 1).memory.etag == (
        f'"v{world.version + 2}"'
    )


def test_an_expired_request_id_is_forgotten_and_reserved_again(
    units: SqlUnitOfWorkFactory,
) -> None:
    world = World(units, ttl=timedelta(seconds=-1))  # every stored answer has expired
    request_id = str(uuid.uuid4())
    first = world.correct(request_id)
    with statements(units.engine) as sent:
        second = world.correct(request_id, version=world.version + 1, value="mornings, again")
    assert second.memory.etag == f'"v{world.version + 2}"'  # done again, not replayed
    assert second.revision.value != first.revision.value
    assert sent.count("DELETE idempotency_keys") == 1
    assert sent.count("DELETE idempotency_shown") == 1
    with units("t1", write=False) as uow:
        stored = uow.idempotency.get("mara", request_id)
    assert stored is not None
    assert stored.response == second.SerializeToString()


def test_retention_forgets_a_request_id_with_every_row_of_what_it_shows(
    units: SqlUnitOfWorkFactory,
) -> None:
    """The rows listing what a batch's answer shows are written a moment after the request
    id's own row; a reservation only looks for them when it finds that row, so retention must not
    leave them behind when the cut falls between the two."""
    reserved = utcnow() - timedelta(days=2)
    with units("t1", write=True) as uow:
        uow.idempotency.reserve(
            "mara", "r1", StoredResponse("BatchCreateMemories", "f", b"", reserved), None
        )
        uow.idempotency.record("mara", "r1", b"answer", ["m1", "m2"])
        uow.commit()
    with units.all_tenants() as everyone:
        assert purge_idempotency_keys(everyone, reserved + timedelta(microseconds=1)) == 1
    with units("t1", write=True) as uow:
        assert uow.idempotency.get("mara", "r1") is None
        uow.idempotency.reserve(
            "mara", "r1", StoredResponse("BatchCreateMemories", "g", b"", utcnow()), None
        )
        uow.idempotency.record("mara", "r1", b"new answer", ["m3"])
        uow.commit()
    with units("t1", write=True) as uow:
        # deleting a memory the forgotten answer showed leaves the new answer alone
        assert uow.idempotency.redact_shown(["m1"]) == 0
        uow.commit()
    with units("t1", write=False) as uow:
        stored = uow.idempotency.get("mara", "r1")
    assert stored is not None
    assert stored.response == b"new answer"
