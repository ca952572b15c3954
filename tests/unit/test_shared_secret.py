"""The secret the memory service and its sidecar share: required outside dev mode, created
privately and once in dev mode, compared in constant time by the sidecar."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from crmmem_runtime.settings import ConfigError, load
from crmmem_runtime.shared_secret import METADATA_KEY, SharedSecretSettings
from retrieval_service.auth import SharedSecretInterceptor


def shared_secret(dev_mode: bool, dev_path: Path) -> str:
    """What each process does at start-up (with its own dev mode and dev path)."""
    return load(SharedSecretSettings).resolve_shared_secret(dev_mode, dev_path)


@pytest.fixture(autouse=True)
def no_secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RETRIEVAL_SHARED_SECRET", raising=False)
    monkeypatch.delenv("RETRIEVAL_SHARED_SECRET_FILE", raising=False)


def test_without_a_secret_neither_process_starts_outside_dev_mode(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RETRIEVAL_SHARED_SECRET"):
        shared_secret(False, tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_a_short_or_unreadable_secret_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", "short")
    with pytest.raises(ConfigError, match="at least 32"):
        shared_secret(True, tmp_path / "s")
    monkeypatch.delenv("RETRIEVAL_SHARED_SECRET")
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="cannot be read"):
        shared_secret(False, tmp_path / "s")


def test_dev_mode_creates_one_private_secret_both_processes_agree_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data" / "retrieval-secret"
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET_FILE", str(path))
    with ThreadPoolExecutor(8) as pool:
        secrets = set(pool.map(lambda _: shared_secret(True, tmp_path / "unused"), range(16)))
    assert len(secrets) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["retrieval-secret"]  # no temp left
    assert not (tmp_path / "unused").exists()


def test_the_interceptor_admits_only_the_exact_secret() -> None:
    secret = "s" * 40
    check = SharedSecretInterceptor(secret)
    assert check.admits([(METADATA_KEY, secret)])
    assert check.admits([("other", "x"), (METADATA_KEY, secret.encode())])
    for wrong in ([], [(METADATA_KEY, "")], [(METADATA_KEY, secret[:-1])], [("x", secret)]):
        assert not check.admits(wrong)
