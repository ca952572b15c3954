"""Shared fixtures: real memory-service processes on SQLite and PostgreSQL, one tenant per test."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.otlp import OtlpCollector
from tests.support.servers import (
    TEST_JWT_SECRET,
    TEST_RETRIEVAL_SECRET,
    ServerProcess,
    database_url,
    start_server,
)

BACKENDS = ["sqlite", "postgres"]


def memory_env(db_url: str, **extra: str) -> dict[str, str]:
    """Search is off unless a test wires a sidecar in. No shutdown drain window: nothing polls
    the test servers' health, and the tests that stop servers stay fast."""
    return {
        "MEMORY_DATABASE_URL": db_url,
        "MEMORY_LISTEN": "127.0.0.1:0",
        "MEMORY_JWT_SECRET": TEST_JWT_SECRET,
        "MEMORY_DEV_MODE": "0",
        "MEMORY_RETRIEVAL_ADDRESS": "none",
        "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
        "MEMORY_SHUTDOWN_DRAIN_SECONDS": "0",
        **extra,
    }


@pytest.fixture(scope="session", params=BACKENDS)
def memory_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One memory service per database backend for the whole session; tests isolate by tenant."""
    backend: str = request.param
    workdir = tmp_path_factory.mktemp(f"memory-{backend}")
    with database_url(backend, workdir)() as url:
        server = start_server("memory_service", memory_env(url), workdir)
        yield server
        server.stop()


@pytest.fixture
def tenant() -> str:
    """A fresh tenant id, so tests sharing a server never see each other's data."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def fresh_memory_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """A private memory service on SQLite for tests that stop or restart it."""
    with database_url("sqlite", tmp_path)() as url:
        server = start_server("memory_service", memory_env(url), tmp_path)
        yield server
        server.stop()


def retrieval_env(workdir: Path, listen: str = "127.0.0.1:0", **extra: str) -> dict[str, str]:
    return {
        "RETRIEVAL_LISTEN": listen,
        "RETRIEVAL_DATA_DIR": str(workdir / "retrieval"),
        "RETRIEVAL_SHUTDOWN_DRAIN_SECONDS": "0",
        "HF_HUB_OFFLINE": "1",
        "RETRIEVAL_SHARED_SECRET": TEST_RETRIEVAL_SECRET,
        **extra,
    }


def start_retrieval(workdir: Path, **env: str) -> ServerProcess:
    return start_server(
        "retrieval_service", retrieval_env(workdir, **env), workdir, startup_timeout=180
    )


@contextlib.contextmanager
def memory_with_own_sidecar(
    backend: str, workdir: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """A memory service at default settings with a sidecar of its own, for tests that stop,
    hang or wipe the sidecar. A sidecar a test suspended is resumed before it is stopped."""
    sidecar = start_retrieval(workdir / "sidecar")
    try:
        with database_url(backend, workdir)() as url:
            memory = start_server(
                "memory_service",
                memory_env(url, MEMORY_RETRIEVAL_ADDRESS=sidecar.address),
                workdir / "memory",
            )
            try:
                yield memory, sidecar
            finally:
                memory.stop()
    finally:
        if sidecar.process.poll() is None:
            os.kill(sidecar.process.pid, signal.SIGCONT)
        sidecar.stop()


@pytest.fixture(scope="session")
def otlp() -> Iterator[OtlpCollector]:
    collector = OtlpCollector()
    yield collector
    collector.stop()


@pytest.fixture(scope="session")
def retrieval_server(
    tmp_path_factory: pytest.TempPathFactory, otlp: OtlpCollector
) -> Iterator[ServerProcess]:
    """One sidecar with the real model and the embedded engine, shared by the recall tests."""
    server = start_retrieval(tmp_path_factory.mktemp("retrieval"), **otlp.env())
    yield server
    server.stop()


@pytest.fixture(scope="session", params=BACKENDS)
def recall_server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    retrieval_server: ServerProcess,
    otlp: OtlpCollector,
) -> Iterator[ServerProcess]:
    """A memory service wired to the shared sidecar, per database backend."""
    backend: str = request.param
    workdir = tmp_path_factory.mktemp(f"recall-{backend}")
    with database_url(backend, workdir)() as url:
        env = memory_env(
            url,
            MEMORY_RETRIEVAL_ADDRESS=retrieval_server.address,
            MEMORY_RECALL_TIMEOUT_MS="3000",
            MEMORY_OUTBOX_POLL_SECONDS="0.05",
            MEMORY_INDEX_CHECK_SECONDS="0.5",
            **otlp.env(),
        )
        server = start_server("memory_service", env, workdir)
        yield server
        server.stop()
