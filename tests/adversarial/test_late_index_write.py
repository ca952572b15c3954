"""A deleted memory's text must not come back into the search index through a write the
memory service gave up on.

The sidecar is suspended (SIGSTOP) while the outbox sends a correction's upsert; the memory is
then deleted, and the sidecar resumed. The correction's upsert may reach the engine at any
time after that: handled late by the resumed process, or sent again by a client retrying it.
Recall would still drop the memory (it validates against the records), but a copy of the
deleted text would stay in the index for good: the removal was acknowledged, nothing sends
another. The removal carries the version the deletion wrote, and the index keeps it. Real
processes, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from tests.conftest import BACKENDS, memory_with_own_sidecar
from tests.e2e.helpers import correct, create_pref, delete
from tests.e2e.test_recall import memory_id, searched
from tests.support.outbox import queued
from tests.support.polling import eventually
from tests.support.servers import ServerProcess, sidecar_stub

TENANT = "acme"


@pytest.fixture(params=BACKENDS)
def stack(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with memory_with_own_sidecar(request.param, tmp_path) as pair:
        yield pair


def test_a_correction_sent_to_a_suspended_sidecar_does_not_outlive_the_deletion(
    stack: tuple[ServerProcess, ServerProcess],
) -> None:
    memory, sidecar = stack
    mara = memory.client(TENANT, "mara")
    seat = create_pref(mara, "seat", "prefers aisle seats on long flights")
    target = memory_id(seat)
    eventually(
        lambda: target in searched(sidecar.address, TENANT, "aisle seats"),
        60,
        "the memory was never indexed",
        interval=0.1,
    )
    os.kill(sidecar.process.pid, signal.SIGSTOP)
    try:
        corrected = correct(mara, seat, "prefers window seats on long flights")
        eventually(  # the outbox has leased the upsert and waits for the sidecar's answer
            lambda: any(q.leased for q in queued(memory.database_url, TENANT)),
            60,
            "the outbox never sent the correction's upsert",
            interval=0.02,
        )
        delete(mara, seat.name)
        time.sleep(2.0)
    finally:
        os.kill(sidecar.process.pid, signal.SIGCONT)
    stub = sidecar_stub(sidecar.address)

    def points() -> int:
        return stub.GetStats(rpb.GetStatsRequest(tenant_id=TENANT), timeout=10).tenant_points

    eventually(lambda: points() == 0, 60, "the removal never reached the index", interval=0.2)
    # The correction's upsert, as the outbox sent it before the deletion, arrives now.
    late = rpb.Document(
        id=target,
        tenant_id=TENANT,
        version=int(corrected.memory.etag.strip('"').removeprefix("v")),
        revision_number=corrected.revision.revision_number,
        text="seat: prefers window seats on long flights",
        scope_type="USER",
        scope_id="mara",
    )
    reply = stub.UpsertDocuments(rpb.UpsertDocumentsRequest(documents=[late]), timeout=30)
    assert (reply.upserted_count, reply.stale_count) == (0, 1)
    assert points() == 0
    assert target not in searched(sidecar.address, TENANT, "window seats")
    # A version per id, or none; in the records' range.
    for versions in ([1, 2], [-1], [2**31]):
        with pytest.raises(grpc.RpcError) as refused:
            stub.DeleteDocuments(
                rpb.DeleteDocumentsRequest(tenant_id=TENANT, ids=[target], versions=versions),
                timeout=10,
            )
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
