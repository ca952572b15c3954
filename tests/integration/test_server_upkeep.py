"""What a serving process does for its latency besides answering calls: start-up objects frozen
out of the garbage collector's full collections, and SQLite's WAL checkpointed off the request
path."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

import pytest

from memory_service.bootstrap import build_server
from memory_service.config import Settings
from memory_service.kernel.storage.checkpoint import WalCheckpointer
from memory_service.unit_of_work import create_database_engine
from tests.support.servers import TEST_JWT_SECRET, TEST_RETRIEVAL_SECRET


def test_a_started_server_froze_its_start_up_heap_and_checkpoints_its_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_JWT_SECRET", TEST_JWT_SECRET)
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", TEST_RETRIEVAL_SECRET)
    monkeypatch.setenv("MEMORY_DATABASE_URL", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setenv("MEMORY_LISTEN", "127.0.0.1:0")
    gc.unfreeze()
    server = build_server(Settings.from_env())
    try:
        assert gc.get_freeze_count() > 10_000
        assert server.checkpointer is not None
        assert any(t.name == "wal-checkpoint" for t in threading.enumerate())
    finally:
        server.stop(1)
        gc.unfreeze()
    assert not any(t.name == "wal-checkpoint" for t in threading.enumerate())


def test_the_checkpointer_copies_committed_pages_back(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'w.db'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE scratch (n INTEGER, text TEXT)")
    checkpointer = WalCheckpointer(engine, interval=0.05)
    checkpointer.checkpoint()
    before = checkpointer.checkpoints
    checkpointer.start()
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO scratch VALUES "
                + ", ".join(f"({n}, '{'x' * 200}')" for n in range(500))
            )
        deadline = time.monotonic() + 10
        while checkpointer.checkpoints == before and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        checkpointer.stop()
    assert checkpointer.checkpoints > before
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM scratch").scalar_one() == 500
    engine.dispose()


def test_only_a_sqlite_file_has_a_wal_to_checkpoint() -> None:
    assert not WalCheckpointer.wanted(create_database_engine("sqlite://"))
    assert not WalCheckpointer.wanted(create_database_engine("postgresql+psycopg://u@h/db"))
