"""Shared pieces of the benchmarks: real servers as subprocesses, timing and JSON output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Benchmarks measure the defaults: the tenant-scope guard parses every statement and is on only in
# the test suite's servers, so it is switched off for every server a bench starts.
os.environ["MEMORY_CHECK_TENANT_SCOPE"] = "0"

from tests.support.servers import TEST_RETRIEVAL_SECRET, ServerProcess, start_server  # noqa: E402


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples: list[float]) -> dict[str, float]:
    """Median, p95 and p99 in milliseconds from samples in seconds."""
    return {
        "p50_ms": round(statistics.median(samples) * 1000, 3),
        "p95_ms": round(percentile(samples, 0.95) * 1000, 3),
        "p99_ms": round(percentile(samples, 0.99) * 1000, 3),
        "count": len(samples),
    }


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "gpu": False,
    }


def emit(result: dict[str, Any]) -> None:
    print(json.dumps({**result, "machine": machine()}, indent=2))


def start_memory_service(workdir: Path, secret: str, **env: str) -> ServerProcess:
    return start_server(
        "memory_service",
        {
            "MEMORY_DATABASE_URL": f"sqlite:///{workdir / 'bench.db'}",
            "MEMORY_LISTEN": "127.0.0.1:0",
            "MEMORY_JWT_SECRET": secret,
            "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
            **env,
        },
        workdir,
    )
