"""Etags are quoted (AIP-154), and the bare form the service returned before is still read."""

from __future__ import annotations

import pytest

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import etag_of, parse_etag
from memory_service.kernel.domain.model import Memory, MemoryKind, Scope, ScopeType, utcnow


def memory(version: int) -> Memory:
    now = utcnow()
    return Memory(
        id="m", tenant_id="t", scope=Scope(ScopeType.USER, "u"), key="k", key_context="",
        kind=MemoryKind.FACT, version=version, create_time=now, update_time=now,
    )  # fmt: skip


def test_etags_are_quoted_strings() -> None:
    assert etag_of(memory(12)) == '"v12"'
    assert parse_etag(etag_of(memory(12)), required=True) == 12


def test_the_bare_form_issued_before_is_still_accepted() -> None:
    assert parse_etag("v12", required=True) == 12


@pytest.mark.parametrize(
    "etag",
    ["garbage", "v0", "v-1", "3", "v1x", '"v0"', '"v1', 'v1"', 'W/"v1"', "'v1'", '""', '"v 1"'],
)
def test_malformed_etags_are_rejected_on_the_field(etag: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        parse_etag(etag, required=True)
    assert error.value.violations[0].field == "etag"


def test_absent_etag_is_none_unless_required() -> None:
    assert parse_etag("", required=False) is None
    with pytest.raises(InvalidArgument):
        parse_etag("", required=True)
