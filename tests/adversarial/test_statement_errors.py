"""A failed SQL statement never carries its parameters (memory text) into an error or a log."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, StatementError

from crmmem_runtime.telemetry import failure_summary
from memory_service.unit_of_work import create_database_engine
from tests.conftest import BACKENDS
from tests.support.servers import database_url

SECRET_TEXT = "the vault code is 4417"


@pytest.mark.parametrize("backend", BACKENDS)
def test_statement_errors_hide_their_parameters(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path)() as url:
        engine = create_database_engine(url)
        try:
            with engine.connect() as connection, pytest.raises(StatementError) as caught:
                connection.execute(
                    text("SELECT no_such_column FROM no_such_table WHERE x = :value"),
                    {"value": SECRET_TEXT},
                )
        finally:
            engine.dispose()
    assert isinstance(caught.value, DBAPIError)
    assert SECRET_TEXT not in str(caught.value)
    assert "parameters hidden" in str(caught.value)


def test_unexpected_failures_are_logged_without_their_messages() -> None:
    """An exception's message can quote the request; the log keeps types and code locations."""

    def fails(value: str) -> None:
        try:
            int(value)
        except ValueError as error:
            raise RuntimeError(f"could not store {value}") from error

    with pytest.raises(RuntimeError) as caught:
        fails(SECRET_TEXT)
    summary = failure_summary(caught.value)
    assert SECRET_TEXT not in summary
    assert "RuntimeError at fails" in summary
    assert "caused by ValueError" in summary
