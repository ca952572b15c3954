"""What a client sees while the retrieval sidecar restarts: how long RecallMemories answers
`degraded`, split into the sidecar's start-up (model load until SERVING) and the memory
service's catching up (SERVING until the first full answer). docs/clients.md quotes it.

    .venv/bin/python -m bench.sidecar_restart --restarts 3
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import time
from pathlib import Path

from crmmem.memory.v1 import memory_service_pb2 as svc

from bench.common import emit, start_memory_service
from bench.recall_under_ingest import create
from tests.support.servers import (
    TEST_JWT_SECRET,
    TEST_RETRIEVAL_SECRET,
    Client,
    ServerProcess,
    start_server,
)


def start_sidecar(workdir: Path, listen: str = "127.0.0.1:0") -> ServerProcess:
    """Waits up to 10 minutes: on a loaded machine, importing torch alone takes minutes."""
    env = {
        "RETRIEVAL_LISTEN": listen,
        "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
        "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
    }
    return start_server("retrieval_service", env, workdir, startup_timeout=600)


def recall_is_full(client: Client) -> bool:
    reply = client.memories.RecallMemories(
        svc.RecallMemoriesRequest(query="meeting times", limit=5), timeout=10
    )
    return not reply.degraded and len(reply.memories) > 0


def wait_full(client: Client, limit: float = 120) -> tuple[float, int]:
    """Seconds until recall answers in full, and how many degraded answers came before."""
    start, degraded = time.monotonic(), 0
    while time.monotonic() - start < limit:
        if recall_is_full(client):
            return time.monotonic() - start, degraded
        degraded += 1
        time.sleep(0.05)
    return float("inf"), degraded


def restart(
    memory: ServerProcess, sidecar: ServerProcess, workdir: Path, hard: bool
) -> dict[str, float | int | str]:
    """Stop the sidecar (SIGTERM as a rollout does, or SIGKILL) and start it on the same port."""
    client = memory.client("tenant-0", "restarts")
    stopped = time.monotonic()
    sidecar.stop(signal.SIGKILL if hard else signal.SIGTERM)
    down = time.monotonic()
    restarted = start_sidecar(workdir, sidecar.address)  # returns once SERVING
    serving = time.monotonic()
    sidecar.process, sidecar.log_path = restarted.process, restarted.log_path
    catch_up, degraded = wait_full(client)
    return {
        "signal": "SIGKILL" if hard else "SIGTERM",
        "stop_s": round(down - stopped, 2),
        "start_to_serving_s": round(serving - down, 2),
        "serving_to_full_recall_s": round(catch_up, 2),
        "degraded_for_s": round(serving - stopped + catch_up, 2),
        "degraded_answers_after_serving": degraded,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--restarts", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sidecar-restart-") as name:
        workdir = Path(name)
        sidecar = start_sidecar(workdir)
        memory = start_memory_service(
            workdir, TEST_JWT_SECRET, MEMORY_RETRIEVAL_ADDRESS=sidecar.address
        )
        try:
            client = memory.client("tenant-0", "restarts")
            for n in range(20):
                create(client, f"meeting_{n}", f"prefers meeting times around {8 + n % 9} o'clock")
            first, _ = wait_full(client)
            runs = [
                restart(memory, sidecar, workdir, hard=n % 2 == 1) for n in range(args.restarts)
            ]
        finally:
            memory.stop()
            sidecar.stop()
    emit(
        {
            "bench": "sidecar_restart",
            "first_full_recall_s": round(first, 2),
            "restarts": runs,
            "load_average": os.getloadavg(),
        }
    )


if __name__ == "__main__":
    main()
