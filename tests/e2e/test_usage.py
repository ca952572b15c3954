"""Usage tracking: a recall and a context build note the memories they used, and the service
writes the notes a little later (batched, off the read path), on both databases."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_service_pb2

from tests.conftest import memory_env
from tests.e2e.helpers import create_pref, now
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess, database_url, start_server

FLUSH_WAIT_SECONDS = 15  # the default flush interval is 2 s; a loaded machine gets slack


def last_used(server: ServerProcess, tenant: str, memory_name: str) -> dt.datetime | None:
    """Read straight from the store: no RPC reports usage times (the review queue uses them)."""
    engine = sa.create_engine(server.database_url)
    try:
        with engine.connect() as connection:
            value = connection.execute(
                sa.text(
                    "SELECT last_used_time FROM memory_usage"
                    " WHERE tenant_id = :tenant AND memory_id = :memory"
                ),
                {"tenant": tenant, "memory": memory_name.split("/")[1]},
            ).scalar()
    finally:
        engine.dispose()
    if value is None:
        return None
    if isinstance(value, str):  # SQLite hands the stored text back through a raw query
        value = dt.datetime.fromisoformat(value)
    return value.replace(tzinfo=dt.UTC)


def used_after(server: ServerProcess, tenant: str, name: str, since: dt.datetime) -> dt.datetime:
    used: dt.datetime | None = None

    def written() -> bool:
        nonlocal used
        used = last_used(server, tenant, name)
        return used is not None and used >= since

    eventually(
        written, FLUSH_WAIT_SECONDS, f"no usage time at or after {since} was written for {name}"
    )
    assert used is not None
    return used


def test_a_context_build_records_use_of_its_memories_soon_after(
    memory_server: ServerProcess, alice: Client, bob: Client, tenant: str
) -> None:
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings")
    theirs = create_pref(bob, "meeting_time", "I prefer evening meetings")
    assert last_used(memory_server, tenant, mine.name) is None  # writing is not using
    before = now() - dt.timedelta(milliseconds=5)
    reply = alice.context.BuildContext(ctx_pb.BuildContextRequest(), timeout=10)
    assert [m.memory.name for m in reply.memories] == [mine.name]
    used = used_after(memory_server, tenant, mine.name, before)
    assert used <= now()
    assert last_used(memory_server, tenant, theirs.name) is None  # bob's was not in the context


def test_a_recall_records_use_of_what_it_returned(
    recall_server: ServerProcess, tenant: str
) -> None:
    mara = recall_server.client(tenant, "mara")
    wanted = create_pref(mara, "meeting_time", "prefers meetings after 1 pm")
    deadline = time.monotonic() + 30
    while True:
        before = now() - dt.timedelta(milliseconds=5)
        reply = mara.memories.RecallMemories(
            memory_service_pb2.RecallMemoriesRequest(query="when does she like meetings?"),
            timeout=10,
        )
        if [r.memory.name for r in reply.memories] == [wanted.name]:
            break
        assert time.monotonic() < deadline, "the memory was never recalled"
        time.sleep(0.2)
    used_after(recall_server, tenant, wanted.name, before)


@pytest.fixture
def slow_flush_server(tmp_path: Path) -> Iterator[ServerProcess]:
    with database_url("sqlite", tmp_path)() as url:
        server = start_server(
            "memory_service", memory_env(url, MEMORY_USAGE_FLUSH_SECONDS="3600"), tmp_path
        )
        yield server
        server.stop()


def test_a_graceful_stop_writes_the_uses_noted_since_the_last_flush(
    slow_flush_server: ServerProcess, tenant: str
) -> None:
    alice = slow_flush_server.client(tenant, "alice")
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings")
    alice.context.BuildContext(ctx_pb.BuildContextRequest(), timeout=10)
    time.sleep(0.5)
    assert last_used(slow_flush_server, tenant, memory.name) is None  # still only noted
    assert slow_flush_server.stop() == 0
    assert last_used(slow_flush_server, tenant, memory.name) is not None
