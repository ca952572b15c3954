"""The layer check of `make lint` passes on this tree and catches each kind of violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False
    )


def package(tmp_path: Path, files: dict[str, str]) -> Path:
    for layer in ("transport", "app", "domain"):
        (tmp_path / "memory_service" / layer).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = tmp_path / "memory_service" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


TRANSPORT_FORBIDDEN = [
    "from memory_service.domain.memory_writes import MemoryUseCases\n",
    "from memory_service.domain.tasks import TaskUseCases\n",
    "from memory_service.domain.ports import UnitOfWork\n",
    "from memory_service.app.transactions import Transactions\n",
    "from ..app.transactions import Answer\n",
    "from memory_service.app.memories import Transactions\n",
    "from memory_service.domain import memory_writes\n",
    "import memory_service.domain.overrides\n",
    "from memory_service.domain.authorization import require_admin\n",
    "def f():\n    from memory_service.domain.context import ContextBuilder\n",
]


def test_this_tree_keeps_the_layer_rules() -> None:
    result = check(ROOT)
    assert result.returncode == 0, result.stdout


def test_a_clean_package_passes(tmp_path: Path) -> None:
    root = package(
        tmp_path,
        {
            "transport/a.py": (
                "import grpc\nfrom memory_service.app import x\n"
                "from memory_service.domain import names\n"
                "from memory_service.domain.memory_requests import RevisionDraft\n"
                "from memory_service.app.transactions import RequestKey\n"
            ),
            "app/b.py": "from memory_service.domain.ports import Search\n",
            "domain/c.py": "from __future__ import annotations\nimport re\nfrom . import d\n",
        },
    )
    assert check(root).returncode == 0


@pytest.mark.parametrize(
    ("name", "text", "reported"),
    [
        ("transport/a.py", "from memory_service.storage import models\n", "storage"),
        ("transport/a.py", "from memory_service import adapters\n", "adapters"),
        ("transport/a.py", "def f():\n    import memory_service.storage.repositories\n", "storage"),
        ("app/b.py", "import grpc\n", "grpc"),
        ("app/b.py", "from memory_service.storage.unit_of_work import X\n", "storage"),
        ("app/b.py", "from ..transport import convert\n", "transport"),
        ("domain/c.py", "import sqlalchemy\n", "sqlalchemy"),
        (
            "domain/c.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import grpc\n",
            "grpc",
        ),
        ("domain/c.py", "from memory_service.app import transactions\n", "app"),
        ("domain/sub/c.py", "import ijson\n", "ijson"),
    ],
)
def test_each_rule_catches_a_violation(tmp_path: Path, name: str, text: str, reported: str) -> None:
    result = check(package(tmp_path, {name: text}))
    assert result.returncode == 1
    assert reported in result.stdout
    assert name.split("/")[-1] in result.stdout


@pytest.mark.parametrize("text", TRANSPORT_FORBIDDEN)
def test_transport_reaches_the_domain_only_through_app(tmp_path: Path, text: str) -> None:
    """A servicer that opens a unit of work or calls a domain use case itself is refused:
    reads and writes go through one app/ entry (docs/architecture.md)."""
    result = check(package(tmp_path, {"transport/servicer.py": text}))
    assert result.returncode == 1
    assert "servicer.py" in result.stdout
    assert "transport imports memory_service." in result.stdout
