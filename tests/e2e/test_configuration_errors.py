"""A bad setting stops either process at once with exit code 2 and one line on stderr naming the
variable: no traceback, nothing bound, no secret echoed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import memory_env, retrieval_env

MEMORY_CASES = [
    ("MEMORY_MAX_WORKERS", "abc", "valid integer"),
    ("MEMORY_MAX_WORKERS", "0", "greater than or equal to 1"),
    ("MEMORY_IDEMPOTENCY_TTL_HOURS", "12", "greater than or equal to 24"),
    ("MEMORY_BREAKER_FAILURE_RATE", "1.5", "less than or equal to 1"),
    ("MEMORY_RECALL_TIMEOUT_MS", "nan", "finite number"),
    ("MEMORY_RECALL_TIMEOUT_MS", "100", "at least four times MEMORY_RECALL_MARGIN_MS"),
    ("MEMORY_DEV_MODE", "maybe", "expected one of"),
    ("MEMORY_LISTEN", "50051", "host:port"),
    ("MEMORY_RETRIEVAL_ADDRESS", "sidecar", "host:port"),
    ("MEMORY_DATABASE_URL", "mysql://db/memory", "sqlite"),
    ("LOG_FORMAT", "plain", "'json' or 'text'"),
    ("OTEL_TRACES_EXPORTER", "jaeger", "unknown exporter"),
    ("MEMORY_JWT_SECRET", "short-secret-value", "at least 32"),
]

RETRIEVAL_CASES = [
    ("QDRANT_SHARDS", "0", "greater than or equal to 1"),
    ("RETRIEVAL_MODEL_THREADS", "two", "valid integer"),
    ("RETRIEVAL_EMBEDDER", "gpu", "'onnx', 'onnx-int8' or 'torch'"),
    ("RETRIEVAL_DOCUMENT_CHUNK_MS", "-1", "greater than 0"),
    ("RETRIEVAL_LISTEN", "localhost", "host:port"),
    ("QDRANT_URL", "qdrant:6334", "http://"),
    ("QDRANT_HTTPS", "sometimes", "expected one of"),
    ("OMP_WAIT_POLICY", "spin", "'PASSIVE' or 'ACTIVE'"),
    ("OTEL_METRICS_EXPORTER", "prometheus", "unknown exporter"),
    ("RETRIEVAL_SHARED_SECRET", "too-short", "at least 32"),
]


def run(module: str, env: dict[str, str], workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, "serve"],
        env={**os.environ, **env, "PORT_FILE": str(workdir / "port")},
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], variable: str, value: str, reason: str, workdir: Path
) -> None:
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "configuration error" in lines[0]
    assert variable in lines[0], lines[0]
    assert reason in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert not (workdir / "port").exists()  # it never listened
    if "SECRET" in variable:
        assert value not in lines[0]


@pytest.mark.parametrize(("variable", "value", "reason"), MEMORY_CASES)
def test_the_memory_service_refuses_a_bad_value_in_one_line(
    tmp_path: Path, variable: str, value: str, reason: str
) -> None:
    env = memory_env(f"sqlite:///{tmp_path / 'memory.db'}", **{variable: value})
    assert_one_line_error(run("memory_service", env, tmp_path), variable, value, reason, tmp_path)
    assert not (tmp_path / "memory.db").exists()


@pytest.mark.parametrize(("variable", "value", "reason"), RETRIEVAL_CASES)
def test_the_sidecar_refuses_a_bad_value_in_one_line(
    tmp_path: Path, variable: str, value: str, reason: str
) -> None:
    env = retrieval_env(tmp_path, **{variable: value})
    result = run("retrieval_service", env, tmp_path)
    assert_one_line_error(result, variable, value, reason, tmp_path)


def test_every_bad_value_is_named_at_once(tmp_path: Path) -> None:
    """An operator fixes them all in one round, not one per restart."""
    env = memory_env(
        f"sqlite:///{tmp_path / 'memory.db'}",
        MEMORY_MAX_WORKERS="-3",
        MEMORY_OUTBOX_POLL_SECONDS="soon",
        MEMORY_AUTO_MIGRATE="perhaps",
    )
    result = run("memory_service", env, tmp_path)
    assert result.returncode == 2, result
    [line] = result.stderr.strip().splitlines()
    for variable in ("MEMORY_MAX_WORKERS", "MEMORY_OUTBOX_POLL_SECONDS", "MEMORY_AUTO_MIGRATE"):
        assert variable in line


def test_the_sidecar_without_its_onnx_export_says_how_to_make_it(tmp_path: Path) -> None:
    """A missing export is an installation step left out: one line with the command, not a
    traceback from inside ONNX Runtime."""
    missing = tmp_path / "no-export"
    result = run(
        "retrieval_service", retrieval_env(tmp_path, RETRIEVAL_ONNX_DIR=str(missing)), tmp_path
    )
    assert result.returncode == 1, result
    [line] = result.stderr.strip().splitlines()
    assert str(missing) in line
    assert "make onnx" in line
    assert not (tmp_path / "port").exists()
