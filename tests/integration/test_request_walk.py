"""Parse once, present without rules (docs/architecture.md, "Request walk"): the create, correct,
recall and context paths, run in process under `scripts/request_walk.py`'s profiler, never
climb back up from presenting their answer into a domain rule, and no rule the transport
applied while parsing is applied again to the same values."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from scripts import request_walk

PATHS = ("CreateMemory", "CorrectMemory", "RecallMemories", "BuildContext")


@pytest.fixture(scope="module")
def walks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return request_walk.measure(tmp_path_factory.mktemp("walk"))


@pytest.mark.parametrize("rpc", PATHS)
def test_presenting_calls_no_rule(walks: dict[str, dict[str, Any]], rpc: str) -> None:
    walk = walks[rpc]
    assert walk["climbs"] == 0, walk["climbed_to"]
    assert walk["reparses"] == 0, walk["reparsed"]
    # The walk enters at the transport, reaches the domain through the app and the storage.
    assert walk["walk"].startswith("(transport > domain)")
    for layer in ("app", "domain", "storage"):
        assert layer in walk["walk"]


class _Frame(SimpleNamespace):
    """Enough of a frame for the profiler's classification."""


def _frames(*calls: tuple[str, str]) -> Iterator[Any]:
    below = None
    for module, name in calls:
        code = SimpleNamespace(co_name=name, co_qualname=name, co_argcount=0, co_kwonlyargcount=0)
        code.co_varnames = ()
        below = _Frame(f_globals={"__name__": module}, f_code=code, f_back=below, f_locals={})
        yield below


def test_the_measure_counts_a_climb_and_a_reparse() -> None:
    """The profiler itself: a rule called from the transport after the app entry is a climb,
    formatting is not, and a rule applied to the same values while parsing and again in the
    domain is a reparse."""
    walk = request_walk.Walk()
    profile = request_walk.profiler(walk)
    servicer, parse, entry, rule, present, name, climb = _frames(
        ("memory_service.memories.transport.memory_servicer", "CorrectMemory"),
        ("memory_service.kernel.domain.etags", "parse_etag"),
        ("memory_service.memories.app.memories", "correct"),
        ("memory_service.kernel.domain.etags", "parse_etag"),
        ("memory_service.memories.transport.convert", "fill_memory"),
        ("memory_service.kernel.domain.names", "memory"),
        ("memory_service.kernel.domain.rules", "state_at"),
    )
    parse.f_back = servicer
    entry.f_back = servicer
    rule.f_back = entry  # the app applies the transport's rule again: a reparse
    present.f_back = entry
    name.f_back = present  # formatting a name: not a rule
    climb.f_back = present  # a rule from the transport after the entry: a climb
    for frame in (servicer, parse, entry, rule, present, name, climb):
        profile(frame, "call", None)
    report = walk.report()
    assert report["climbed_to"] == {"kernel.domain.rules.state_at": 1}
    assert report["reparsed"] == {"kernel.domain.etags.parse_etag": 1}
