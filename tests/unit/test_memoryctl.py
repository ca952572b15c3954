"""memoryctl without a server: where its development token's key comes from, and what it needs
installed. The calls themselves are tested end to end (tests/e2e/test_memoryctl.py,
tests/e2e/test_first_hour.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jwt
import pytest

from memory_service.memoryctl import connection

ROOT = Path(__file__).parents[2]
KEY = "k" * 64


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A shell in an empty folder with none of memoryctl's variables set."""
    for name in ("MEMORY_TOKEN", "MEMORY_JWT_SECRET", "MEMORY_DATA_DIR", "MEMORY_TENANT"):
        monkeypatch.delenv(name, raising=False)
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return tmp_path


def claims(token: str) -> dict[str, object]:
    return dict(jwt.decode(token, KEY, algorithms=["HS256"], audience="crmmem.memory"))


def test_outside_the_checkout_it_signs_with_the_checkouts_development_key(
    shell: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run` keeps its key in the checkout's data folder; memoryctl installed from that
    checkout finds it from any folder."""
    checkout_data = shell / "checkout" / "data"
    checkout_data.mkdir(parents=True)
    (checkout_data / "dev-jwt-secret").write_text(KEY + "\n")
    monkeypatch.setattr(connection, "checkout_data_dir", lambda: checkout_data)
    found = connection.find_credentials()
    assert claims(found.token)["sub"] == "mara"
    assert str(checkout_data / "dev-jwt-secret") in found.origin
    assert "MEMORY_DATA_DIR" in found.advice


def test_memory_data_dir_names_the_key_and_nothing_else_is_tried(
    shell: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = shell / "service-data"
    service.mkdir()
    (service / "dev-jwt-secret").write_text(KEY)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(service))
    monkeypatch.setenv("MEMORY_TENANT", "globex")
    assert claims(connection.find_credentials().token)["tenant"] == "globex"
    monkeypatch.setenv("MEMORY_DATA_DIR", str(shell / "nowhere"))
    with pytest.raises(connection.Refused, match="no token: set MEMORY_TOKEN"):
        connection.find_credentials()


def test_with_no_key_anywhere_it_says_what_to_set_and_makes_none(
    shell: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "checkout_data_dir", lambda: None)
    with pytest.raises(connection.Refused) as refused:
        connection.find_credentials()
    assert "MEMORY_TOKEN" in str(refused.value)
    assert "MEMORY_DATA_DIR" in str(refused.value)
    assert list(shell.rglob("*")) == [shell / "somewhere"]  # no key, no data folder


def test_memory_token_is_sent_as_it_is(shell: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_TOKEN", "given")
    assert connection.find_credentials() == connection.Credentials("given", "MEMORY_TOKEN")


def test_memoryctl_needs_no_table_library() -> None:
    """memoryctl ships with the memory service alone, whose dependencies do not include rich
    (installed here only through the sidecar's model-export extra): it must run without it."""
    script = (
        "import sys; sys.modules['rich'] = None; "
        "from memory_service import cli; cli.parser().parse_args(['about', 'x'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    dependencies = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[0]
    assert "rich" not in dependencies


def test_it_looks_for_the_file_the_service_keeps_its_key_in(tmp_path: Path) -> None:
    from memory_service.config import dev_secret

    made = dev_secret(tmp_path)
    assert (tmp_path / connection.DEV_SECRET_FILE).read_text().strip() == made
