"""The error reasons the service returns are the ones `error_reason.proto` declares, both ways
(a client generated from the proto can switch on every reason it will ever see), and every
declared reason is described for clients in docs/errors.md."""

from __future__ import annotations

import re
from pathlib import Path

from memory_service.kernel.domain.errors import Reason

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos" / "crmmem" / "memory" / "v1" / "error_reason.proto"
DOCS = ROOT / "docs" / "errors.md"
# Declared for clients, never returned by this service. Empty today: every reason is returned.
RESERVED_FOR_CLIENTS: frozenset[str] = frozenset()


def declared() -> dict[str, int]:
    values = re.findall(r"^\s*ERROR_REASON_(\w+)\s*=\s*(\d+)\s*;", PROTO.read_text(), re.M)
    return {name: int(number) for name, number in values if name != "UNSPECIFIED"}


def used() -> set[str]:
    """Reasons the service's code names (`Reason.X`) outside the enum's own definition."""
    found: set[str] = set()
    for path in (ROOT / "memory_service").rglob("*.py"):
        found.update(re.findall(r"\bReason\.([A-Z_]+)\b", path.read_text()))
    return found


def test_every_domain_reason_is_declared_with_the_same_number() -> None:
    proto = declared()
    for reason in Reason:
        assert proto.get(reason.name) == reason.value, reason.name


def test_every_declared_reason_is_in_the_domain() -> None:
    assert set(declared()) == {reason.name for reason in Reason}


def test_every_declared_reason_is_returned_or_reserved_for_clients() -> None:
    names = {reason.name for reason in Reason}
    assert names >= RESERVED_FOR_CLIENTS
    assert names - used() == RESERVED_FOR_CLIENTS
    assert used() <= names  # a typo'd member would fail at import; this keeps the scan honest


def test_every_reason_is_documented_for_clients() -> None:
    text = DOCS.read_text()
    for reason in Reason:
        assert f"| `{reason.name}` |" in text, reason.name


def test_declared_numbers_are_unique() -> None:
    numbers = list(declared().values())
    assert len(numbers) == len(set(numbers))
