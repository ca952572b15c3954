"""Every pod of the Deployment runs `migrate` in an init container (k8s/base/memory-service.yaml),
so several processes may migrate one PostgreSQL database at the same moment: they must queue on
the advisory lock, and every one of them must end with the schema at head."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
from sqlalchemy import Engine

from memory_service.kernel.storage.migrate import MIGRATION_LOCK, is_current, upgrade
from memory_service.unit_of_work import create_database_engine
from tests.support.servers import database_url


def migrate_in_threads(url: str, count: int, start: threading.Barrier) -> list[BaseException]:
    """`count` processes' worth of migrations, each on its own engine, released together."""
    errors: list[BaseException] = []

    def one() -> None:
        engine = create_database_engine(url)
        try:
            start.wait()
            upgrade(engine)
        except BaseException as error:  # reported to the test, not lost in the thread
            errors.append(error)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a migration never finished"
    return errors


def current(url: str) -> bool:
    engine: Engine = create_database_engine(url)
    try:
        return is_current(engine)
    finally:
        engine.dispose()


def test_replicas_migrating_one_fresh_database_together_all_succeed(tmp_path: Path) -> None:
    with database_url("postgres", tmp_path)() as url:
        count = 3
        errors = migrate_in_threads(url, count, threading.Barrier(count))
        assert errors == []
        assert current(url)


def test_a_migration_waits_while_another_holds_the_lock(tmp_path: Path) -> None:
    """Holding the lock from outside stops a migration before it reads the schema's version;
    releasing it lets the migration finish."""
    with database_url("postgres", tmp_path)() as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            done: list[list[BaseException]] = []
            worker = threading.Thread(
                target=lambda: done.append(migrate_in_threads(url, 1, threading.Barrier(1)))
            )
            worker.start()
            time.sleep(2)
            assert worker.is_alive(), "the migration ran while the lock was held"
            assert not current(url)
            holder.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
            worker.join(timeout=120)
        assert done == [[]]
        assert current(url)
