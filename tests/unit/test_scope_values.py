"""Scopes read from storage are shared frozen values: one object per scope, a bounded table."""

from __future__ import annotations

from memory_service.kernel.domain.model import Scope, ScopeType
from memory_service.kernel.storage import rows


def test_a_scope_read_twice_is_one_value_and_the_table_stays_bounded() -> None:
    first = rows.scope_of("CUSTOMER", "globex")
    assert first == Scope(ScopeType.CUSTOMER, "globex")
    assert rows.scope_of("CUSTOMER", "globex") is first
    assert rows.scope_of("USER", "globex") == Scope(ScopeType.USER, "globex")
    for n in range(rows._MAX_SCOPES + 5):
        rows.scope_of("USER", f"u{n}")
    assert len(rows._scopes) <= rows._MAX_SCOPES
    assert rows.scope_of("CUSTOMER", "globex") == first
