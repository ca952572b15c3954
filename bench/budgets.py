"""`make bench`: every performance budget in one table (figure, budget, measured, met), then the
JSON of every bench behind it. Each bench module exposes a function returning a dict; this
script runs them with their default settings (both services as separate processes, through
gRPC, SQLite) and reads the figures out. The load average is recorded before and after each
bench: on a shared machine it says how much to trust a latency.

    .venv/bin/python -m bench.budgets            # the full sizes (about 20 min on 2 cores)
    .venv/bin/python -m bench.budgets --quick    # small sizes, a sanity check of the benches

A bench whose module is not in the tree (the retrieval-quality bench until it lands) or that
fails is reported as "not measured" with the reason, and the others still run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.common import machine
from retrieval_service.config import RetrievalSettings


@dataclass(frozen=True)
class Bench:
    """One bench: where its function lives and the arguments for a full and a quick run."""

    name: str
    module: str
    function: str
    full: dict[str, Any]
    quick: dict[str, Any]


BENCHES = [
    Bench("correction", "bench.correction_bench", "run", {}, {"corrections": 300}),
    Bench("context", "bench.context_bench", "run", {}, {"users": 5, "calls": 200}),
    Bench(
        "recall",
        "bench.recall_bench",
        "run",
        {},
        {"memories": 2000, "tenants": 10, "queries": 200, "ingest_memories": 300},
    ),
    Bench("vector", "bench.vector_engine_bench", "run", {}, {"points": 50_000}),
    Bench("ingest", "bench.ingest_bench", "ingest_bench", {}, {"seconds": 3, "sustain_seconds": 5}),
    Bench("quality", "bench.quality.run", "quality_figures", {}, {"tenants": 2}),
    Bench("embedding", "bench.embedding_bench", "embedding_bench", {}, {"queries": 50}),
    Bench("grounding", "bench.grounding.run", "grounding_figures", {}, {}),
    Bench(
        "secrets",
        "bench.secret_refusals.run",
        "secret_refusal_figures",
        {},
        {"crm": 2000, "cards": 500},
    ),
]


@dataclass(frozen=True)
class Figure:
    """A row of the table: `measure` reads (measured text, met) from the bench's dict."""

    name: str
    budget: str
    bench: str
    measure: Callable[[dict[str, Any]], tuple[str, bool | None]]


def _get(result: dict[str, Any], *path: str) -> Any:
    for key in path:
        result = result[key]
    return result


def _p95(*path: str, limit: float | None = None) -> Callable[[dict[str, Any]], Any]:
    """p50/p95 of the summary at `path`; met when p95 <= `limit` (None: no budget)."""

    def measure(result: dict[str, Any]) -> tuple[str, bool | None]:
        figures = _get(result, *path)
        text = f"p50 {figures['p50_ms']:.1f} / p95 {figures['p95_ms']:.1f} ms"
        return text, None if limit is None else figures["p95_ms"] <= limit

    return measure


def _recall(result: dict[str, Any]) -> tuple[str, bool | None]:
    text, met = _p95("recall", limit=15)(result)
    degraded = result["recall_degraded"]
    sized = f"{result['memories']:,} memories / {result['tenants']} tenants"
    judged = result["memories"] >= 100_000 and result["tenants"] >= 100
    return f"{text}, {degraded} degraded ({sized})", (
        bool(met) and degraded == 0
    ) if judged else None


def _down(result: dict[str, Any]) -> tuple[str, bool | None]:
    """Met only when every hung caller waited for the hang and was answered within its deadline
    + 5 ms (with a deadline of its own, and without one: the service's recall timeout), and all
    the wanted breaker-open calls were answered within 2 ms at p95."""
    down = result["recall_sidecar_down"]
    hung, after = down["hung"], down["breaker_open"]
    waited = [hung["with_deadline_ms"], hung["without_deadline_ms"]]
    limits = [hung["deadline_ms"], hung["recall_timeout_ms"]]
    counted = sum(len(group) for group in waited)
    parts = [
        f"hung, {counted} of {hung['callers']} callers waited"
        f" ({hung['refused_by_open_breaker']} refused by an open breaker,"
        f" {hung['missed_deadline']} missed their deadline)"
    ]
    met = counted == hung["callers"] and hung["missed_deadline"] == 0
    for group, limit, name in zip(waited, limits, ["with", "without"], strict=True):
        if group:
            parts.append(f"{name} a deadline slowest {max(group):.0f} ms of {limit:.0f} + 5 ms")
            met = met and max(group) <= limit + 5
        else:
            met = False
    wanted = down["breaker_open_calls_wanted"]
    if after:
        cpu = down["breaker_open_server_cpu_ms_per_call"]
        parts.append(
            f"breaker open p95 {after['p95_ms']:.1f} ms over {after['count']} calls"
            f" (server CPU {cpu:.2f} ms a call)"
        )
        met = met and after["p95_ms"] <= 2 and after["count"] >= wanted
    else:
        parts.append("breaker open: no call refused by it")
        met = False
    return "; ".join(parts), met


def _ingest_fallback(result: dict[str, Any]) -> tuple[str, bool | None]:
    ingest = result["ingest"]
    lag = ingest["index_lag"]
    lag_text = f"index lag p95 {lag['p95_ms'] / 1000:.2f} s" if isinstance(lag, dict) else lag
    threads = ingest["client_threads"]
    text = f"{ingest['memories_per_s']:.0f}/s with {threads} threads, one memory a call; {lag_text}"
    return text, None  # the budget is for batched writes (the rows above)


def _ingest(key: str, limit: float) -> Callable[[dict[str, Any]], tuple[str, bool | None]]:
    def measure(result: dict[str, Any]) -> tuple[str, bool | None]:
        per_s = result[key]["per_s"]
        return f"{per_s:.0f} memories/s", per_s >= limit

    return measure


def _lag_text(sustained: dict[str, Any]) -> str | None:
    """A sustained run's lag p95 and rate, its sidecar's CPU a memory and how many memories
    never reached the index, if any; None when the index never caught up."""
    p95 = sustained.get("index_lag_p95_ms")
    if p95 is None:
        return None
    cpu = (sustained.get("cpu_ms_per_memory") or {}).get("sidecar")
    spent = f", sidecar CPU {cpu:.2f} ms a memory" if cpu is not None else ""
    indexed, written = sustained.get("indexed"), sustained.get("memories")
    partly = f" ({indexed} of {written} indexed)" if indexed != written else ""
    rate = sustained.get("achieved_per_s", 0)
    return f"p95 {p95 / 1000:.2f} s at {rate:.0f}/s{spent}{partly}"


def _lag(result: dict[str, Any]) -> tuple[str, bool | None]:
    text = _lag_text(result["sustained"])
    if text is None:
        return "index never caught up", False
    return text, bool(result["met"]["index_lag"])


def _lag_int8(result: dict[str, Any]) -> tuple[str, bool | None]:
    """The opt-in int8 model's lag: shown beside the default's, never judged as the budget."""
    sustained = result.get("sustained_int8")
    if not sustained:
        return "not measured", None
    if "missing" in sustained:
        return f"not measured: {sustained['missing']}", None
    return _lag_text(sustained) or "index never caught up", None


def _vector(result: dict[str, Any]) -> tuple[str, bool | None]:
    edge = result["qdrant-edge"]
    text, met = _p95("qdrant-edge", "search", limit=5)(result)
    judged = edge["points"] >= 1_000_000  # the budget is for 1M points: a quick run only shows
    return f"{text} ({edge['points']:,} points)", met if judged else None


def _quality(result: dict[str, Any]) -> tuple[str, bool | None]:
    from bench.quality.run import answers_text  # the bench's own module, loaded once it ran

    parts = []
    for mode, figures in result["modes"].items():
        overall = figures["all"]
        answers = answers_text(figures.get("answers", {}))
        parts.append(f"{mode} R@10 {overall['recall@10']:.3f} MRR {overall['mrr']:.3f} ({answers})")
    best = max(result["modes"], key=lambda mode: _quality_rank(result["modes"][mode]["all"]))
    default = RetrievalSettings.model_fields["search_mode"].default
    parts.append(f"the sidecar's default: {default}; the best here: {best}")
    return "; ".join(parts), default == best


def _quality_rank(overall: dict[str, float]) -> tuple[float, float]:
    """The budget's rule: the default must find the most expected memories in the first ten,
    MRR breaking ties."""
    return overall["recall@10"], overall["mrr"]


def _embedding(result: dict[str, Any]) -> tuple[str, bool | None]:
    """Per short query, one model thread: each runtime the sidecar can run."""
    parts = []
    for name, figures in result["runtimes"].items():
        query = figures["query_1_thread"]
        parts.append(f"{name} p50 {query['p50_ms']:.1f} / p95 {query['p95_ms']:.1f} ms")
    return "; ".join(parts), None


def _document_embedding(result: dict[str, Any]) -> tuple[str, bool | None]:
    """Batches of 64 memory-sized texts on one and on two threads (ONNX: two one-thread passes
    side by side): why documents being indexed get two (`RETRIEVAL_DOCUMENT_THREADS`) while
    queries keep one."""
    parts = []
    for name, figures in result["runtimes"].items():
        one, two = figures["batch_1_thread"], figures["batch_2_thread"]
        parts.append(
            f"{name} {one['texts_per_s']:.0f} / {two['texts_per_s']:.0f} per s "
            f"(CPU {one['cpu_ms_per_text']:.2f} / {two['cpu_ms_per_text']:.2f} ms a text)"
        )
    return "; ".join(parts), None


def _grounding(result: dict[str, Any]) -> tuple[str, bool | None]:
    """Both directions of the grounding rule, on each labelled set."""
    parts = [
        f"{name}: {split['faithful_applied']:.1%} of {split['faithful']} faithful ACTIVE, "
        f"{split['unfaithful_refused']:.1%} of {split['unfaithful']} unfaithful CANDIDATE "
        f"({split['hard_unfaithful_refused']:.0%} of changed figures, ids, negations)"
        for name, split in result["splits"].items()
    ]
    return "; ".join(parts), bool(result["met"])


def _secret_refusals(result: dict[str, Any]) -> tuple[str, bool | None]:
    false, cards = result["false_refusal_rate"], result["cards_refused_rate"]
    text = (
        f"{false:.2%} of {result['crm_texts']:,} CRM texts with ids refused; "
        f"{cards:.1%} of {result['card_texts']:,} card numbers refused"
    )
    return text, false <= 0.001 and cards == 1.0


FIGURES = [
    Figure("Recall, 100k memories / 100 tenants", "p95 <= 15 ms, 0 degraded", "recall", _recall),
    Figure(
        "Recall, each tenant's first after a start",
        "(part of recall)",
        "recall",
        _p95("recall_first_of_tenant"),
    ),
    Figure(
        "Recall, each other caller's first after a start",
        "(part of recall)",
        "recall",
        _p95("recall_first_of_caller"),
    ),
    Figure("Sidecar Search alone", "(part of recall)", "recall", _p95("sidecar_search_alone")),
    Figure("Recall with the sidecar down", "deadline + 5 ms; <= 2 ms once open", "recall", _down),
    Figure("BuildContext, no query", "p95 <= 5 ms", "context", _p95("without_query", limit=5)),
    Figure("BuildContext with a query", "(none)", "context", _p95("with_query")),
    Figure("CorrectMemory", "p95 <= 10 ms", "correction", _p95("correction", limit=10)),
    Figure("Ingest, 1 client (batched)", ">= 400 memories/s", "ingest", _ingest("one_client", 400)),
    Figure("Ingest, 4 clients", ">= 1,000 memories/s", "ingest", _ingest("four_clients", 1000)),
    Figure("Index lag while sustaining 400/s", "p95 <= 2 s", "ingest", _lag),
    Figure("Index lag at 400/s, int8 model (opt-in)", "(not the default)", "ingest", _lag_int8),
    Figure("Ingest, CreateMemory one at a time", "(none)", "recall", _ingest_fallback),
    Figure("Embedded engine search, 1M points", "p95 <= 5 ms", "vector", _vector),
    Figure("Retrieval quality (recall@10, MRR)", "hybrid vs dense; the default the best", "quality",
           _quality),
    Figure("Grounding, faithful / unfaithful", ">= 95 % / >= 98 % (hard classes 100 %)",
           "grounding", _grounding),
    Figure("Secret rule, false refusals / cards", "<= 0.1 % / 100 %", "secrets",
           _secret_refusals),
    Figure("Query embedding, 1 thread", "(part of recall)", "embedding", _embedding),
    Figure("Document embedding, 64 a batch, 1 / 2 threads", "(part of index lag)", "embedding",
           _document_embedding),
]  # fmt: skip


def run_benches(quick: bool, only: set[str]) -> dict[str, Any]:
    """Each bench's dict (or why it is missing), with the load average around it."""
    results: dict[str, Any] = {}
    for bench in BENCHES:
        if only and bench.name not in only:
            continue
        try:
            module = importlib.import_module(bench.module)
        except ModuleNotFoundError as missing:
            if missing.name and bench.module.startswith(missing.name):
                results[bench.name] = {"missing": f"{bench.module} is not in this tree"}
                continue
            raise
        before, started = os.getloadavg(), time.monotonic()
        print(f"bench {bench.name} (load {before[0]:.1f}) ...", file=sys.stderr, flush=True)
        try:
            result = getattr(module, bench.function)(**(bench.quick if quick else bench.full))
        except Exception as error:  # one broken bench must not cost the rest of the table
            print(f"bench {bench.name} failed: {error!r}", file=sys.stderr, flush=True)
            results[bench.name] = {"missing": f"failed: {type(error).__name__}"}
            continue
        results[bench.name] = {
            **result,
            "bench_seconds": round(time.monotonic() - started, 1),
            "load_average": {"before": before, "after": os.getloadavg()},
        }
    return results


def table(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for figure in FIGURES:
        result = results.get(figure.bench)
        if result is None:
            continue
        if "missing" in result:
            measured, met = f"not measured: {result['missing']}", None
        else:
            measured, met = figure.measure(result)
            loads = result["load_average"]
            measured += f" [load {loads['before'][0]:.1f}→{loads['after'][0]:.1f}]"
        rows.append(
            {"figure": figure.name, "budget": figure.budget, "measured": measured, "met": met}
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    mark = {True: "yes", False: "**no**", None: "-"}
    lines = ["| figure | budget | measured | met |", "|---|---|---|---|"]
    lines += [
        f"| {r['figure']} | {r['budget']} | {r['measured']} | {mark[r['met']]} |" for r in rows
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a sanity check)")
    parser.add_argument("--only", default="", help="comma-separated bench names")
    args = parser.parse_args()
    started = time.monotonic()
    results = run_benches(args.quick, {n for n in args.only.split(",") if n})
    rows = table(results)
    print(markdown(rows))
    print()
    document = {
        "benchmark": "budgets",
        "quick": args.quick,
        "seconds": round(time.monotonic() - started, 1),
        "machine": machine(),
        "table": rows,
        "results": results,
    }
    print(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
