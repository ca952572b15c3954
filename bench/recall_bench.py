"""Recall, ingest and index lag through gRPC with both services as separate processes, default
settings (budgets: recall p95 <= 15 ms at 100k memories over 100 tenants with no degraded answer;
ingest >= 400 memories/s with index lag p95 <= 2 s; recall with the sidecar down within its
deadline + 5 ms, <= 2 ms once the breaker is open).

The store is seeded through the public API in bulk: each tenant's memories are restored from an
export (`CreateImportBatch`, one archive per tenant, as an admin), so every memory reaches the
sidecar's real index through the outbox, as written memories do; the bench waits until the
index holds them all. Ingest is then measured on top, one `CreateMemory` at a time.

    .venv/bin/python -m bench.recall_bench --memories 100000 --tenants 100
"""

from __future__ import annotations

import argparse
import bisect
import os
import random
import signal
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from bench.common import emit, start_memory_service, summary_ms
from bench.corpus import QUERIES, memory_text
from bench.import_bench import export_lines, timed_import
from memory_service.config import Settings
from tests.support.servers import (
    TEST_JWT_SECRET,
    TEST_RETRIEVAL_SECRET,
    Client,
    ServerProcess,
    sidecar_stub,
    start_server,
)

USERS_PER_TENANT = 5


def start_sidecar(
    workdir: Path, listen: str = "127.0.0.1:0", startup_timeout: float = 180, **settings: str
) -> ServerProcess:
    """A sidecar at its defaults; `settings` (RETRIEVAL_* variables) change the ones named."""
    env = {
        "RETRIEVAL_LISTEN": listen,
        "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
        "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
        **settings,
    }
    return start_server("retrieval_service", env, workdir, startup_timeout=startup_timeout)


def ingest(
    server: ServerProcess, memories: int, tenants: int, threads: int, seed: int
) -> tuple[list[float], float]:
    """Creates memories through the API; returns each commit time (sorted) and the duration."""
    clients: dict[tuple[int, int], Client] = {}
    for t in range(tenants):
        for u in range(USERS_PER_TENANT):
            clients[(t, u)] = server.client(f"tenant-{t}", f"user-{u}")
    commits: list[float] = []
    lock = threading.Lock()
    counter = iter(range(memories))
    counter_lock = threading.Lock()

    def worker(worker_id: int) -> None:
        rng = random.Random(seed + worker_id)
        while True:
            with counter_lock:
                n = next(counter, None)
            if n is None:
                return
            client = clients[(n % tenants, rng.randrange(USERS_PER_TENANT))]
            key, text = memory_text(rng)
            message = client.transcript.AppendMessage(
                tr.AppendMessageRequest(
                    parent=f"conversations/ingest-{worker_id}-{client.user}",
                    message=tr.Message(speaker=pb.SPEAKER_USER, text=text),
                ),
                timeout=30,
            ).message.name
            client.memories.CreateMemory(
                svc.CreateMemoryRequest(
                    memory=pb.Memory(
                        scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                        key=f"written_{key}_{n}",  # never a seeded (restored) key
                        kind=pb.MEMORY_KIND_PREFERENCE,
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
            with lock:
                commits.append(time.monotonic())

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(worker, i) for i in range(threads)]:
            future.result()
    return sorted(commits), time.monotonic() - started


def watch_index(address: str, target: int, stop: threading.Event) -> list[tuple[float, int]]:
    """(time, indexed points) samples until the index holds `target` points."""
    stub = sidecar_stub(address)
    samples: list[tuple[float, int]] = []
    while not stop.is_set():
        points = stub.GetStats(rpb.GetStatsRequest(), timeout=10).points
        samples.append((time.monotonic(), points))
        if points >= target:
            break
        time.sleep(0.1)
    return samples


def index_lags(
    commits: list[float], samples: list[tuple[float, int]], baseline: int = 0
) -> list[float]:
    """For the k-th commit: when the index first held `baseline` + k points, less the commit
    time."""
    counts = [count - baseline for _, count in samples]
    lags = []
    for k, committed in enumerate(commits, start=1):
        at = bisect.bisect_left(counts, k)
        if at < len(samples):
            lags.append(max(0.0, samples[at][0] - committed))
    return lags


def measure_recall(
    server: ServerProcess, tenants: int, queries: int, seed: int
) -> tuple[list[float], list[str], list[float], list[float]]:
    """Latencies, the reasons of any degraded answers (a budget counts them), and two first
    recalls measured apart, as a start costs them once: each tenant's first after the memory
    service starts, which waits for its index check (docs/behaviour.md, "Incomplete index"), and
    each caller's first, which reads what the caller may see before the search (later ones search
    with what their last recall read). The steady-state samples come after both."""
    rng = random.Random(seed)
    clients = [
        server.client(f"tenant-{t}", f"user-{u}")
        for t in range(tenants)
        for u in range(USERS_PER_TENANT)
    ]

    def recall(client: Client) -> tuple[float, Any]:
        request = svc.RecallMemoriesRequest(query=rng.choice(QUERIES), limit=5)
        started = time.perf_counter()
        reply = client.memories.RecallMemories(request, timeout=5)
        return time.perf_counter() - started, reply

    first_of_tenant = [recall(clients[t * USERS_PER_TENANT])[0] for t in range(tenants)]
    first_of_caller = [
        recall(client)[0] for n, client in enumerate(clients) if n % USERS_PER_TENANT
    ]
    samples, degraded = [], []
    for n in range(queries + 20):
        elapsed, reply = recall(rng.choice(clients))
        if n >= 20:  # warm-up excluded
            samples.append(elapsed)
            if reply.degraded:
                degraded.append(reply.degraded_reason)
    return samples, degraded, first_of_tenant, first_of_caller


def measure_sidecar_search(address: str, tenants: int, queries: int, seed: int) -> list[float]:
    """The sidecar alone (embedding + vector search), to show what recall adds on top."""
    rng = random.Random(seed)
    stub = sidecar_stub(address)
    samples = []
    for n in range(queries + 20):
        request = rpb.SearchRequest(
            tenant_id=f"tenant-{rng.randrange(tenants)}", query=rng.choice(QUERIES), limit=15
        )
        started = time.perf_counter()
        stub.Search(request, timeout=5)
        if n >= 20:
            samples.append(time.perf_counter() - started)
    return samples


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


HUNG_CALLERS = 8  # half with a deadline of their own, half without
HUNG_DEADLINE_S = 1.0
# A caller without a deadline has MEMORY_RECALL_TIMEOUT_MS, at its default here.
RECALL_TIMEOUT_S = Settings.model_fields["recall_timeout_ms"].default / 1000
BREAKER_WARM_UP_CALLS = 20


@dataclass
class HungRecall:
    """Recall while the sidecar hangs, before the breaker opens: how long each caller waited,
    by whether it set a deadline, and the callers that did not wait for the hang (refused by an
    already open breaker) or whose deadline passed without an answer."""

    with_deadline: list[float] = field(default_factory=list)
    without_deadline: list[float] = field(default_factory=list)
    refused: int = 0
    missed_deadline: int = 0


def wait_stopped(pid: int, timeout: float = 10) -> None:
    """Until the kernel shows the process stopped (a signal is delivered asynchronously)."""
    until = time.monotonic() + timeout
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        if time.monotonic() > until:
            raise RuntimeError(f"process {pid} did not stop")
        time.sleep(0.005)


def measure_hung(server: ServerProcess, sidecar_pid: int, tenants: int) -> HungRecall:
    """Recall while the sidecar hangs (SIGSTOP: connected, answering nothing). Each of the
    callers first recalls with the sidecar answering (the breaker is closed and their channels
    are open), then all start at once after the stop: half with a deadline of `HUNG_DEADLINE_S`,
    half without one (the search then waits the service's own timeout). Each must be answered
    degraded, within its deadline + 5 ms. A killed sidecar refuses connections, which the health
    poll sees within 0.2 s and opens the breaker on: a hang is the case where a caller waits.
    The sidecar is killed before this returns or raises (a stopped one ignores SIGTERM)."""
    if tenants < HUNG_CALLERS:
        raise ValueError(f"the hung-sidecar part needs at least {HUNG_CALLERS} tenants")
    clients = [server.client(f"tenant-{n}", "user-0") for n in range(HUNG_CALLERS)]
    request = svc.RecallMemoriesRequest(query="pricing")
    for client in clients:
        if client.memories.RecallMemories(request, timeout=10).degraded:
            raise RuntimeError("recall is degraded before the sidecar was stopped")
    gate = threading.Barrier(HUNG_CALLERS + 1, timeout=30)

    def call(n: int) -> tuple[str, float]:
        """("waited", seconds), ("refused", 0) or ("missed", 0)."""
        gate.wait()
        started = time.perf_counter()
        if n % 2 == 0:
            try:
                reply = clients[n].memories.RecallMemories(request, timeout=HUNG_DEADLINE_S)
            except grpc.RpcError as error:
                if error.code() is not grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
                return "missed", 0.0
        else:  # no deadline sent; the bench still gives up, far past the budget
            pending = clients[n].memories.RecallMemories.future(request)
            try:
                reply = pending.result(timeout=RECALL_TIMEOUT_S + 5)
            except grpc.FutureTimeoutError:
                pending.cancel()  # type: ignore[no-untyped-call]
                return "missed", 0.0
        elapsed = time.perf_counter() - started
        if not reply.degraded:
            raise RuntimeError("a hung sidecar answered a recall")
        if "breaker" in reply.degraded_reason:
            return "refused", 0.0  # did not wait for the hang: not a sample of it
        return "waited", elapsed

    try:
        with ThreadPoolExecutor(HUNG_CALLERS) as pool:
            futures = [pool.submit(call, n) for n in range(HUNG_CALLERS)]
            try:
                os.kill(sidecar_pid, signal.SIGSTOP)
                wait_stopped(sidecar_pid)
            finally:
                gate.wait()  # released even when the stop failed, so no caller waits forever
            outcomes = [future.result() for future in futures]
    finally:
        os.kill(sidecar_pid, signal.SIGKILL)
    result = HungRecall()
    for n, (kind, elapsed) in enumerate(outcomes):
        if kind == "waited":
            (result.with_deadline if n % 2 == 0 else result.without_deadline).append(elapsed)
        elif kind == "refused":
            result.refused += 1
        else:
            result.missed_deadline += 1
    return result


def measure_breaker_open(
    server: ServerProcess, calls: int = 300, max_calls: int = 400
) -> tuple[list[float], float]:
    """Recall latency with the breaker open, and the memory service's CPU per call (its
    background work in that time included): 300 of those, so the p95 is not the third slowest
    of a few dozen. The first few calls after the kill are not counted (recall queues index
    checks of the tenants the hung callers asked for, which then fail at once)."""
    client = server.client("tenant-0", "user-0")
    samples = []
    cpu = 0.0
    for n in range(max_calls):
        cpu_before = process_cpu_seconds(server.process.pid)
        started = time.perf_counter()
        reply = client.memories.RecallMemories(
            svc.RecallMemoriesRequest(query="anything"), timeout=5
        )
        elapsed = time.perf_counter() - started
        if not reply.degraded:
            raise RuntimeError("a killed sidecar answered a recall")
        if "breaker" in reply.degraded_reason and n >= BREAKER_WARM_UP_CALLS:
            samples.append(elapsed)
            cpu += process_cpu_seconds(server.process.pid) - cpu_before
            if len(samples) >= calls:
                break
    return samples, cpu / max(len(samples), 1)


def seed_store(server: ServerProcess, memories: int, tenants: int, seed: int) -> float:
    """Restores `memories` spread over `tenants` (each an archive of this service's export
    format, restored by the tenant's admin); returns the seconds taken."""
    rng = random.Random(seed)
    per_tenant = [memories // tenants + (t < memories % tenants) for t in range(tenants)]
    archives = [export_lines(count, rng, USERS_PER_TENANT) for count in per_tenant]

    def restore(tenant: int) -> None:
        if per_tenant[tenant]:
            admin = server.client(f"tenant-{tenant}", "admin", ["admin"])
            timed_import(admin, archives[tenant], imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT)

    started = time.monotonic()
    for tenant in range(tenants):  # one at a time: the import worker is one writer anyway
        restore(tenant)
    return time.monotonic() - started


def wait_indexed(address: str, points: int, timeout: float) -> float:
    """Seconds until the sidecar's index holds `points`; raises when it never does."""
    stub = sidecar_stub(address)
    started = time.monotonic()
    while (held := stub.GetStats(rpb.GetStatsRequest(), timeout=10).points) < points:
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"the index holds {held} of {points} points after {timeout:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - started


def run(
    memories: int = 100_000,
    tenants: int = 100,
    queries: int = 500,
    ingest_memories: int = 2000,
    threads: int = 8,
    seed: int = 7,
) -> dict[str, Any]:
    """Seed, wait for the index, measure the sidecar alone and recall, ingest on top (with its
    index lag), then hang the sidecar (SIGSTOP) and measure recall degraded before the breaker
    opens, and kill it and measure recall with the breaker open. Default settings except the
    breaker's reset, held open for the last part."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir)
        memory = start_memory_service(
            workdir,
            TEST_JWT_SECRET,
            MEMORY_RETRIEVAL_ADDRESS=sidecar.address,
            MEMORY_BREAKER_RESET_SECONDS="30",
        )
        try:
            seed_seconds = seed_store(memory, memories, tenants, seed)
            index_seconds = wait_indexed(sidecar.address, memories, max(600, memories / 20))
            search = measure_sidecar_search(sidecar.address, tenants, queries, seed)
            recall, degraded, first, first_of_caller = measure_recall(
                memory, tenants, queries, seed
            )
            stop = threading.Event()
            watched: list[list[tuple[float, int]]] = []
            target = memories + ingest_memories
            watcher = threading.Thread(
                target=lambda: watched.append(watch_index(sidecar.address, target, stop))
            )
            watcher.start()
            commits, duration = ingest(memory, ingest_memories, tenants, threads, seed)
            watcher.join(timeout=max(120, ingest_memories / 50))
            stop.set()
            lags = index_lags(commits, watched[0] if watched else [], memories)
            hung = measure_hung(memory, sidecar.process.pid, tenants)
            sidecar.process.wait()
            with_breaker, open_cpu = measure_breaker_open(memory)
        finally:
            memory.stop()
            sidecar.stop()
    return {
        "benchmark": "recall",
        "database": "sqlite",
        "vector_backend": "qdrant-edge",
        "memories": memories,
        "tenants": tenants,
        "seed": {
            "restore_seconds": round(seed_seconds, 1),
            "index_wait_seconds": round(index_seconds, 1),
            "indexed_per_s": round(memories / max(seed_seconds + index_seconds, 1e-9), 1),
        },
        "recall": summary_ms(recall),
        "recall_degraded": len(degraded),
        "recall_first_of_tenant": summary_ms(first),
        "recall_first_of_caller": summary_ms(first_of_caller),
        "recall_degraded_reasons": sorted(set(degraded))[:5],
        "sidecar_search_alone": summary_ms(search),
        "ingest": {
            "memories": ingest_memories,
            "memories_per_s": round(ingest_memories / duration, 1),
            "client_threads": threads,
            "index_lag": summary_ms(lags) if lags else "index never caught up",
            "indexed": (watched[0][-1][1] - memories if watched and watched[0] else 0),
        },
        "recall_sidecar_down": {
            "hung": {
                "callers": HUNG_CALLERS,
                "with_deadline_ms": sorted(round(s * 1000, 1) for s in hung.with_deadline),
                "deadline_ms": HUNG_DEADLINE_S * 1000,
                "without_deadline_ms": sorted(round(s * 1000, 1) for s in hung.without_deadline),
                "recall_timeout_ms": RECALL_TIMEOUT_S * 1000,
                "refused_by_open_breaker": hung.refused,
                "missed_deadline": hung.missed_deadline,
            },
            "breaker_open": summary_ms(with_breaker) if with_breaker else {},
            "breaker_open_calls_wanted": 300,
            "breaker_open_server_cpu_ms_per_call": round(open_cpu * 1000, 3),
        },
        "budgets": {
            "recall_p95_ms": 15,
            "ingest_per_s": 400,
            "index_lag_p95_ms": 2000,
            "down_p95_ms": "deadline + 5; 2 once open",
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--ingest-memories", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    emit(
        run(
            args.memories, args.tenants, args.queries, args.ingest_memories, args.threads, args.seed
        )
    )


if __name__ == "__main__":
    main()
