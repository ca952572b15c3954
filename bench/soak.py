"""Soak: a bounded mixed load against the memory service and its sidecar, watching their memory.

A constant set of memories (SOAK_POINTS, default 2,000) is corrected over and over (every
correction re-indexes a point: overwrites at a constant index size), while messages are appended
and recall and BuildContext run. Every SOAK_SAMPLE_SECONDS (30) it prints the resident memory of
both processes; at the end, JSON with the samples, calls and errors by status code, and each
process's RSS slope in MB/min (over the whole load and over its second half, after warm-up).

    make soak                       # 10 minutes
    SOAK_SECONDS=3600 make soak     # an hour
    SOAK_DATABASE_URL=postgresql+psycopg://... make soak
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as rpb_grpc

from bench.common import machine
from crmmem_runtime.shared_secret import call_metadata
from tests.support.servers import TEST_JWT_SECRET, Client, ServerProcess, start_server

SIDECAR_SECRET = "soak-" + "s" * 40
TENANTS = 4
USERS = 5
VALUES = [
    "mornings", "afternoons", "evenings", "video calls", "phone calls", "short emails",
    "a written agenda", "no meetings on Friday", "quarterly reviews", "lunch meetings",
]  # fmt: skip
QUERIES = [
    "when does she like to meet", "how should I contact them", "meeting preferences",
    "what about Fridays", "agenda before calls",
]  # fmt: skip
# Share of each operation in the load.
MIX = [("correct", 40), ("append", 20), ("recall", 25), ("context", 15)]


def folder_mb(path: Path) -> float:
    """Bytes on disk under `path`: tells a growing index or log apart from a growing heap."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def slope_mb_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) samples, in MB per minute."""
    if len(samples) < 2:
        return 0.0
    xs = [t for t, _ in samples]
    ys = [mb for _, mb in samples]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    cov = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    return round(cov / var * 60, 3) if var else 0.0


@dataclass
class Owned:
    """A memory and the client that owns it; one load thread corrects it, so etags stay fresh."""

    client: Client
    name: str
    etag: str
    conversation: str


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def record(self, op: str, error: grpc.RpcError | None) -> None:
        with self.lock:
            self.calls[op] += 1
            if error is not None:
                self.errors[f"{op}:{error.code().name}"] += 1


def say(client: Client, conversation: str, text: str) -> str:
    return client.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=conversation, message=tr.Message(speaker=pb.SPEAKER_USER, text=text)
        ),
        timeout=30,
    ).message.name


def revision(value: str, message: str) -> pb.RevisionDraft:
    return pb.RevisionDraft(
        value=value,
        provenance=pb.Provenance(
            method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=message
        ),
    )


def create(client: Client, n: int, rng: random.Random) -> Owned:
    conversation = f"conversations/soak-{client.user}-{n}"
    value = rng.choice(VALUES)
    reply = client.memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                key=f"preference_{n}",
                kind=pb.MEMORY_KIND_PREFERENCE,
            ),
            revision=revision(value, say(client, conversation, value)),
        ),
        timeout=30,
    )
    return Owned(client, reply.memory.name, reply.memory.etag, conversation)


def operate(op: str, owned: Owned, rng: random.Random) -> None:
    client = owned.client
    if op == "correct":
        value = f"{rng.choice(VALUES)} ({rng.randrange(10**6)})"
        reply = client.memories.CorrectMemory(
            svc.CorrectMemoryRequest(
                name=owned.name,
                etag=owned.etag,
                revision=revision(value, say(client, owned.conversation, value)),
                request_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            ),
            timeout=30,
        )
        owned.etag = reply.memory.etag
    elif op == "append":
        say(client, owned.conversation, f"note {rng.randrange(10**6)}")
    elif op == "recall":
        client.memories.RecallMemories(
            svc.RecallMemoriesRequest(query=rng.choice(QUERIES), limit=10), timeout=30
        )
    else:
        client.context.BuildContext(
            ctx_pb.BuildContextRequest(conversation=owned.conversation, query=rng.choice(QUERIES)),
            timeout=30,
        )


def wait_indexed(sidecar: ServerProcess, points: int, timeout: float) -> int:
    """Points in the index once it holds `points` (or when `timeout` runs out)."""
    stub = rpb_grpc.RetrievalServiceStub(grpc.insecure_channel(sidecar.address))
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline:
        try:
            count = stub.GetStats(
                rpb.GetStatsRequest(), timeout=10, metadata=call_metadata(SIDECAR_SECRET)
            ).points
        except grpc.RpcError:
            return -1  # the sidecar does not tell us; go on
        if count >= points:
            break
        time.sleep(1)
    return count


def start(workdir: Path) -> tuple[ServerProcess, ServerProcess]:
    sidecar = start_server(
        "retrieval_service",
        {
            "RETRIEVAL_LISTEN": "127.0.0.1:0",
            "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
            "RETRIEVAL_SHUTDOWN_DRAIN_SECONDS": "0",
            "RETRIEVAL_SHARED_SECRET": SIDECAR_SECRET,
            "HF_HUB_OFFLINE": "1",
        },
        workdir / "sidecar",
        startup_timeout=300,
    )
    memory = start_server(
        "memory_service",
        {
            "MEMORY_DATABASE_URL": os.environ.get(
                "SOAK_DATABASE_URL", f"sqlite:///{workdir / 'soak.db'}"
            ),
            "MEMORY_LISTEN": "127.0.0.1:0",
            "MEMORY_JWT_SECRET": TEST_JWT_SECRET,
            "MEMORY_RETRIEVAL_ADDRESS": sidecar.address,
            "MEMORY_SHUTDOWN_DRAIN_SECONDS": "0",
            "RETRIEVAL_SHARED_SECRET": SIDECAR_SECRET,
        },
        workdir / "memory",
    )
    return sidecar, memory


def main() -> None:
    seconds = float(os.environ.get("SOAK_SECONDS", "600"))
    interval = float(os.environ.get("SOAK_SAMPLE_SECONDS", "30"))
    points = int(os.environ.get("SOAK_POINTS", "2000"))
    threads = int(os.environ.get("SOAK_THREADS", "4"))
    workdir = Path(tempfile.mkdtemp(prefix="crmmem-soak-"))
    sidecar, memory = start(workdir)
    try:
        clients = [
            memory.client(f"soak-{t}", f"user-{u}", renewing=True)
            for t in range(TENANTS)
            for u in range(USERS)
        ]
        with ThreadPoolExecutor(threads) as pool:
            owned = list(
                pool.map(lambda n: create(clients[n % len(clients)], n, random.Random(n)),
                         range(points))
            )  # fmt: skip
        indexed = wait_indexed(sidecar, points, timeout=900)
        print(
            f"soak: {points} memories, {indexed} indexed; load for {seconds:.0f}s", file=sys.stderr
        )

        tally = Tally()
        stop = threading.Event()
        started = time.monotonic()
        samples: list[dict[str, Any]] = []

        def sample() -> None:
            entry = {
                "t_s": round(time.monotonic() - started, 1),
                "memory_rss_mb": round(rss_mb(memory.process.pid), 1),
                "sidecar_rss_mb": round(rss_mb(sidecar.process.pid), 1),
                "sidecar_data_mb": round(folder_mb(workdir / "retrieval"), 1),
                "load_average": round(os.getloadavg()[0], 1),
                "calls": sum(tally.calls.values()),
                "errors": sum(tally.errors.values()),
            }
            samples.append(entry)
            print(f"soak: {json.dumps(entry)}", file=sys.stderr, flush=True)

        def load(worker: int) -> None:
            mine = owned[worker::threads]
            local = random.Random(worker)
            ops = [op for op, weight in MIX for _ in range(weight)]
            while not stop.is_set():
                op = local.choice(ops)
                try:
                    operate(op, local.choice(mine), local)
                    tally.record(op, None)
                except grpc.RpcError as error:
                    tally.record(op, error)

        workers = [threading.Thread(target=load, args=(i,), daemon=True) for i in range(threads)]
        sample()
        for worker in workers:
            worker.start()
        while time.monotonic() - started < seconds:
            time.sleep(min(interval, max(0.0, seconds - (time.monotonic() - started))))
            sample()
        stop.set()
        for worker in workers:
            worker.join(60)
        final_points = wait_indexed(sidecar, 0, timeout=1)
    finally:
        memory.stop()
        sidecar.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    def slopes(key: str) -> dict[str, float]:
        series = [(s["t_s"], s[key]) for s in samples]
        return {
            "whole_mb_per_min": slope_mb_per_min(series),
            "second_half_mb_per_min": slope_mb_per_min(series[len(series) // 2 :]),
        }

    print(
        json.dumps(
            {
                "soak_seconds": seconds,
                "points": points,
                "points_at_end": final_points,
                "threads": threads,
                "database": "postgresql" if "SOAK_DATABASE_URL" in os.environ else "sqlite",
                "calls": dict(tally.calls),
                "errors_by_code": dict(tally.errors),
                "samples": samples,
                "memory_service_rss": slopes("memory_rss_mb"),
                "sidecar_rss": slopes("sidecar_rss_mb"),
                "sidecar_data": slopes("sidecar_data_mb"),
                "machine": machine(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
