"""Settings: the dev key is written whole, once, and readable by its owner only; defaults,
flags and errors read as they did before the settings were typed."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from crmmem_runtime.settings import ConfigError
from memory_service.config import Settings, dev_secret
from retrieval_service.config import RetrievalSettings
from scripts.settings_table import variables


def test_concurrent_first_starts_agree_on_one_private_dev_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: dev_secret(data), range(16)))
    assert len(keys) == 1
    assert stat.S_IMODE((data / "dev-jwt-secret").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert [p.name for p in data.iterdir()] == ["dev-jwt-secret"]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No setting from the outer environment; the working directory is a fresh folder."""
    for name in [*variables(Settings), *variables(RetrievalSettings)]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_JWT_SECRET", "j" * 40)
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", "r" * 40)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_data_folders_are_absolute_even_by_default(clean_env: pytest.MonkeyPatch) -> None:
    """The processes may change directory later; a relative default would move with it."""
    memory, sidecar = Settings.from_env(), RetrievalSettings.from_env()
    assert memory.data_dir == Path.cwd() / "data"
    assert memory.database_url == f"sqlite:///{Path.cwd() / 'data' / 'memory.db'}"
    assert sidecar.data_dir == Path.cwd() / "data" / "retrieval"


def test_flags_read_as_before_and_refuse_other_words(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MEMORY_AUTO_MIGRATE", "")  # empty: the default
    clean_env.setenv("MEMORY_OUTBOX_WORKER", "No")
    clean_env.setenv("MEMORY_APPLY_USER_CORRECTIONS", " on ")
    settings = Settings.from_env()
    assert settings.auto_migrate is True
    assert settings.outbox_worker is False
    assert settings.apply_user_corrections is True
    clean_env.setenv("MEMORY_IMPORT_WORKER", "disabled")
    with pytest.raises(ConfigError, match="MEMORY_IMPORT_WORKER='disabled'"):
        Settings.from_env()


def test_search_can_be_turned_off_and_milliseconds_become_seconds(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("MEMORY_RETRIEVAL_ADDRESS", "None")
    clean_env.setenv("MEMORY_RECALL_TIMEOUT_MS", "250")
    settings = Settings.from_env()
    assert settings.retrieval_address == ""
    assert settings.retrieval_secret == ""
    assert settings.recall_timeout_seconds == 0.25


def test_a_secret_is_never_quoted_in_the_error(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MEMORY_DATABASE_URL", "mysql://user:hunter2@db/memory")
    with pytest.raises(ConfigError) as raised:
        Settings.from_env()
    assert "hunter2" not in str(raised.value)
    assert "MEMORY_DATABASE_URL" in str(raised.value)


def test_a_recall_timeout_the_reply_margin_would_eat_is_refused(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("MEMORY_RECALL_TIMEOUT_MS", "150")
    with pytest.raises(ConfigError, match="MEMORY_RECALL_TIMEOUT_MS=150 must be at least four"):
        Settings.from_env()
    clean_env.setenv("MEMORY_RECALL_MARGIN_MS", "30")
    assert Settings.from_env().recall_timeout_seconds == 0.15
