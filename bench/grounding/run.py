"""Grounding both ways, through the API: the share of faithful values that apply at once (ACTIVE)
and the share of unfaithful ones kept as candidates, on the labelled cases of
`bench/grounding/` (DEV, where the rule's words were checked; TEST and HOLDOUT, written apart
from the rule by people who never read it). Each case is a user's message appended to a
conversation and a CreateMemory with the extractor's value and quote, against a memory service
in its own process on SQLite.

Budgets: >= 95 % of faithful values ACTIVE; 100 % of changed figures, identifiers, amounts,
dates, e-mail addresses, phone numbers and flipped negations CANDIDATE; >= 98 % of all
unfaithful values CANDIDATE.

    .venv/bin/python -m bench.grounding.run [--split holdout ...]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr

from bench.common import emit, start_memory_service
from bench.grounding.corpus import DEV, TEST, Case
from bench.grounding.holdout import HOLDOUT
from bench.grounding.holdout2 import HOLDOUT2
from bench.grounding.holdout3 import HOLDOUT3
from bench.grounding.holdout4 import HOLDOUT4
from tests.support.servers import TEST_JWT_SECRET

# Unfaithful kinds the rule must never let through: changed figures (amounts, dates, phone
# numbers), identifiers (e-mail addresses) and flipped negations. A changed name counts in the
# 98 %: a name for the speaker of an "I" statement cannot be checked (docs/grounding.md).
HARD_KINDS = frozenset(
    ["figure", "identifier", "amount", "date", "email", "phone", "negation_flip"]
)
# DEV: where the rule's words were checked; TEST and HOLDOUT: written apart from the rule, each
# first measured before the rule saw its failures (docs/grounding.md has those first figures).
SPLITS: dict[str, list[Case]] = {
    "dev": DEV,
    "test": TEST,
    "holdout": HOLDOUT,
    "holdout2": HOLDOUT2,
    "holdout3": HOLDOUT3,
    "holdout4": HOLDOUT4,
}
BUDGET_FAITHFUL = 0.95
BUDGET_UNFAITHFUL = 0.98


def _state(client: Any, index: int, case: Case) -> tuple[str, str]:
    message = client.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/grounding-{index}",
            message=tr.Message(speaker=pb.SPEAKER_USER, text=case.message),
        ),
        timeout=10,
    ).message.name
    created = client.memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                key=f"case_{index}",
                kind=pb.MEMORY_KIND_FACT,
            ),
            revision=pb.RevisionDraft(
                value=case.value,
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT,
                    speaker=pb.SPEAKER_USER,
                    transcript_message=message,
                    quote=case.quote,
                ),
            ),
        ),
        timeout=10,
    )
    return pb.RevisionState.Name(created.revision.state), created.revision.status_reason


def _rate(tallies: list[list[int]]) -> float:
    total = sum(t[1] for t in tallies)
    return round(sum(t[0] for t in tallies) / total, 4) if total else 0.0


def _split_figures(client: Any, name: str, cases: list[Case], first: int) -> dict[str, Any]:
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # [right, all]
    wrong: list[dict[str, str]] = []
    for index, case in enumerate(cases, start=first):
        state, reason = _state(client, index, case)
        right = (state == "REVISION_STATE_ACTIVE") is case.faithful
        tally = by_kind[f"{'faithful' if case.faithful else 'unfaithful'}/{case.kind}"]
        tally[0] += right
        tally[1] += 1
        if not right:
            wrong.append(
                {"kind": case.kind, "message": case.message, "quote": case.quote}
                | {"value": case.value, "state": state, "reason": reason}
            )
    faithful = [t for k, t in by_kind.items() if k.startswith("faithful/")]
    unfaithful = [t for k, t in by_kind.items() if k.startswith("unfaithful/")]
    hard = [t for k, t in by_kind.items() if k.startswith("unfaithful/") and k[11:] in HARD_KINDS]
    figures = {
        "faithful_applied": _rate(faithful),
        "unfaithful_refused": _rate(unfaithful),
        "hard_unfaithful_refused": _rate(hard),
    }
    return {
        "cases": len(cases),
        "faithful": sum(t[1] for t in faithful),
        "unfaithful": sum(t[1] for t in unfaithful),
        **figures,
        "met": figures["faithful_applied"] >= BUDGET_FAITHFUL
        and figures["unfaithful_refused"] >= BUDGET_UNFAITHFUL
        and figures["hard_unfaithful_refused"] == 1.0,
        "by_kind": {k: f"{t[0]}/{t[1]}" for k, t in sorted(by_kind.items())},
        "wrong": wrong,
    }


def grounding_figures(splits: tuple[str, ...] = tuple(SPLITS)) -> dict[str, Any]:
    """Every labelled set, each judged on its own; met when each meets every budget."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = start_memory_service(Path(tmp), TEST_JWT_SECRET)
        try:
            client = server.client("grounding", "rep")
            first = 0
            for name in splits:
                results[name] = _split_figures(client, name, SPLITS[name], first)
                first += len(SPLITS[name])
        finally:
            server.stop()
    return {
        "benchmark": "grounding",
        "splits": results,
        "met": all(result["met"] for result in results.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", action="append", choices=list(SPLITS))
    emit(grounding_figures(tuple(parser.parse_args().split or SPLITS)))


if __name__ == "__main__":
    main()
