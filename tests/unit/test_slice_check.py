"""The slice check of `make lint` passes on this tree and catches each kind of violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_slices.py"
PUBLIC = "from memory_service.memories.domain.memory_requests import RevisionDraft\n"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False
    )


def package(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {
        "memories/public.py": PUBLIC
        + "from memory_service.memories.domain.memory_writes import MemoryUseCases\n",
        "memories/domain/memory_requests.py": "class RevisionDraft: ...\n",
        "memories/domain/memory_writes.py": "class MemoryUseCases: ...\n",
        "kernel/domain/model.py": "",
        "tasks/domain/tasks.py": "",
    }
    for name, text in {**base, **files}.items():
        path = tmp_path / "memory_service" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in [path.parent, *path.parent.parents]:
            if folder == tmp_path:
                break
            (folder / "__init__.py").touch()
        path.write_text(text)
    return tmp_path


def test_this_tree_keeps_the_slice_rules() -> None:
    result = check(ROOT)
    assert result.returncode == 0, result.stdout


def test_a_clean_package_passes(tmp_path: Path) -> None:
    root = package(
        tmp_path,
        {
            "tasks/transport/a.py": (
                "import grpc\nfrom memory_service.tasks.app import x\n"
                "from memory_service.kernel.domain import model\n"
                "from memory_service.memories.public import RevisionDraft\n"
            ),
            "tasks/app/x.py": "from memory_service.kernel.domain.model import X\n",
            "tasks/domain/c.py": (
                "import re\nfrom memory_service.memories.public import MemoryUseCases\n"
            ),
        },
    )
    result = check(root)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("name", "text", "reported"),
    [
        ("tasks/transport/a.py", "from memory_service.tasks.storage import tasks\n", "storage"),
        ("tasks/transport/a.py", "import memory_service.memories.workers.outbox\n", "internals"),
        ("tasks/transport/a.py", "from memory_service.kernel.storage import scoped\n", "storage"),
        (
            "tasks/transport/a.py",
            "from memory_service.memories.public import MemoryUseCases\n",
            "use case",
        ),
        ("tasks/transport/a.py", "from memory_service import bootstrap\n", "wiring"),
        ("tasks/app/b.py", "import grpc\n", "grpc"),
        ("tasks/app/b.py", "from memory_service.tasks.transport import a\n", "transport"),
        ("tasks/domain/c.py", "import sqlalchemy\n", "sqlalchemy"),
        ("tasks/domain/c.py", "from memory_service.tasks.app import b\n", "domain imports"),
        (
            "tasks/domain/c.py",
            "from memory_service.memories.domain import memory_writes\n",
            "internals",
        ),
        ("kernel/domain/d.py", "from memory_service.tasks.domain import tasks\n", "kernel"),
        (
            "memories/public.py",
            PUBLIC + "from memory_service.tasks.domain import tasks\n",
            "public",
        ),
    ],
)
def test_each_violation_is_reported(tmp_path: Path, name: str, text: str, reported: str) -> None:
    result = check(package(tmp_path, {name: text}))
    assert result.returncode == 1
    assert reported in result.stdout, result.stdout
