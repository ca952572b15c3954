"""SQLite keeps times as text and `UtcDateTime` reads them into aware UTC datetimes itself (the
hot reads decode a few hundred per call); every shape of text must read as the dialect's own
parser plus UTC would, and PostgreSQL's datetimes keep the plain path."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import DateTime
from sqlalchemy.dialects import postgresql, sqlite

from memory_service.kernel.storage.models import UtcDateTime

SQLITE = sqlite.dialect()


def _dialect_reads(text: str) -> datetime:
    parse = DateTime().dialect_impl(SQLITE).result_processor(SQLITE, None)
    assert parse is not None
    parsed: datetime = parse(text)
    return parsed.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-01 00:39:12.123456",  # as SQLAlchemy writes them
        "2026-12-01 00:39:12.000000",
        "2026-12-01 00:39:12",  # CURRENT_TIMESTAMP
        "2026-02-28 23:59:59.999999",
    ],
)
def test_sqlite_text_reads_as_the_dialect_would_in_utc(text: str) -> None:
    read = UtcDateTime().result_processor(SQLITE, None)
    value = read(text)
    assert value == _dialect_reads(text)
    assert value is not None
    assert value.tzinfo is UTC


def test_null_stays_null_on_both_databases() -> None:
    for dialect in (SQLITE, postgresql.dialect()):
        assert UtcDateTime().result_processor(dialect, None)(None) is None


def test_postgresql_datetimes_are_marked_utc() -> None:
    read = UtcDateTime().result_processor(postgresql.dialect(), None)
    assert read(datetime(2026, 12, 1, 0, 39, 12)) == datetime(2026, 12, 1, 0, 39, 12, tzinfo=UTC)
