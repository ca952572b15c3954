"""Which embedded vector engine: Qdrant's engine in-process (qdrant-edge) against qdrant-client's
local mode, through the project's own index adapters, with the tenant filter every search uses.

Each point carries both vectors, like the sidecar's: a 384-d unit vector and the BM25 weights of
a short synthetic text (words drawn from a Zipf law, plus an order code). The load goes through
`upsert` in batches into the sidecar's default index (the engine in a worker process, optimised
in the background by a second one; `--optimize-points 0` never optimises, plain segments), while
a thread searches and records the longest search: what an optimisation costs the readers. Then
it times dense searches, hybrid (`search_both`) searches, the CPU of both processes per search,
and the recall@10 of the dense search against an exact search (float vectors, no quantisation).

    .venv/bin/python -m bench.vector_engine_bench                      # 1M points, embedded only
    .venv/bin/python -m bench.vector_engine_bench --points 200000 --local-points 50000

SPEC §7 budget: the embedded engine at 1M points, search p95 <= 5 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe
from qdrant_client import QdrantClient

from bench.common import emit, summary_ms
from retrieval_service.index import DENSE, IndexPoint, VectorIndex
from retrieval_service.index.embedded import EmbeddedIndex
from retrieval_service.index.embedded_process import OPTIMIZE_POINTS, EmbeddedProcessIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex
from retrieval_service.lexical import Bm25Encoder, SparseTerms

DIMENSIONS = 384
BATCH = 1000


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSIONS)).astype(np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


VOCABULARY = 20_000


def texts(rng: np.random.Generator, count: int) -> list[str]:
    """Memory-like texts: 6 to 17 words of a Zipf-distributed vocabulary and an order code."""
    words = np.minimum(rng.zipf(1.3, (count, 17)), VOCABULARY)
    lengths = rng.integers(6, 18, count)
    codes = rng.integers(10_000, 99_999, count)
    return [
        " ".join(f"w{w}" for w in words[n, : lengths[n]]) + f" ORD-{codes[n]}" for n in range(count)
    ]


def load(
    index: VectorIndex,
    points: int,
    tenants: int,
    seed: int,
    optimizations: list[dict[str, float]] | None = None,
) -> dict[str, float]:
    """Points per second of time spent in `upsert` (making the points is not timed), and the
    longest call: one that waited for a background optimisation's copy of the shard."""
    rng = np.random.default_rng(seed)
    encoder = Bm25Encoder()
    calls = []
    for start in range(0, points, BATCH):
        count = min(BATCH, points - start)
        vectors = unit_vectors(rng, count)
        sparse = [encoder.document(text) for text in texts(rng, count)]
        batch = [
            IndexPoint(
                f"{start + n:032x}",
                f"tenant-{(start + n) % tenants}",
                1,
                1,
                "USER",
                f"user-{(start + n) % 7}",
                vectors[n].tolist(),
                sparse[n],
            )
            for n in range(count)
        ]
        started = time.perf_counter()
        index.upsert(batch)
        calls.append(time.perf_counter() - started)
        finished = getattr(index, "last_optimization", None)
        if optimizations is not None and finished and finished not in optimizations:
            optimizations.append(finished)
    return {
        "upsert_points_per_s": round(points / sum(calls)),
        "longest_upsert_s": round(max(calls), 2),
    }


def queries_of(tenants: int, count: int, seed: int) -> list[tuple[str, list[float], SparseTerms]]:
    """Ten warm-up queries, then `count`: a tenant, a vector, and two or three words."""
    rng = np.random.default_rng(seed + 1)
    pick = random.Random(seed)
    encoder = Bm25Encoder()
    return [
        (
            f"tenant-{pick.randrange(tenants)}",
            vector.tolist(),
            encoder.query(" ".join(f"w{pick.randint(1, 300)}" for _ in range(pick.randint(2, 3)))),
        )
        for vector in unit_vectors(rng, count + 10)
    ]


def searches(
    index: VectorIndex,
    tenants: int,
    queries: int,
    seed: int,
    hybrid: bool = False,
    cpu: list[float] | None = None,
) -> list[float]:
    """Wall seconds per search; `cpu` gets the process's CPU seconds per search (every thread:
    the engine searches segments on a pool of its own), which other processes' load leaves
    alone."""
    samples = []
    for n, (tenant, vector, terms) in enumerate(queries_of(tenants, queries, seed)):
        started = time.perf_counter()
        used = time.process_time()
        if hybrid:
            index.search_both(tenant, vector, terms, 15, [])
        else:
            index.search(tenant, vector, 15, [])
        if n >= 10:
            samples.append(time.perf_counter() - started)
            if cpu is not None:
                cpu.append(time.process_time() - used)
    return samples


def recall_at_10(index: EmbeddedIndex, tenants: int, queries: int, seed: int) -> float:
    """The adapter's dense search against an exact one (every float vector of the tenant
    compared, quantisation ignored) on the same queries: what quantisation costs in quality."""
    exact_params = qe.SearchParams(
        exact=True, quantization=qe.QuantizationSearchParams(ignore=True)
    )
    found = 0
    total = 0
    for tenant, vector, _terms in queries_of(tenants, queries, seed)[10:]:
        approximate = {h.id for h in index.search(tenant, vector, 10, [])}
        exact = index._shard.query(  # the bench's reference search, not the adapter's
            qe.QueryRequest(
                limit=10,
                query=qe.Query.Nearest(vector, using=DENSE),
                filter=qe.Filter(
                    must=[qe.FieldCondition(key="tenant_id", match=qe.MatchValue(tenant))]
                ),
                params=exact_params,
                with_payload=["memory_id"],
                with_vector=False,
            )
        )
        expected = {str((p.payload or {}).get("memory_id")) for p in exact}
        found += len(approximate & expected)
        total += len(expected)
    return found / max(1, total)


def rss_mib() -> dict[str, int]:
    """The process's resident memory now (anonymous and file-backed) and at its peak."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile"):
                fields[name] = int(value.split()[0]) // 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return {
        "rss_mib": fields["VmRSS"],
        "anon_mib": fields["RssAnon"],
        "file_mib": fields["RssFile"],
        "peak_mib": peak,
    }


def worker_cpu_s(index: EmbeddedProcessIndex) -> float:
    """CPU seconds the serving worker process has used (clock ticks of /proc)."""
    fields = Path(f"/proc/{index._worker._process.pid}/stat").read_text().rsplit(")", 1)[1]
    utime, stime = fields.split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


def worker_rss_mib(index: EmbeddedProcessIndex) -> int:
    for line in Path(f"/proc/{index._worker._process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


class Searcher(threading.Thread):
    """Searches while the load runs; the longest wall time is what readers waited at worst."""

    def __init__(self, index: VectorIndex, tenants: int, seed: int) -> None:
        super().__init__(daemon=True)
        self.index, self.queries = index, queries_of(tenants, 200, seed + 3)
        self.done = threading.Event()
        self.samples: list[float] = []

    def run(self) -> None:
        n = 0
        while not self.done.is_set():
            tenant, vector, _terms = self.queries[n % len(self.queries)]
            started = time.perf_counter()
            self.index.search(tenant, vector, 15, [])
            self.samples.append(time.perf_counter() - started)
            n += 1
            time.sleep(0.01)


def run(
    points: int = 1_000_000,
    local_points: int = 0,
    tenants: int = 100,
    queries: int = 300,
    seed: int = 11,
    optimize_points: int = OPTIMIZE_POINTS,
    keep: str = "",
) -> dict[str, Any]:
    """Load `points` into the sidecar's default index through its adapter, then time searches
    with the tenant filter; `local_points` > 0 also runs qdrant-client's local mode. `keep`
    names a directory that keeps the shard afterwards (to study it without loading again)."""
    results: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        tmp = keep or stack.enter_context(tempfile.TemporaryDirectory())
        embedded = EmbeddedProcessIndex(
            Path(tmp) / "embedded", DIMENSIONS, optimize_points=optimize_points
        )
        searcher = Searcher(embedded, tenants, seed)
        searcher.start()
        optimizations: list[dict[str, float]] = []
        started = time.perf_counter()
        loaded = load(embedded, points, tenants, seed, optimizations)
        embedded.wait_optimized()
        settled = time.perf_counter() - started
        searcher.done.set()
        searcher.join()
        if embedded.last_optimization and embedded.last_optimization not in optimizations:
            optimizations.append(embedded.last_optimization)
        cpu: list[float] = []
        used = worker_cpu_s(embedded)
        dense = searches(embedded, tenants, queries, seed, cpu=cpu)
        worker_ms = 1000 * (worker_cpu_s(embedded) - used) / len(dense)
        results["qdrant-edge"] = {
            "points": points,
            **loaded,
            "optimize_points": optimize_points,
            "load_and_optimise_s": round(settled, 1),
            "optimizations": len(optimizations),
            "last_optimization": optimizations[-1] if optimizations else {},
            "searches_during_load": summary_ms(searcher.samples),
            "longest_search_during_load_ms": round(1000 * max(searcher.samples), 1),
            "segments": embedded.segments(),
            "search": summary_ms(dense),
            "search_cpu_sidecar": summary_ms(cpu),
            "search_cpu_worker_mean_ms": round(worker_ms, 2),
            "search_both": summary_ms(searches(embedded, tenants, queries, seed + 7, hybrid=True)),
            "memory": {**rss_mib(), "worker_rss_mib": worker_rss_mib(embedded)},
        }
        embedded.close()
        # The reference search needs the shard itself: opened in this process once served.
        serving = (Path(tmp) / "embedded" / "CURRENT").read_text().strip()
        reference = EmbeddedIndex(Path(tmp) / "embedded" / serving, DIMENSIONS)
        results["qdrant-edge"]["recall_at_10_vs_exact"] = round(
            recall_at_10(reference, tenants, min(queries, 200), seed), 4
        )
        reference.close()
    if local_points:
        local = QdrantClientIndex(QdrantClient(location=":memory:"), "bench", DIMENSIONS, "local")
        results["qdrant-client-local"] = {
            "points": local_points,
            **load(local, local_points, tenants, seed),
            "search": summary_ms(searches(local, tenants, min(queries, 50), seed)),
        }
        local.close()
    return {
        "benchmark": "vector_engine",
        "dimensions": DIMENSIONS,
        "tenants": tenants,
        **results,
        "budget": "1M points, search p95 <= 5 ms",
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--local-points", type=int, default=0)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--optimize-points",
        type=int,
        default=OPTIMIZE_POINTS,
        help="as RETRIEVAL_INDEX_OPTIMIZE_POINTS (0: never optimise)",
    )
    parser.add_argument("--keep", default="", help="a directory that keeps the shard")
    args = parser.parse_args()
    emit(
        run(
            args.points,
            args.local_points,
            args.tenants,
            args.queries,
            args.seed,
            args.optimize_points,
            args.keep,
        )
    )


if __name__ == "__main__":
    main()
