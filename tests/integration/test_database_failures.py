"""Connection failures against real SQLite and PostgreSQL: a failure before COMMIT changed nothing
(DATABASE_UNAVAILABLE), one during COMMIT may have applied (OUTCOME_UNKNOWN), and a retry with the
same request_id lands exactly once either way."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from crmmem.memory.v1 import transcript_service_pb2
from google.protobuf import wrappers_pb2
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from memory_service.kernel.app.transactions import Answer, Transactions
from memory_service.kernel.domain.errors import DatabaseUnavailable, OutcomeUnknown
from memory_service.kernel.domain.model import Identity, Speaker, TurnStatus
from memory_service.kernel.domain.ports import MemoryQuery, UnitOfWork
from memory_service.kernel.storage.migrate import upgrade
from memory_service.kernel.transport.errors import to_status
from memory_service.kernel.transport.idempotency import request_key
from memory_service.transcripts.app.transcripts import TranscriptCommands
from memory_service.transcripts.domain.transcripts import TranscriptUseCases
from memory_service.transcripts.transport.convert_transcripts import message_proto
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.integration.test_storage import EVERYTHING, make_memory
from tests.support.servers import database_url


def connection_lost() -> OperationalError:
    return OperationalError("COMMIT", None, ConnectionError("server closed the connection"))


@contextmanager
def once(engine: Engine, name: str, listener: Callable[..., None]) -> Iterator[None]:
    """`listener` on the engine's `name` event, for the first call only."""
    fired: list[bool] = []

    def wrapper(*args: Any) -> None:
        if not fired:
            fired.append(True)
            listener(*args)

    event.listen(engine, name, wrapper)
    try:
        yield
    finally:
        event.remove(engine, name, wrapper)
    assert fired, f"the {name} event never fired"


class Writer:
    """One write through Transactions, counting how often its work ran."""

    def __init__(self, units: SqlUnitOfWorkFactory) -> None:
        self.tx = Transactions(units, timedelta(hours=48))
        self.identity = Identity(f"t-{uuid.uuid4().hex[:8]}", "alice")
        self.request = transcript_service_pb2.AppendMessageRequest(
            parent="conversations/c1", request_id=str(uuid.uuid4())
        )
        self.runs = 0

    def work(self, uow: UnitOfWork) -> Answer[wrappers_pb2.StringValue]:
        self.runs += 1
        memory = make_memory(self.identity.tenant_id, key=f"k{self.runs}")
        uow.memories.add(memory)
        return Answer(wrappers_pb2.StringValue(value=memory.id))

    def write(self) -> wrappers_pb2.StringValue:
        key = request_key("Test", self.request, wrappers_pb2.StringValue)
        return self.tx.write(self.identity, key, self.work)

    def stored(self, units: SqlUnitOfWorkFactory) -> list[str]:
        with units(self.identity.tenant_id, write=False) as uow:
            return [m.id for m in uow.memories.list_after(MemoryQuery(EVERYTHING), "", 100)]


def test_connection_lost_after_commit_applied_is_outcome_unknown_and_the_retry_replays(
    units: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    writer = Writer(units)

    def commit_then_lose_the_reply(connection: Any) -> None:
        connection.connection.driver_connection.commit()
        raise connection_lost()

    with once(engine, "commit", commit_then_lose_the_reply), pytest.raises(OutcomeUnknown) as lost:
        writer.write()
    status = to_status(lost.value)
    assert status.code.name == "UNAVAILABLE"
    assert "nothing was changed" not in status.details
    assert "same request_id" in status.details

    replayed = writer.write()
    assert writer.runs == 1, "the retry replayed the stored response instead of writing again"
    assert writer.stored(units) == [replayed.value]


def test_connection_lost_during_commit_before_it_applied_lands_once_on_retry(
    units: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    writer = Writer(units)

    def lose_the_connection(connection: Any) -> None:
        raise connection_lost()

    with once(engine, "commit", lose_the_connection), pytest.raises(OutcomeUnknown):
        writer.write()
    assert writer.stored(units) == []
    retried = writer.write()
    assert writer.runs == 2
    assert writer.stored(units) == [retried.value]


def test_connection_lost_before_commit_is_database_unavailable(
    units: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    writer = Writer(units)

    def lose_the_connection(*_args: Any) -> None:
        raise connection_lost()

    lost = once(engine, "before_cursor_execute", lose_the_connection)
    with lost, pytest.raises(DatabaseUnavailable) as unavailable:
        writer.write()
    status = to_status(unavailable.value)
    assert status.code.name == "UNAVAILABLE"
    assert writer.stored(units) == []
    assert units.reachable()


def test_a_database_that_does_not_answer_is_unavailable_and_unreachable() -> None:
    engine = create_database_engine("postgresql+psycopg://postgres@127.0.0.1:1/nothing")
    units = SqlUnitOfWorkFactory(engine, check_scope=True)
    assert not units.reachable()
    with pytest.raises(DatabaseUnavailable), units("t1", write=False) as uow:
        uow.memories.get("m1")
    with pytest.raises(DatabaseUnavailable):
        Writer(units).write()


# ----------------------------------------------------------------- real connection losses
# The tests above raise a driver error in place of the failure. These kill the write's own
# PostgreSQL backend (pg_terminate_backend) at every statement of a real AppendMessage, and
# right after its COMMIT applied, so the pool, the session and the request-id reservation all meet a
# connection that is really gone: whatever the point, the next retry with the same request id
# answers at once, the message lands once, and no connection is left checked out.


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Engine]:
    with database_url("postgres", tmp_path)() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        yield engine
        engine.dispose()


class Appender:
    """AppendMessage through the application layer, one request id per instance."""

    def __init__(self, units: SqlUnitOfWorkFactory, text: str) -> None:
        self.commands = TranscriptCommands(
            Transactions(units, timedelta(hours=48)), TranscriptUseCases()
        )
        self.units = units
        self.identity = Identity(f"t-{uuid.uuid4().hex[:8]}", "alice")
        self.conversation = "c1"
        self.text = text
        self.request = transcript_service_pb2.AppendMessageRequest(
            parent=f"conversations/{self.conversation}",
            message=transcript_service_pb2.Message(text=text),
            request_id=str(uuid.uuid4()),
        )

    def append(self) -> transcript_service_pb2.AppendMessageResponse:
        key = request_key(
            "AppendMessage", self.request, transcript_service_pb2.AppendMessageResponse
        )
        return self.commands.append(
            self.identity,
            key,
            self.conversation,
            (Speaker.USER, self.text, TurnStatus.COMPLETED),
            lambda m: transcript_service_pb2.AppendMessageResponse(message=message_proto(m)),
        )

    def stored(self) -> list[str]:
        with self.units(self.identity.tenant_id, write=False) as uow:
            messages = uow.transcript.list_messages("alice", self.conversation, 0, 100)
        return [m.text for m in messages]


class Killer:
    """Terminates one backend from a connection of its own, and waits until it is gone."""

    def __init__(self, engine: Engine) -> None:
        self._admin = create_engine(engine.url, poolclass=NullPool)

    def kill(self, dbapi_connection: Any) -> None:
        pid = dbapi_connection.info.backend_pid
        with self._admin.connect() as admin:
            gone = admin.execute(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})
            assert gone.scalar_one()


def statements_of_one_append(engine: Engine, units: SqlUnitOfWorkFactory) -> int:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        Appender(units, "counting").append()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(seen) >= 4, seen  # the reservation, the conversation, the message, the answer
    return len(seen)


def retried_once_lands_once(
    appender: Appender, engine: Engine, failed: type[Exception], fault: Callable[[], Any]
) -> None:
    with fault(), pytest.raises(failed):
        appender.append()
    assert engine.pool.checkedout() == 0, "the failed attempt kept its connection"  # type: ignore[attr-defined]
    retried = appender.append()  # the database never went away: the first retry answers
    assert appender.stored() == [appender.text]
    assert appender.append().SerializeToString() == retried.SerializeToString()
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_a_backend_killed_at_any_statement_of_a_write_leaves_its_request_id_retryable(
    postgres: Engine,
) -> None:
    units = SqlUnitOfWorkFactory(postgres)
    killer = Killer(postgres)
    statements = statements_of_one_append(postgres, units)
    for at in range(1, statements + 1):
        appender = Appender(units, f"killed before statement {at}")
        seen: list[int] = []

        def kill_at(conn: Any, *_args: Any, at: int = at, seen: list[int] = seen) -> None:
            seen.append(1)
            if len(seen) == at:
                killer.kill(conn.connection.driver_connection)

        @contextmanager
        def fault(kill_at: Callable[..., None] = kill_at) -> Iterator[None]:
            event.listen(postgres, "before_cursor_execute", kill_at)
            try:
                yield
            finally:
                event.remove(postgres, "before_cursor_execute", kill_at)

        retried_once_lands_once(appender, postgres, DatabaseUnavailable, fault)


def test_a_backend_killed_after_its_commit_applied_replays_on_retry(postgres: Engine) -> None:
    units = SqlUnitOfWorkFactory(postgres)
    killer = Killer(postgres)
    appender = Appender(units, "committed, then the connection died")

    def commit_then_die(connection: Any) -> None:
        driver = connection.connection.driver_connection
        driver.commit()
        killer.kill(driver)
        raise connection_lost()

    retried_once_lands_once(
        appender, postgres, OutcomeUnknown, lambda: once(postgres, "commit", commit_then_die)
    )
