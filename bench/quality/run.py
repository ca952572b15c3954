"""Retrieval quality: dense, sparse (BM25) and hybrid search side by side on the CRM corpus of
`bench/quality/corpus.py`, through the public API with both services as separate processes.

The memories are written once (CreateMemory, then CorrectMemory for the superseded ones); the
sidecar is then restarted on the same index with each `RETRIEVAL_SEARCH_MODE` (the index always
holds both vectors) and every question is asked with RecallMemories (limit 10). Reported per
mode, overall and per question type: recall@1/@5/@10 (the expected memory among the first k)
and MRR (mean reciprocal rank, 0 past rank 10); and each mode's RecallMemories latency
(p50/p95/p99 over the same calls, one at a time), so the modes compare on one index.

Questions are asked once the index has settled: every memory has a point and the memory
service's outbox is empty (corrections re-index points the count already holds). Degraded
answers and the candidates recall dropped (by reason) are figures of each mode: a memory the
index holds at a revision the records no longer apply is dropped as a stale revision, which
loses its questions in every mode alike.

    .venv/bin/python -m bench.quality.run --table
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from bench.common import emit, start_memory_service, summary_ms
from bench.quality.corpus import SEED, TENANTS, Memory, Question, build
from tests.support.servers import (
    TEST_JWT_SECRET,
    TEST_RETRIEVAL_SECRET,
    Client,
    ServerProcess,
    sidecar_stub,
    start_server,
)

USER = "rep"
LIMIT = 10
MODES = ("dense", "sparse", "hybrid")  # hybrid/rrf, hybrid/weighted/0.4: on request


def start_sidecar(workdir: Path, mode: str, listen: str = "127.0.0.1:0") -> ServerProcess:
    """`mode` is a search mode, or `hybrid/<fusion>[/<sparse weight>]` (`hybrid/rrf`,
    `hybrid/weighted/0.4`)."""
    search, _, fusion = mode.partition("/")
    fusion, _, weight = fusion.partition("/")
    env = {
        "RETRIEVAL_LISTEN": listen,
        "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
        "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
        "RETRIEVAL_SEARCH_MODE": search,
        **({"RETRIEVAL_FUSION": fusion} if fusion else {}),
        **({"RETRIEVAL_SPARSE_WEIGHT": weight} if weight else {}),
    }
    return start_server("retrieval_service", env, workdir, startup_timeout=600)


def _evidence(client: Client, text: str) -> str:
    return str(
        client.transcript.AppendMessage(
            tr.AppendMessageRequest(
                parent=f"conversations/quality-{client.user}",
                message=tr.Message(speaker=pb.SPEAKER_USER, text=text),
            ),
            timeout=30,
        ).message.name
    )


def _draft(client: Client, value: str) -> pb.RevisionDraft:
    return pb.RevisionDraft(
        value=value,
        provenance=pb.Provenance(
            method=pb.PROVENANCE_METHOD_USER_STATEMENT,
            transcript_message=_evidence(client, value),
        ),
    )


def write(client: Client, memory: Memory) -> None:
    """Created with its first value; a corrected memory then gets its current one."""
    created = client.memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                key=memory.key,
                key_context=memory.context,
                kind=pb.MEMORY_KIND_FACT,
            ),
            revision=_draft(client, memory.old_value or memory.value),
        ),
        timeout=30,
    ).memory
    if memory.old_value:
        client.memories.CorrectMemory(
            svc.CorrectMemoryRequest(
                name=created.name, etag=created.etag, revision=_draft(client, memory.value)
            ),
            timeout=30,
        )


def ingest(server: ServerProcess, memories: list[Memory], threads: int) -> None:
    clients: dict[str, Client] = {}
    lock = threading.Lock()

    def one(memory: Memory) -> None:
        with lock:
            client = clients.get(memory.tenant) or server.client(memory.tenant, USER)
            clients[memory.tenant] = client
        write(client, memory)

    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(one, m) for m in memories]:
            future.result()


def outbox_depth(database: Path) -> int:
    """Index work the memory service has not finished (its rows are deleted once the index
    took them), read from its SQLite file."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as connection:
        return int(connection.execute("SELECT count(*) FROM index_outbox").fetchone()[0])


def wait_indexed(address: str, points: int, database: Path, timeout: float) -> None:
    """Until every memory has a point and the outbox is empty: the point count alone is
    reached while corrections of memories already indexed are still on their way."""
    stub = sidecar_stub(address)
    deadline = time.monotonic() + timeout
    while (
        stub.GetStats(rpb.GetStatsRequest(), timeout=10).points < points
        or outbox_depth(database) > 0
    ):
        if time.monotonic() > deadline:
            raise RuntimeError("the index never caught up with the records")
        time.sleep(0.2)


def wait_full(client: Client, timeout: float = 120) -> None:
    """Until recall answers without degrading (the breaker closes after a sidecar restart)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = client.memories.RecallMemories(
            svc.RecallMemoriesRequest(query="payment terms", limit=1), timeout=10
        )
        if not reply.degraded and reply.memories:
            return
        time.sleep(0.2)
    raise RuntimeError("recall stayed degraded after the sidecar restarted")


def ranks(
    server: ServerProcess, questions: list[Question]
) -> tuple[list[int], list[float], dict[str, int]]:
    """Rank (1-based) of each question's expected memory in its recall, 0 when absent (or the
    answer degraded); each call's latency in seconds; and the degraded answers and dropped
    candidates counted (by reason)."""
    clients = {t: server.client(t, USER) for t in {q.tenant for q in questions}}
    found, latencies = [], []
    answers: dict[str, int] = defaultdict(int)
    for question in questions:
        started = time.perf_counter()
        reply = clients[question.tenant].memories.RecallMemories(
            svc.RecallMemoriesRequest(query=question.text, limit=LIMIT), timeout=10
        )
        latencies.append(time.perf_counter() - started)
        answers["degraded"] += reply.degraded
        for dropped in reply.dropped:
            reason = svc.DropReason.Name(dropped.reason).removeprefix("DROP_REASON_").lower()
            answers[f"dropped_{reason}"] += dropped.count
        recalled = [(r.memory.key, r.memory.key_context) for r in reply.memories]
        wanted = (question.key, question.context)
        found.append(recalled.index(wanted) + 1 if wanted in recalled else 0)
    return found, latencies, dict(answers)


def scores(found: list[int]) -> dict[str, float | int]:
    n = len(found)
    return {
        "questions": n,
        **{f"recall@{k}": round(sum(1 for r in found if 0 < r <= k) / n, 4) for k in (1, 5, 10)},
        "mrr": round(sum(1 / r for r in found if r) / n, 4),
    }


def report(questions: list[Question], found: list[int]) -> dict[str, Any]:
    by_kind: dict[str, list[int]] = defaultdict(list)
    for question, rank in zip(questions, found, strict=True):
        by_kind[question.kind].append(rank)
    return {"all": scores(found), **{kind: scores(r) for kind, r in sorted(by_kind.items())}}


def quality_figures(
    modes: tuple[str, ...] = MODES, seed: int = SEED, tenants: int = TENANTS, threads: int = 4
) -> dict[str, Any]:
    """Recall@k and MRR per search mode (and per question type), and RecallMemories latency
    per mode on the same index; `make bench` can call this."""
    memories, questions = build(seed, tenants)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir, modes[0])
        address = sidecar.address
        memory = start_memory_service(
            workdir,
            TEST_JWT_SECRET,
            MEMORY_RETRIEVAL_ADDRESS=address,
            MEMORY_BREAKER_RESET_SECONDS="1",
        )
        try:
            started = time.monotonic()
            ingest(memory, memories, threads)
            wait_indexed(address, len(memories), workdir / "bench.db", timeout=600)
            ingest_seconds = time.monotonic() - started
            for n, mode in enumerate(modes):
                if n:
                    sidecar.stop()
                    sidecar = start_sidecar(workdir, mode, listen=address)
                wait_full(memory.client(questions[0].tenant, USER))
                found, latencies, answers = ranks(memory, questions)
                results[mode] = {
                    **report(questions, found),
                    "answers": answers,
                    "recall_latency": summary_ms(latencies),
                }
        finally:
            memory.stop()
            sidecar.stop()
    return {
        "benchmark": "retrieval_quality",
        "memories": len(memories),
        "corrected_memories": sum(1 for m in memories if m.old_value),
        "tenants": tenants,
        "questions": len(questions),
        "limit": LIMIT,
        "seed": seed,
        "ingest_seconds": round(ingest_seconds, 1),
        "modes": results,
    }


def table(figures: dict[str, Any]) -> str:
    """The figures as docs/benchmarks.md's Markdown table: one row per mode and question type."""
    rows = [
        "| mode | questions | recall@1 | recall@5 | recall@10 | MRR | degraded, dropped |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, by_kind in figures["modes"].items():
        answers = by_kind.get("answers", {})
        for kind, s in by_kind.items():
            if isinstance(s, dict) and "mrr" in s:
                noted = answers_text(answers) if kind == "all" else ""
                rows.append(
                    f"| {mode} ({kind}) | {s['questions']} | {s['recall@1']:.3f} | "
                    f"{s['recall@5']:.3f} | {s['recall@10']:.3f} | {s['mrr']:.3f} | {noted} |"
                )
    return "\n".join(rows)


def answers_text(answers: dict[str, int]) -> str:
    """`degraded 0` and any dropped candidates by reason: `dropped stale_revision 5`."""
    dropped = [
        f"{name.removeprefix('dropped_')} {n}"
        for name, n in sorted(answers.items())
        if name.startswith("dropped_")
    ]
    return f"degraded {answers.get('degraded', 0)}" + (
        f"; dropped {', '.join(dropped)}" if dropped else ""
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--tenants", type=int, default=TENANTS)
    parser.add_argument("--table", action="store_true", help="also print a Markdown table")
    args = parser.parse_args()
    figures = quality_figures(tuple(args.modes.split(",")), args.seed, args.tenants)
    emit(figures)
    if args.table:
        print(table(figures))


if __name__ == "__main__":
    main()
