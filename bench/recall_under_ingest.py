"""Recall while ingest runs at full speed, and recovery after a sidecar restart, at the default
recall settings (SPEC §7: 0 degraded answers while the sidecar is healthy; full recall within
2 s of a restarted sidecar reporting healthy).

    .venv/bin/python -m bench.recall_under_ingest --seconds 30 --writers 4 --restarts 3
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import tempfile
import threading
import time
from pathlib import Path

from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from bench.common import emit, start_memory_service, summary_ms
from bench.corpus import QUERIES, memory_text
from bench.recall_bench import start_sidecar
from tests.support.servers import TEST_JWT_SECRET, Client, ServerProcess, sidecar_stub


def create(client: Client, key: str, text: str) -> None:
    message = client.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/bench-{client.user}",
            message=tr.Message(speaker=pb.SPEAKER_USER, text=text),
        ),
        timeout=30,
    ).message.name
    client.memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER), key=key, kind=pb.MEMORY_KIND_PREFERENCE
            ),
            revision=pb.RevisionDraft(
                value=text,
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=message
                ),
            ),
        ),
        timeout=30,
    )


def points(address: str) -> int:
    stub = sidecar_stub(address)
    return int(stub.GetStats(rpb.GetStatsRequest(), timeout=30).points)


def recall_under_ingest(
    memory: ServerProcess, sidecar: ServerProcess, seconds: float, writers: int, seed: int
) -> dict[str, object]:
    reader = memory.client("tenant-0", "reader")
    stop = threading.Event()
    created = [0] * writers

    def write(n: int) -> None:
        rng = random.Random(seed + n)
        client = memory.client(f"tenant-{n % 4}", f"writer-{n}")
        while not stop.is_set():
            key, text = memory_text(rng)
            create(client, f"{key}_{created[n]}", text)
            created[n] += 1

    before = points(sidecar.address)
    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    rng = random.Random(seed)
    latencies: list[float] = []
    degraded: dict[str, int] = {}
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        began = time.perf_counter()
        reply = reader.memories.RecallMemories(
            svc.RecallMemoriesRequest(query=rng.choice(QUERIES), limit=5), timeout=30
        )
        latencies.append(time.perf_counter() - began)
        if reply.degraded:
            degraded[reply.degraded_reason] = degraded.get(reply.degraded_reason, 0) + 1
    elapsed = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join()
    indexed = points(sidecar.address) - before
    caught_up = time.monotonic()
    while points(sidecar.address) - before < sum(created) and time.monotonic() - caught_up < 300:
        time.sleep(0.1)  # the restarts below measure waking up, not this backlog
    return {
        "seconds": round(elapsed, 1),
        "writers": writers,
        "memories_written": sum(created),
        "memories_per_s": round(sum(created) / (elapsed + 1), 1),
        "indexed_meanwhile": indexed,
        "backlog_drained_s": round(time.monotonic() - caught_up, 1),
        "recalls": len(latencies),
        "degraded": sum(degraded.values()),
        "degraded_reasons": degraded,
        "recall": summary_ms(latencies),
    }


def recovery(memory: ServerProcess, sidecar: ServerProcess, workdir: Path, n: int) -> float:
    """Kill -9 the sidecar, write a memory meanwhile, restart it: seconds from SERVING until
    that memory is recalled."""
    client = memory.client("tenant-0", "restarts")
    os.kill(sidecar.process.pid, signal.SIGKILL)
    sidecar.process.wait()
    text = f"prefers tea number {n} in the afternoon"
    create(client, f"drink_{n}", text)
    time.sleep(3)  # the outbox tries, fails and backs off
    restarted = start_sidecar(workdir, sidecar.address)
    serving = time.monotonic()
    sidecar.process, sidecar.log_path = restarted.process, restarted.log_path
    while time.monotonic() - serving < 60:
        reply = client.memories.RecallMemories(
            svc.RecallMemoriesRequest(query=f"tea number {n}", limit=5), timeout=30
        )
        if text in [m.memory.applicable_revision.value for m in reply.memories]:
            return time.monotonic() - serving
        time.sleep(0.02)
    return float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir)
        memory = start_memory_service(
            workdir, TEST_JWT_SECRET, MEMORY_RETRIEVAL_ADDRESS=sidecar.address
        )
        try:
            load = recall_under_ingest(memory, sidecar, args.seconds, args.writers, args.seed)
            recoveries = [recovery(memory, sidecar, workdir, n) for n in range(args.restarts)]
        finally:
            memory.stop()
            sidecar.stop()
    emit(
        {
            "benchmark": "recall_under_ingest",
            "database": "sqlite",
            "settings": "defaults",
            "load_average_1m": round(os.getloadavg()[0], 1),
            "under_ingest": load,
            "recovery_after_restart_s": [round(r, 2) for r in recoveries],
            "budgets": {"degraded": 0, "recovery_s": 2},
        }
    )


if __name__ == "__main__":
    main()
