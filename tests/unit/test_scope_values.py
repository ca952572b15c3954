"""Scopes read from storage are shared frozen values: one object per scope, a bounded table."""

from __future__ import annotations

from memory_service.domain.model import Scope, ScopeType
from memory_service.storage import repositories


def test_a_scope_read_twice_is_one_value_and_the_table_stays_bounded() -> None:
    first = repositories._scope("CUSTOMER", "globex")
    assert first == Scope(ScopeType.CUSTOMER, "globex")
    assert repositories._scope("CUSTOMER", "globex") is first
    assert repositories._scope("USER", "globex") == Scope(ScopeType.USER, "globex")
    for n in range(repositories._MAX_SCOPES + 5):
        repositories._scope("USER", f"u{n}")
    assert len(repositories._scopes) <= repositories._MAX_SCOPES
    assert repositories._scope("CUSTOMER", "globex") == first
