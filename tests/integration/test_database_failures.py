"""Connection failures against real SQLite and PostgreSQL: a failure before COMMIT changed nothing
(DATABASE_UNAVAILABLE), one during COMMIT may have applied (OUTCOME_UNKNOWN), and a retry with the
same request_id lands exactly once either way."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from crmmem.memory.v1 import transcript_service_pb2
from google.protobuf import wrappers_pb2
from sqlalchemy import Engine, event
from sqlalchemy.exc import OperationalError

from memory_service.app.transactions import Answer, Transactions
from memory_service.domain.errors import DatabaseUnavailable, OutcomeUnknown
from memory_service.domain.model import Identity
from memory_service.domain.ports import MemoryQuery, UnitOfWork
from memory_service.storage.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from memory_service.transport.errors import to_status
from memory_service.transport.idempotency import request_key
from tests.integration.test_storage import EVERYTHING, make_memory


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
    units = SqlUnitOfWorkFactory(engine)
    assert not units.reachable()
    with pytest.raises(DatabaseUnavailable), units("t1", write=False) as uow:
        uow.memories.get("m1")
    with pytest.raises(DatabaseUnavailable):
        Writer(units).write()
