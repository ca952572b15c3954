"""What usage tracking costs the read path: BuildContext (with and without a query) and
RecallMemories on two memory services side by side, one with `MEMORY_USAGE_TRACKING=1` and one
with it off, sharing one sidecar, measured in alternation so both see the same machine load.
Also times the recorder's `note()` alone, the only thing a read does for usage.

    .venv/bin/python -m bench.usage_bench --users 10 --memories-per-user 20 --calls 300
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc

from bench.common import emit, start_memory_service, summary_ms
from bench.context_bench import remember
from bench.corpus import QUERIES, memory_text
from bench.recall_bench import start_sidecar
from memory_service.memories.workers.usage import UsageRecorder
from tests.support.servers import TEST_JWT_SECRET, Client

MODES = ("tracking_on", "tracking_off")


def populate(clients: list[Client], per_user: int, rng: random.Random) -> None:
    for client in clients:
        for n in range(per_user):
            key, text = memory_text(rng)
            remember(client, pb.Scope(type=pb.SCOPE_TYPE_USER), f"{key}_{n}", text)


def call(client: Client, kind: str, rng: random.Random) -> float:
    started = time.perf_counter()
    if kind == "recall":
        reply = client.memories.RecallMemories(
            svc.RecallMemoriesRequest(query=rng.choice(QUERIES), limit=5), timeout=5
        )
        degraded = reply.degraded
    else:
        context = client.context.BuildContext(
            ctx_pb.BuildContextRequest(
                conversation=f"conversations/setup-{client.user}",
                query=rng.choice(QUERIES) if kind == "context_with_query" else "",
            ),
            timeout=5,
        )
        degraded = context.recall_degraded
    elapsed = time.perf_counter() - started
    if degraded:
        raise RuntimeError(f"{kind} degraded during the benchmark")
    return elapsed


def note_cost(ids_per_call: int, calls: int) -> dict[str, float]:
    """The recorder alone: what a read adds (no database: the store is never flushed here)."""

    class NoStore:
        def record(self, uses: object) -> None:
            return None

    recorder = UsageRecorder(NoStore())
    ids = [f"{n:032x}" for n in range(2_000)]
    samples = []
    for n in range(calls):
        chosen = ids[(n * ids_per_call) % 1_900 :][:ids_per_call]
        started = time.perf_counter()
        recorder.note("bench", chosen, datetime.now(UTC))
        samples.append(time.perf_counter() - started)
    return {
        "ids_per_call": ids_per_call,
        "p50_us": round(statistics.median(samples) * 1e6, 2),
        "p95_us": round(sorted(samples)[int(0.95 * (len(samples) - 1))] * 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--memories-per-user", type=int, default=20)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    samples: dict[str, dict[str, list[float]]] = {
        kind: {mode: [] for mode in MODES}
        for kind in ("context_without_query", "context_with_query", "recall")
    }
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir, startup_timeout=900)  # model load on busy cores
        servers = {}
        try:
            for mode in MODES:
                folder = workdir / mode
                folder.mkdir()
                servers[mode] = start_memory_service(
                    folder,
                    TEST_JWT_SECRET,
                    MEMORY_RETRIEVAL_ADDRESS=sidecar.address,
                    MEMORY_USAGE_TRACKING="1" if mode == "tracking_on" else "0",
                )
            # One tenant per service: they share the sidecar's index.
            clients = {
                mode: [server.client(mode, f"user-{u}") for u in range(args.users)]
                for mode, server in servers.items()
            }
            for mode in MODES:
                populate(clients[mode], args.memories_per_user, random.Random(args.seed))
            time.sleep(5)  # let the outboxes index everything
            for kind, by_mode in samples.items():
                for n in range(args.calls + 20):
                    user = rng.randrange(args.users)
                    order = MODES if n % 2 else MODES[::-1]  # alternate who goes first
                    for mode in order:
                        elapsed = call(clients[mode][user], kind, random.Random(n))
                        if n >= 20:  # warm-up excluded
                            by_mode[mode].append(elapsed)
        finally:
            for server in servers.values():
                server.stop()
            sidecar.stop()
    result: dict[str, object] = {}
    for kind, by_mode in samples.items():
        on, off = summary_ms(by_mode["tracking_on"]), summary_ms(by_mode["tracking_off"])
        result[kind] = {
            "tracking_on": on,
            "tracking_off": off,
            "p50_delta_ms": round(on["p50_ms"] - off["p50_ms"], 3),
            "p95_delta_ms": round(on["p95_ms"] - off["p95_ms"], 3),
        }
    emit(
        {
            "benchmark": "usage_tracking",
            "database": "sqlite",
            "memories_per_context": args.memories_per_user,
            **result,
            "note_alone": note_cost(args.memories_per_user, 20_000),
        }
    )


if __name__ == "__main__":
    main()
