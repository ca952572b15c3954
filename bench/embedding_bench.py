"""The sidecar's embedders side by side: torch (sentence-transformers), ONNX fp32 and ONNX int8.

Per short query (one text, as recall embeds it): p50/p95 and CPU with one model thread and with
two; a batch of 64 memory-sized documents (an outbox drain's chunk) with each (for ONNX as the
sidecar runs them: that many one-thread passes side by side), and its CPU a text; the cosine of
each runtime's vectors to torch's and int8's to fp32 over 200 texts; and how long a sidecar
process takes from start to SERVING with `RETRIEVAL_EMBEDDER=torch` and with the default. The
load average is printed before and after: on a shared machine every figure moves with it (CPU
figures least).

    .venv/bin/python -m bench.embedding_bench [--queries 200] [--starts 1]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import emit, summary_ms
from retrieval_service.embedding import Embedder
from retrieval_service.embedding.model_files import packaged_model_path
from retrieval_service.embedding.onnx_runtime import OnnxEmbedder, default_export_dir
from retrieval_service.embedding.sentence_transformer import SentenceTransformerEmbedder
from tests.support.servers import TEST_RETRIEVAL_SECRET, start_server

QUERIES = [
    "what did Mara say about pricing",
    "net-30 terms for ACME",
    "when is the Globex renewal",
    "who is the CFO at Initech",
    "order A-99812 status",
    "does Priya prefer email",
    "discount agreed in March",
    "Berlin office forecast",
]
SUBJECTS = ["Mara", "Priya", "Jonas", "ACME", "Globex", "Initech", "the CFO", "procurement"]
FACTS = [
    "prefers email over calls and never before 10am CET",
    "asked for a 15% discount if they sign before the end of Q3",
    "renewal is due on 2025-03-01 with net-30 payment terms",
    "order #A-99812 shipped late; credit note of $1,250 promised",
    "legal wants redlines on the SLA (99.9% uptime) before signing",
    "budget for the pilot is €12,500, approved by the CFO",
]


def documents(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(FACTS)}" for _ in range(count)]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def per_query(embedder: Embedder, count: int) -> dict[str, float]:
    pages = getattr(embedder, "huge_pages", None)
    if pages is not None:
        pages.join()  # moving the weights into huge pages is the start's CPU, not the queries'
    embedder.embed(["warm up"])
    samples = []
    cpu = time.process_time()
    for i in range(count):
        text = QUERIES[i % len(QUERIES)]
        start = time.perf_counter()
        embedder.embed([text])
        samples.append(time.perf_counter() - start)
    # CPU per query moves far less with the machine's load than the wall-clock figures.
    cpu_ms = (time.process_time() - cpu) / count * 1000
    return {**summary_ms(samples), "cpu_ms": round(cpu_ms, 3)}


def per_batch(embedder: Embedder, rounds: int = 10) -> dict[str, float]:
    """As the sidecar indexes: ONNX runs `threads` one-thread passes side by side, torch one
    pass on `threads` threads."""
    texts = documents(64)
    samples = []
    cpu = time.process_time()
    for _ in range(rounds):
        start = time.perf_counter()
        embedder.embed_documents(texts)
        samples.append(time.perf_counter() - start)
    median = statistics.median(samples)
    cpu_ms = (time.process_time() - cpu) / (rounds * len(texts)) * 1000
    return {
        "batch": 64,
        "p50_ms": round(median * 1000, 1),
        "texts_per_s": round(64 / median, 1),
        "cpu_ms_per_text": round(cpu_ms, 3),
    }


def cosines(a: list[list[float]], b: list[list[float]]) -> dict[str, float]:
    values = (np.array(a) * np.array(b)).sum(axis=1)
    return {
        "mean": round(float(values.mean()), 5),
        "min": round(float(values.min()), 5),
        "p05": round(float(np.percentile(values, 5)), 5),
    }


def start_to_serving(embedder: str) -> float:
    with tempfile.TemporaryDirectory(prefix="embedding-bench-") as folder:
        workdir = Path(folder)
        env = {
            "RETRIEVAL_LISTEN": "127.0.0.1:0",
            "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
            "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
            "RETRIEVAL_SHUTDOWN_DRAIN_SECONDS": "0",
            "RETRIEVAL_EMBEDDER": embedder,
        }
        start = time.monotonic()
        server = start_server("retrieval_service", env, workdir, startup_timeout=600)
        elapsed = time.monotonic() - start
        server.stop()
        return round(elapsed, 2)


def embedding_bench(queries: int = 200, starts: int = 1) -> dict[str, Any]:
    """The figures as a dict (the `make bench` table can read it), load averages included."""
    result: dict[str, Any] = {"bench": "embedding", "load_average_before": load_average()}

    source = packaged_model_path()
    folder = default_export_dir(source.resolve())
    texts = [*QUERIES, *documents(192, seed=13)]
    vectors: dict[str, list[list[float]]] = {}
    runtimes: dict[str, Any] = {}
    for threads in (1, 2):
        embedders: dict[str, Embedder] = {
            "torch": SentenceTransformerEmbedder(source, threads=threads),
            "onnx_fp32": OnnxEmbedder(folder, "fp32", threads=threads, document_threads=threads),
            "onnx_int8": OnnxEmbedder(folder, "int8", threads=threads, document_threads=threads),
        }
        for name, embedder in embedders.items():
            figures = runtimes.setdefault(name, {})
            figures[f"query_{threads}_thread"] = per_query(embedder, queries)
            figures[f"batch_{threads}_thread"] = per_batch(embedder)
            figures[f"load_average_{threads}_thread"] = load_average()
            vectors.setdefault(name, embedder.embed(texts))
    result["runtimes"] = runtimes
    result["cosine"] = {
        "onnx_fp32_to_torch": cosines(vectors["onnx_fp32"], vectors["torch"]),
        "onnx_int8_to_torch": cosines(vectors["onnx_int8"], vectors["torch"]),
        "onnx_int8_to_onnx_fp32": cosines(vectors["onnx_int8"], vectors["onnx_fp32"]),
        "texts": len(texts),
    }
    result["start_to_serving_s"] = {
        name: [start_to_serving(name) for _ in range(starts)] for name in ("torch", "onnx")
    }
    result["load_average_after"] = load_average()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--starts", type=int, default=1, help="sidecar starts per embedder")
    args = parser.parse_args()
    emit(embedding_bench(args.queries, args.starts))


if __name__ == "__main__":
    main()
