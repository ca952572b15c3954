"""kill -9 while callers write and the WAL is being checkpointed by its own thread: every write
the service acknowledged is there after a restart on the same database, and nothing else."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import grpc
import pytest

from tests.conftest import BACKENDS, memory_env
from tests.e2e.helpers import create_pref, list_all
from tests.support.servers import database_url, start_server

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_acknowledged_write_survives_a_kill_during_writes(
    backend: str, tmp_path: Path
) -> None:
    with database_url(backend, tmp_path)() as url:
        server = start_server("memory_service", memory_env(url), tmp_path / "first")
        acknowledged: set[str] = set()
        stop = threading.Event()

        def write(user: str) -> None:
            client = server.client("acme", user)
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    memory = create_pref(client, f"topic_{n}", f"{user} prefers option {n}")
                except grpc.RpcError:
                    return  # the process is gone: this write was never acknowledged
                acknowledged.add(memory.name)

        writers = [threading.Thread(target=write, args=(f"u{i}",)) for i in range(3)]
        for writer in writers:
            writer.start()
        try:
            # Past several checkpoint rounds (twice a second), with writes in flight.
            started = time.monotonic()
            while len(acknowledged) < 150 or time.monotonic() - started < 2:
                stop.wait(0.05)
                assert all(w.is_alive() for w in writers), server.log()[-2000:]
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(10)
        finally:
            stop.set()
            for writer in writers:
                writer.join(30)
        restarted = start_server("memory_service", memory_env(url), tmp_path / "second")
        try:
            stored: set[str] = set()
            for user in ("u0", "u1", "u2"):
                stored |= {m.name for m in list_all(restarted.client("acme", user))}
            missing = acknowledged - stored
            assert not missing, f"{len(missing)} acknowledged writes lost of {len(acknowledged)}"
        finally:
            restarted.stop()
