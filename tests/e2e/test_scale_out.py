"""Two memory-service replicas over one PostgreSQL draining one outbox into one sidecar: every
index operation lands once, none is lost (SPEC §2 scale-out). Migrations run as a step of their
own before the replicas start, never racing between them."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from tests.conftest import memory_env, start_retrieval
from tests.e2e.helpers import create_pref
from tests.support.polling import eventually
from tests.support.servers import database_url, sidecar_stub, start_server

MEMORIES_PER_REPLICA = 40


def test_two_replicas_drain_one_outbox_without_losing_or_doubling(tmp_path: Path) -> None:
    sidecar = start_retrieval(tmp_path / "sidecar")
    try:
        with database_url("postgres", tmp_path)() as url:
            env = memory_env(
                url,
                MEMORY_RETRIEVAL_ADDRESS=sidecar.address,
                MEMORY_AUTO_MIGRATE="0",
                MEMORY_OUTBOX_POLL_SECONDS="0.02",
            )
            subprocess.run(
                [sys.executable, "-m", "memory_service", "migrate"],
                env={**os.environ, **env},
                check=True,
                capture_output=True,
            )
            replicas = [start_server("memory_service", env, tmp_path / f"r{n}") for n in (1, 2)]
            try:
                tenant = f"t-{uuid.uuid4().hex[:8]}"

                def write(replica_index: int, n: int) -> None:
                    client = replicas[replica_index].client(tenant, f"user-{n % 5}")
                    create_pref(client, f"topic_{replica_index}_{n}", f"likes topic {n}")

                with ThreadPoolExecutor(8) as pool:
                    jobs = [
                        pool.submit(write, r, n)
                        for r in (0, 1)
                        for n in range(MEMORIES_PER_REPLICA)
                    ]
                    for job in jobs:
                        job.result()
                stats = sidecar_stub(sidecar.address)
                expected = 2 * MEMORIES_PER_REPLICA
                eventually(
                    lambda: stats.GetStats(rpb.GetStatsRequest()).points >= expected,
                    60,
                    "the index never held every replica's memories",
                )
                # A stopping replica finishes the batches it has in flight: once both have
                # stopped, any doubled delivery has arrived, however slow the machine.
                for replica in replicas:
                    assert replica.stop() == 0
                reply = stats.GetStats(rpb.GetStatsRequest())
                assert reply.points == expected, "an index operation was lost"
                assert reply.upserted_total == expected
                assert reply.stale_total == 0, "an index operation was delivered twice"
            finally:
                for replica in replicas:
                    replica.stop()
    finally:
        sidecar.stop()
