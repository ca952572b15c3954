"""The schema a database is at, against the release that opens it. While a new release rolls out,
the previous release's pods start on the schema the new one migrated (docs/deployment.md promises
it runs there): `migrate` leaves a schema ahead of its release alone (never downgrades) and
`serve` serves on it, each saying so in one line. A schema behind the release, with migrations
off, is refused in one line; so is a database URL whose driver is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_service.kernel.storage.migrate import inspect, upgrade
from memory_service.unit_of_work import create_database_engine
from tests.conftest import BACKENDS, memory_env
from tests.support.servers import database_url, start_server

NEWER = "0999_a_newer_release"


def run(command: str, env: dict[str, str], workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_service", command],
        env={**os.environ, **env, "PORT_FILE": str(workdir / "port")},
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    output = result.stdout + result.stderr
    assert result.returncode == code, output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path)() as url:
        yield url


def migrated_by_a_newer_release(url: str) -> None:
    """Migrated to this release's head, then stamped with a revision this release has no file
    for, as the next release's `migrate` leaves it."""
    engine = create_database_engine(url)
    try:
        upgrade(engine)
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": NEWER})
    finally:
        engine.dispose()


def revisions(url: str) -> tuple[str, ...]:
    engine = create_database_engine(url)
    try:
        return inspect(engine).revisions
    finally:
        engine.dispose()


def test_migrate_leaves_a_newer_releases_schema_alone(url: str, tmp_path: Path) -> None:
    migrated_by_a_newer_release(url)
    line = one_line(run("migrate", memory_env(url), tmp_path), 0)
    assert line.startswith("schema is ahead of this release, left as it is (at revision "), line
    assert NEWER in line
    assert revisions(url) == (NEWER,)


@pytest.mark.parametrize("auto_migrate", ["1", "0"])
def test_the_previous_release_serves_on_a_newer_releases_schema(
    url: str, auto_migrate: str, tmp_path: Path
) -> None:
    migrated_by_a_newer_release(url)
    env = memory_env(url, MEMORY_AUTO_MIGRATE=auto_migrate, LOG_FORMAT="text")
    server = start_server("memory_service", env, tmp_path)
    try:
        assert server.client("t-schema", "mara").memories is not None
    finally:
        assert server.stop() == 0
    log = server.log()
    assert "Traceback" not in log
    noted = [line for line in log.splitlines() if "ahead of this release" in line]
    assert len(noted) == 1, log
    assert NEWER in noted[0]
    assert revisions(url) == (NEWER,)


def test_a_schema_behind_with_migrations_off_is_one_line(url: str, tmp_path: Path) -> None:
    line = one_line(run("serve", memory_env(url, MEMORY_AUTO_MIGRATE="0"), tmp_path), 1)
    assert "cannot be used: the schema is not current (at revision none;" in line
    assert "MEMORY_AUTO_MIGRATE=0: run `python -m memory_service migrate` first" in line
    assert not (tmp_path / "port").exists()


@pytest.mark.parametrize("command", ["migrate", "serve"])
@pytest.mark.parametrize(
    ("scheme", "reason"),
    [
        ("postgresql+psycopg2", "(psycopg2) is not installed; use postgresql+psycopg://"),
        ("postgresql+asyncpg", "is an asyncio driver; the service needs postgresql+psycopg://"),
        ("postgresql+nosuchdriver", "unknown database driver 'postgresql+nosuchdriver'"),
    ],
)
def test_a_driver_that_cannot_be_used_is_a_configuration_error(
    command: str, scheme: str, reason: str, tmp_path: Path
) -> None:
    env = memory_env(f"{scheme}://crm:PLANTEDpw@127.0.0.1:1/crm")
    line = one_line(run(command, env, tmp_path), 2)
    assert line.startswith(
        f"memory service: configuration error: MEMORY_DATABASE_URL='{scheme}://crm:***@"
    ), line
    assert reason in line
    assert "PLANTEDpw" not in line
