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


@pytest.mark.parametrize(
    "text",
    [
        "import memory_service\n",
        "import memory_service.memories.public as pub\n",
        "from memory_service.memories import public\n",
        "from memory_service import kernel\n",
        "import memory_service.kernel as k\n",
        "from memory_service.memories import RevisionDraft\n",
        "from memory_service.tasks.public import T\n",
    ],
)
def test_a_package_or_public_module_imported_as_a_module_is_refused(
    tmp_path: Path, text: str
) -> None:
    # reaching through attributes (memory_service.memories.domain..., pub.X) is judged by nobody
    root = package(
        tmp_path, {"tasks/public.py": "", "tasks/transport/a.py": text, "kernel/domain/k.py": text}
    )
    result = check(root)
    assert result.returncode == 1
    assert "memory_service/tasks/transport/a.py:1: tasks imports" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "import importlib\nm = importlib.import_module('memory_service.tasks.storage.x')\n",
        "from importlib import import_module\n",
        "m = __import__('memory_service.tasks.storage.x')\n",
        "exec('from memory_service.tasks.storage import x')\n",
    ],
)
def test_a_dynamic_import_is_refused(tmp_path: Path, text: str) -> None:
    for name in ("tasks/transport/a.py", "kernel/app/b.py"):
        result = check(package(tmp_path, {name: text}))
        assert result.returncode == 1
        assert f"memory_service/{name}:" in result.stdout, result.stdout
        assert "a dynamic import" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "name", ["tasks/domain/c.py", "tasks/public.py", "kernel/domain/d.py", "testing/fake.py"]
)
def test_a_star_import_is_refused_anywhere_in_the_package(tmp_path: Path, name: str) -> None:
    result = check(package(tmp_path, {name: "from memory_service.kernel.domain.model import *\n"}))
    assert result.returncode == 1
    assert f"memory_service/{name}:1: a star import" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "name", ["tasks/helpers.py", "tasks/extra/x.py", "kernel/public.py", "kernel/util.py"]
)
def test_a_module_outside_the_layer_folders_is_refused(tmp_path: Path, name: str) -> None:
    # an unplaced module would be judged by no layer rule
    result = check(package(tmp_path, {name: "import sqlalchemy\n"}))
    assert result.returncode == 1
    assert f"memory_service/{name}: a module of" in result.stdout, result.stdout


@pytest.mark.parametrize("with_init", [True, False])
def test_a_package_that_is_no_listed_slice_is_refused(tmp_path: Path, with_init: bool) -> None:
    root = package(tmp_path, {})
    folder = root / "memory_service" / "billing" / "storage"
    folder.mkdir(parents=True)
    (folder / "x.py").write_text("import grpc\n")
    if with_init:  # a namespace package is a package too
        (folder.parent / "__init__.py").touch()
    result = check(root)
    assert result.returncode == 1
    assert "memory_service/billing/: a package that is no listed slice" in result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "from memory_service import config\n",
        "from memory_service.testing import fake\n",
        "import memory_service.review_cli\n",
        "from memory_service.bootstrap import build\n",
        "from memory_service.tasks.public import T\n",
    ],
)
def test_the_kernel_imports_nothing_outside_it(tmp_path: Path, text: str) -> None:
    files = {
        "config.py": "",
        "review_cli.py": "",
        "bootstrap.py": "def build(): ...\n",
        "testing/fake.py": "",
        "tasks/public.py": "from memory_service.tasks.domain.tasks import T\n",
        "tasks/domain/tasks.py": "class T: ...\n",
        "kernel/app/k.py": text,
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1
    assert "memory_service/kernel/app/k.py:1: the kernel imports" in result.stdout, result.stdout
    assert "outside the kernel" in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("name", "text", "reported"),
    [
        ("tasks/storage/s.py", "import grpc\n", "storage imports grpc"),
        ("tasks/storage/s.py", "from crmmem.memory.v1 import memory_pb2\n", "storage imports"),
        ("tasks/storage/s.py", "from memory_service.tasks.transport import a\n", "transport"),
        ("kernel/storage/s.py", "from memory_service.kernel.transport import t\n", "transport"),
        ("tasks/workers/w.py", "from memory_service.tasks.transport.a import serve\n", "transport"),
    ],
)
def test_storage_and_workers_do_not_reach_the_transport(
    tmp_path: Path, name: str, text: str, reported: str
) -> None:
    files = {"tasks/transport/a.py": "def serve(): ...\n", "kernel/transport/t.py": "", name: text}
    result = check(package(tmp_path, files))
    assert result.returncode == 1
    assert f"memory_service/{name}:1: " in result.stdout, result.stdout
    assert reported in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("app", "transport", "reported"),
    [
        (  # an app module re-exporting a domain rule
            "from memory_service.kernel.domain.rules import require_admin\n",
            "from memory_service.tasks.app.x import require_admin\n",
            "transport imports memory_service.kernel.domain.rules.require_admin",
        ),
        (  # renamed on the way
            "from memory_service.kernel.app.transactions import Transactions as Tx\n",
            "from memory_service.tasks.app.x import Tx\n",
            "transport imports memory_service.kernel.app.transactions.Transactions",
        ),
        (  # through a module bound under a name, then an assignment
            "from memory_service.kernel.app import transactions\n"
            "Runner = transactions.Transactions\n",
            "from memory_service.tasks.app.x import Runner\n",
            "transport imports memory_service.kernel.app.transactions.Transactions",
        ),
        (  # two hops, the second through a storage module
            "from memory_service.tasks.domain.tasks import Repo\n",
            "from memory_service.tasks.app.x import Repo\n",
            "transport imports storage (memory_service.tasks.storage.repo.Repo)",
        ),
    ],
)
def test_a_name_reexported_by_any_module_is_judged_where_it_is_defined(
    tmp_path: Path, app: str, transport: str, reported: str
) -> None:
    files = {
        "kernel/domain/rules.py": "def require_admin(): ...\n",
        "kernel/app/transactions.py": "class Transactions: ...\nclass RequestKey: ...\n",
        "tasks/storage/repo.py": "class Repo: ...\n",
        # a domain re-exporting storage is itself refused; the transport is refused too
        "tasks/domain/tasks.py": "from memory_service.tasks.storage.repo import Repo\n",
        "tasks/app/x.py": app,
        "tasks/transport/a.py": transport,
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1
    assert f"memory_service/tasks/transport/a.py:1: {reported}" in result.stdout, result.stdout


def test_slices_in_a_circle_fail(tmp_path: Path) -> None:
    files = {
        "tasks/public.py": "from memory_service.tasks.domain.tasks import T\n",
        "tasks/domain/tasks.py": (
            "from memory_service.memories.public import RevisionDraft\nclass T: ...\n"
        ),
        "memories/domain/uses_tasks.py": "from memory_service.tasks.public import T\n",
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1, result.stdout
    assert (
        "the slices memories, tasks import each other in a circle, "
        "e.g. memories -> tasks -> memories"
    ) in result.stdout, result.stdout


@pytest.mark.parametrize(
    "reexport",
    [
        "from memory_service.tasks.domain import tasks as tasks\n",
        "import memory_service.tasks.domain.tasks as tasks\n",
    ],
)
def test_a_public_module_re_exports_names_not_modules(tmp_path: Path, reexport: str) -> None:
    """A module handed out whole lets another slice reach any attribute of it unjudged
    (`tasks.TaskRepository` from a domain module)."""
    files = {
        "tasks/public.py": reexport,
        "tasks/domain/tasks.py": "class T: ...\n",
        "memories/domain/uses_tasks.py": "from memory_service.tasks.public import tasks\n",
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1, result.stdout
    assert "a public module re-exports a whole module" in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("from memory_service.kernel.domain.rules import state_at\n", "not a type, name"),
        ("from memory_service.kernel.domain.rules import supersede\n", "not a type, name"),
        ("from memory_service.kernel.domain import rules\n", "imported whole"),
        ("import memory_service.kernel.domain.rules as r\n", "imported whole"),
    ],
)
def test_transport_takes_only_the_field_rules_it_checks(
    tmp_path: Path, text: str, reported: str
) -> None:
    files = {
        "kernel/domain/rules.py": "MAX_ID_CHARS = 1\ndef state_at(): ...\ndef supersede(): ...\n",
        "tasks/transport/a.py": "from memory_service.kernel.domain.rules import MAX_ID_CHARS\n",
    }
    assert check(package(tmp_path, files)).returncode == 0
    result = check(package(tmp_path, {**files, "tasks/transport/a.py": text}))
    assert result.returncode == 1
    assert reported in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("public", "reported"),
    [
        (  # code of its own: a function there would be judged by no layer
            "from memory_service.tasks.domain.tasks import T as _T\ndef make(): return _T()\n",
            "a public module holds only",
        ),
        (  # a name laundered by tuple unpacking
            "from memory_service.tasks.domain.tasks import T as _T\nT2, _x = _T, None\n",
            "a public module holds only",
        ),
        (  # a corridor: another slice's name passed on through one of its own modules
            "from memory_service.tasks.domain.uses import RevisionDraft as RevisionDraft\n",
            "passes on RevisionDraft, not its slice's",
        ),
        (  # the kernel's name passed on
            "from memory_service.kernel.domain.model import M as M\n",
            "passes on M, not its slice's",
        ),
        (  # a whole module, two hops away
            "from memory_service.tasks.domain.uses import tasks as tasks\n",
            "re-exports a whole module (tasks: memory_service.tasks.domain.tasks)",
        ),
    ],
)
def test_a_public_module_only_hands_out_its_own_slices_names(
    tmp_path: Path, public: str, reported: str
) -> None:
    files = {
        "kernel/domain/model.py": "class M: ...\n",
        "tasks/domain/tasks.py": "class T: ...\n",
        "tasks/domain/uses.py": (
            "from memory_service.memories.public import RevisionDraft\n"
            "from memory_service.tasks.domain import tasks\n"
        ),
        "tasks/public.py": "from memory_service.tasks.domain.tasks import T as T\n",
    }
    assert check(package(tmp_path, files)).returncode == 0
    result = check(package(tmp_path, {**files, "tasks/public.py": public}))
    assert result.returncode == 1
    assert reported in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("app", "reported"),
    [
        ("Tx, _unused = Transactions, None\n", "transactions.Transactions"),
        ("if (Tx := Transactions):\n    pass\n", "transactions.Transactions"),
        ("Tx = Transactions if True else None\n", "transactions.Transactions"),
        ("Tx = [Transactions][0]\n", "transactions.Transactions"),
    ],
)
def test_a_name_rebound_by_any_expression_is_followed(
    tmp_path: Path, app: str, reported: str
) -> None:
    files = {
        "kernel/app/transactions.py": "class Transactions: ...\n",
        "tasks/app/x.py": "from memory_service.kernel.app.transactions import Transactions\n" + app,
        "tasks/transport/a.py": "from memory_service.tasks.app.x import Tx\n",
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1
    assert "memory_service/tasks/transport/a.py:1: transport imports" in result.stdout
    assert reported in result.stdout, result.stdout


@pytest.mark.parametrize(
    "use",
    [
        "x = names.rules.supersede\n",
        "def f():\n    return names.rules.supersede()\n",
    ],
)
def test_an_attribute_reached_through_an_allowed_module_is_judged(tmp_path: Path, use: str) -> None:
    files = {
        "kernel/domain/rules.py": "MAX_ID_CHARS = 1\ndef supersede(): ...\n",
        "kernel/domain/names.py": "from memory_service.kernel.domain import rules\n",
        "tasks/transport/a.py": "from memory_service.kernel.domain import names\nx = names.X\n",
    }
    assert check(package(tmp_path, files)).returncode == 0
    text = "from memory_service.kernel.domain import names\n" + use
    result = check(package(tmp_path, {**files, "tasks/transport/a.py": text}))
    assert result.returncode == 1
    assert "transport imports memory_service.kernel.domain.rules" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "import importlib\nm = getattr(importlib, 'import_' + 'module')('x')\n",
        "import sys\nm = sys.modules['memory_service.tasks.storage.x']\n",
        "import pydoc\nm = pydoc.locate('memory_service.tasks.storage.x.R')\n",
        "import pkgutil\nm = pkgutil.resolve_name('memory_service.tasks.storage.x:R')\n",
    ],
)
def test_the_other_ways_to_import_by_string_are_refused(tmp_path: Path, text: str) -> None:
    result = check(package(tmp_path, {"tasks/domain/c.py": text}))
    assert result.returncode == 1
    assert "a dynamic import" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "import memory_service.kernel.domain.model\nR = memory_service.tasks.storage.repo.Repo\n",
        "try:\n    from memory_service.kernel.app.transactions import Transactions as Tx\n"
        "except ImportError:\n    from memory_service.kernel.domain.model import M as Tx\n",
        "if True:\n    from memory_service.kernel.app.transactions import Transactions as Tx\n"
        "else:\n    from memory_service.kernel.domain.model import M as Tx\n",
    ],
)
def test_a_dotted_import_or_a_fallback_import_cannot_hide_a_name(tmp_path: Path, text: str) -> None:
    """`import a.b.c` binds `a`, so all of the package by attribute; an import in an if/else or
    try/except binds a name in every branch."""
    files = {
        "kernel/domain/model.py": "class M: ...\n",
        "kernel/app/transactions.py": "class Transactions: ...\n",
        "tasks/storage/repo.py": "class Repo: ...\n",
        "tasks/app/x.py": text,
        "tasks/transport/a.py": "from memory_service.tasks.app.x import Tx\n"
        if "Tx" in text
        else text,
    }
    result = check(package(tmp_path, files))
    assert result.returncode == 1, result.stdout
    assert "memory_service/tasks/transport/a.py:" in result.stdout, result.stdout


def test_a_name_bound_to_itself_over_and_over_is_checked_quickly(tmp_path: Path) -> None:
    rebinding = "Tx = Tx\n" * 40
    files = {
        "kernel/app/transactions.py": "class Transactions: ...\n",
        "tasks/app/x.py": "from memory_service.kernel.app.transactions import Transactions as Tx\n"
        + rebinding,
        "tasks/transport/a.py": "from memory_service.tasks.app.x import Tx\n",
    }
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(package(tmp_path, files))],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 1
    assert "transactions.Transactions" in result.stdout, result.stdout


def test_exec_and_eval_are_refused_as_builtins_not_as_any_method(tmp_path: Path) -> None:
    # session.exec(statement), model.eval(): methods that import nothing
    files = {
        "tasks/storage/s.py": "def run(session, model):\n    session.exec(1)\n    model.eval()\n"
    }
    assert check(package(tmp_path, files)).returncode == 0
