"""Which embedded vector engine: Qdrant's engine in-process (qdrant-edge) against qdrant-client's
local mode, through the project's own index adapters, with the tenant filter every search uses.

    .venv/bin/python -m bench.vector_engine_bench                      # 1M points, edge only
    .venv/bin/python -m bench.vector_engine_bench --points 200000 --local-points 50000

SPEC §7 budget: the embedded engine at 1M points, search p95 <= 5 ms.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient

from bench.common import emit, summary_ms
from retrieval_service.index import IndexPoint, VectorIndex
from retrieval_service.index.edge import EdgeIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex

DIMENSIONS = 384
BATCH = 1000


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSIONS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def load(index: VectorIndex, points: int, tenants: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    for start in range(0, points, BATCH):
        count = min(BATCH, points - start)
        vectors = unit_vectors(rng, count)
        index.upsert(
            [
                IndexPoint(
                    f"{start + n:032x}",
                    f"tenant-{(start + n) % tenants}",
                    1,
                    1,
                    "USER",
                    f"user-{(start + n) % 7}",
                    vectors[n].tolist(),
                )
                for n in range(count)
            ]
        )
    return points / (time.perf_counter() - started)


def searches(index: VectorIndex, tenants: int, queries: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed + 1)
    pick = random.Random(seed)
    vectors = unit_vectors(rng, queries + 10)
    samples = []
    for n, vector in enumerate(vectors):
        tenant = f"tenant-{pick.randrange(tenants)}"
        started = time.perf_counter()
        index.search(tenant, vector.tolist(), 15, [])
        if n >= 10:
            samples.append(time.perf_counter() - started)
    return samples


def run(
    points: int = 1_000_000,
    local_points: int = 0,
    tenants: int = 100,
    queries: int = 300,
    seed: int = 11,
) -> dict[str, Any]:
    """Load `points` into the embedded engine through the index adapter, then time searches
    with the tenant filter; `local_points` > 0 also runs qdrant-client's local mode."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        edge = EdgeIndex(Path(tmp) / "edge", DIMENSIONS)
        rate = load(edge, points, tenants, seed)
        results["qdrant-edge"] = {
            "points": points,
            "upsert_points_per_s": round(rate),
            "search": summary_ms(searches(edge, tenants, queries, seed)),
        }
        edge.close()
    if local_points:
        local = QdrantClientIndex(QdrantClient(location=":memory:"), "bench", DIMENSIONS, "local")
        rate = load(local, local_points, tenants, seed)
        results["qdrant-client-local"] = {
            "points": local_points,
            "upsert_points_per_s": round(rate),
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
    args = parser.parse_args()
    emit(run(args.points, args.local_points, args.tenants, args.queries, args.seed))


if __name__ == "__main__":
    main()
