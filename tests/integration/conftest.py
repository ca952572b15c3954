"""Real databases for storage tests: a fresh SQLite file and a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from memory_service.kernel.storage.migrate import upgrade
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.conftest import BACKENDS
from tests.support.servers import database_url


@pytest.fixture(params=BACKENDS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with database_url(request.param, tmp_path)() as url:
        engine = create_database_engine(url)
        upgrade(engine)
        yield engine
        engine.dispose()


@pytest.fixture
def units(engine: Engine) -> SqlUnitOfWorkFactory:
    return SqlUnitOfWorkFactory(engine, check_scope=True)
