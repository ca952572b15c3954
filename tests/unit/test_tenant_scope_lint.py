"""The lint line of `make lint` that keeps statements on tenant tables inside the scoped helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.check_tenant_scope import ROOT, check_source, main, violations

VIOLATIONS = {
    "select": "from sqlalchemy import select\nselect(MemoryRow.id)",
    "aliased builder": "from sqlalchemy import update as u\nu(RevisionRow).values(x=1)",
    "module builder": "import sqlalchemy as sa\nsa.delete(OutboxRow)",
    "builder without its import": "delete(OverrideRow).where(OverrideRow.id == 1)",
    "submodule builder": "from sqlalchemy.sql import expression\nexpression.insert(ImportItemRow)",
    "aggregate": "from sqlalchemy import func, select\nselect(func.count(CustomerRow.customer_id))",
    "model in a keyword": "from sqlalchemy import select\nselect(whereclause=MemoryRow.id == 1)",
    "table method": "MemoryRow.__table__.delete()",
    "ORM row": "session.add(OverrideRow(id='x', tenant_id='t'))",
    "ORM query": "session.query(MessageRow).all()",
    "ORM get": "session.get(ConversationRow, ('t', 'u', 'c'))",
    "raw text": "from sqlalchemy import text\ntext('DELETE FROM memory_revisions')",
    "driver SQL": "connection.exec_driver_sql('UPDATE idempotency_keys SET response = NULL')",
}

ALLOWED = {
    "scoped helper": "self._session.execute(self._update(MemoryRow).where(MemoryRow.id == 'x'))",
    "all tenants": "everyone.session.execute(everyone.delete(OutboxRow))",
    "non-tenant select": "from sqlalchemy import select, literal\nselect(literal(1))",
    "raw SQL on no tenant table": "connection.exec_driver_sql('SELECT 1')",
    "text about memories": "print('memories')",
}


@pytest.mark.parametrize("source", VIOLATIONS.values(), ids=VIOLATIONS.keys())
def test_a_statement_on_a_tenant_table_outside_the_helper_is_reported(source: str) -> None:
    found = check_source(source, "memory_service/x.py")
    assert len(found) == 1
    assert found[0].startswith("memory_service/x.py:")


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_the_scoped_helpers_and_unrelated_code_pass(source: str) -> None:
    assert check_source(source, "memory_service/x.py") == []


def test_the_service_builds_every_tenant_statement_in_the_helper() -> None:
    assert violations([ROOT / "memory_service"]) == []


def test_the_command_fails_on_a_violation_and_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "repository.py"
    module.write_text("from sqlalchemy import update\n\n\nupdate(MemoryRow).values(version=2)\n")
    assert main([str(module)]) == 1
    assert f"{module}:4: update() on MemoryRow" in capsys.readouterr().out
    module.write_text("x = 1\n")
    assert main([str(module)]) == 0
