"""Loggers are named by role (docs/operations.md), so an operator's log filter survives code
moving between slices; the wiring at the top of the package logs under its module name."""

from __future__ import annotations

import ast
from pathlib import Path

import memory_service

PACKAGE = Path(memory_service.__file__).parent
ROLES = ("transport", "workers", "storage", "app", "adapters")
WIRING = {"memory_service.bootstrap", "memory_service.__main__"}


def logger_names() -> dict[str, str]:
    """Each module's logger names: the string given, or the module's name for `__name__`."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "gen" in path.relative_to(PACKAGE).parts:
            continue
        module = ".".join(("memory_service", *path.relative_to(PACKAGE).with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getLogger"
                and node.args
            ):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found[f"{module}:{node.lineno}"] = arg.value
            elif isinstance(arg, ast.Name) and arg.id == "__name__":
                found[f"{module}:{node.lineno}"] = module
            else:
                found[f"{module}:{node.lineno}"] = ast.unparse(arg)
    return found


def test_every_logger_is_named_by_its_role_or_is_the_wiring() -> None:
    names = logger_names()
    assert len(names) >= 10, names
    wrong = {
        where: name
        for where, name in names.items()
        if name not in WIRING
        and not any(name.startswith(f"memory_service.{role}.") for role in ROLES)
    }
    assert not wrong, wrong


def test_every_worker_logs_under_the_workers_role() -> None:
    """`memory_service.workers` at INFO shows every worker's outages (docs/operations.md)."""
    names = logger_names()
    in_workers = {w: n for w, n in names.items() if ".workers." in w.split(":")[0]}
    assert in_workers, names
    assert all(n.startswith("memory_service.workers.") for n in in_workers.values()), in_workers
