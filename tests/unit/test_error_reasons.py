"""The error reasons the service returns are the ones `error_reason.proto` declares, and every
declared reason is described for clients in docs/errors.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos" / "crmmem" / "memory" / "v1" / "error_reason.proto"
DOCS = ROOT / "docs" / "errors.md"


def declared() -> dict[str, int]:
    values = re.findall(r"^\s*ERROR_REASON_(\w+)\s*=\s*(\d+)\s*;", PROTO.read_text(), re.M)
    return {name: int(number) for name, number in values if name != "UNSPECIFIED"}


def returned() -> set[str]:
    """Reasons the service's code sets: `reason="X"` and `reason = "X"` in memory_service."""
    found: set[str] = set()
    for path in (ROOT / "memory_service").rglob("*.py"):
        found.update(re.findall(r'\breason\s*=\s*"([A-Z][A-Z_]+)"', path.read_text()))
    return found


def test_every_reason_the_service_returns_is_declared() -> None:
    assert returned() - set(declared()) == set()


def test_declared_numbers_are_unique() -> None:
    numbers = list(declared().values())
    assert len(numbers) == len(set(numbers))


def test_every_declared_reason_is_documented_for_clients() -> None:
    text = DOCS.read_text()
    for name in declared():
        assert f"| `{name}` |" in text, name
