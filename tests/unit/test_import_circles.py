"""The import-circle check of `make lint` passes on this tree and finds each shape of circle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_imports.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False
    )


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"memory_service/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_this_tree_has_no_circle() -> None:
    result = check(ROOT)
    assert result.returncode == 0, result.stdout
    assert "0 circles" in result.stdout


@pytest.mark.parametrize(
    "files",
    [
        {  # two modules, plain imports
            "memory_service/a.py": "import memory_service.b\n",
            "memory_service/b.py": "from memory_service import a\n",
        },
        {  # three modules, one import only for types, one inside a function
            "memory_service/a.py": "from memory_service.b import X\n",
            "memory_service/b.py": "def f():\n    from memory_service.c import Y\n",
            "memory_service/c.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from memory_service.a import Z\n"
            ),
        },
        {  # a package whose __init__ imports a module that imports the package back
            "memory_service/pkg/__init__.py": "from memory_service.pkg.impl import thing\n",
            "memory_service/pkg/impl.py": "from memory_service.pkg import helper\n",
        },
        {  # through another package's __init__, which `import pkg.inner` runs first
            "memory_service/a.py": "from memory_service.pkg.inner import B\n",
            "memory_service/pkg/__init__.py": "from memory_service.a import A\n",
            "memory_service/pkg/inner.py": "B = 1\n",
        },
        {  # relative imports
            "memory_service/pkg/__init__.py": "",
            "memory_service/pkg/a.py": "from .b import X\n",
            "memory_service/pkg/b.py": "from . import a\n",
        },
    ],
)
def test_a_circle_is_found(tmp_path: Path, files: dict[str, str]) -> None:
    result = check(tree(tmp_path, files))
    assert result.returncode == 1
    assert "import circle:" in result.stdout


def test_imports_one_way_are_not_a_circle(tmp_path: Path) -> None:
    files = {
        "memory_service/pkg/__init__.py": "from memory_service.pkg.impl import thing\n",
        "memory_service/pkg/impl.py": "from memory_service.pkg.parts import helper\n",
        "memory_service/pkg/parts.py": "import os\n",
    }
    assert check(tree(tmp_path, files)).returncode == 0


def test_a_module_importing_beside_itself_does_not_circle_through_its_own_package(
    tmp_path: Path,
) -> None:
    # its own packages ran before it did: importing a sibling adds no edge to them
    files = {
        "memory_service/pkg/__init__.py": "from memory_service.pkg.a import A\n",
        "memory_service/pkg/a.py": "from memory_service.pkg.sub.b import B\nA = 1\n",
        "memory_service/pkg/sub/__init__.py": "",
        "memory_service/pkg/sub/b.py": "B = 1\n",
    }
    assert check(tree(tmp_path, files)).returncode == 0
