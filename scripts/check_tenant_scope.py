"""`make lint`: statements on tenant tables are built in `memory_service/kernel/storage/scoped.py`
only.

Every table holds one tenant's rows. The scoped helper there puts the tenant predicate into each
statement (and `AllTenants` names the work that spans tenants); code anywhere else that builds a
SQLAlchemy select, insert, update or delete on a tenant model, constructs a row of one, queries
one through the ORM session, or names a tenant table in raw SQL is reported here, with its line.

    python -m scripts.check_tenant_scope [PATH ...]   # default: memory_service/
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

from memory_service.kernel.storage.scoped import TENANT_MODELS, TENANT_TABLES

ROOT = Path(__file__).resolve().parent.parent
HELPER = Path("memory_service/kernel/storage/scoped.py")
EXEMPT = (
    HELPER,
    Path("memory_service/kernel/storage/migrations"),
)  # migrations change every tenant
BUILDERS = frozenset({"select", "insert", "update", "delete"})
RAW_SQL = frozenset({"text", "exec_driver_sql"})
ORM_READS = frozenset({"query", "get", "merge"})


def _mentions_model(node: ast.AST) -> str:
    """The tenant model named anywhere inside `node`, or ""."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in TENANT_MODELS:
            return child.id
        if isinstance(child, ast.Attribute) and child.attr in TENANT_MODELS:
            return child.attr
    return ""


def _sqlalchemy_names(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Local names bound to SQLAlchemy's statement builders, and names of its modules."""
    builders: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            for alias in node.names:
                if alias.name in BUILDERS | RAW_SQL:
                    builders[alias.asname or alias.name] = alias.name
                else:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sqlalchemy"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    return builders, modules


def _builder(call: ast.Call, builders: dict[str, str], modules: set[str]) -> str:
    """Which SQLAlchemy builder `call` invokes, or ""."""
    func = call.func
    if isinstance(func, ast.Name):  # imported under another name, or not imported at all
        return builders.get(func.id, func.id if func.id in BUILDERS | RAW_SQL else "")
    if isinstance(func, ast.Attribute) and func.attr in BUILDERS | RAW_SQL:
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in modules:
            return func.attr
    return ""


def _names_table(call: ast.Call) -> str:
    for child in ast.walk(call):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            words = {w.strip('"`;(),').lower() for w in child.value.split()}
            if found := words & TENANT_TABLES:
                return sorted(found)[0]
    return ""


def check_source(source: str, where: str) -> list[str]:
    """The violations in one module's source, as `where:line: what`."""
    tree = ast.parse(source, where)
    builders, modules = _sqlalchemy_names(tree)
    found: list[tuple[int, str]] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        arguments = ast.Module(body=[ast.Expr(a) for a in call.args], type_ignores=[])
        for keyword in call.keywords:
            arguments.body.append(ast.Expr(keyword.value))
        func = call.func
        what = ""
        builder = _builder(call, builders, modules)
        if builder in BUILDERS and (model := _mentions_model(arguments)):
            what = f"{builder}() on {model}"
        elif builder in RAW_SQL and (table := _names_table(call)):
            what = f"raw SQL naming {table}"
        elif isinstance(func, ast.Attribute) and func.attr == "exec_driver_sql":
            if table := _names_table(call):
                what = f"raw SQL naming {table}"
        elif isinstance(func, ast.Name) and func.id in TENANT_MODELS:
            what = f"{func.id}(...) builds a row directly (an ORM insert)"
        elif isinstance(func, ast.Attribute) and func.attr in BUILDERS and _mentions_model(func):
            what = f"{_mentions_model(func)}.__table__.{func.attr}()"
        elif isinstance(func, ast.Attribute) and func.attr in ORM_READS and call.args:
            first = call.args[0]
            if isinstance(first, ast.Name) and first.id in TENANT_MODELS:
                what = f"session.{func.attr}({first.id})"
        if what:
            found.append((call.lineno, f"{where}:{call.lineno}: {what} outside {HELPER}"))
    return [line for _, line in sorted(found)]


def _modules(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            absolute = file.resolve()
            if not any(absolute == ROOT / e or ROOT / e in absolute.parents for e in EXEMPT):
                yield file


def violations(paths: list[Path]) -> list[str]:
    found: list[str] = []
    for file in _modules(paths):
        found.extend(check_source(file.read_text(), str(file)))
    return found


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [ROOT / "memory_service"]
    found = violations(paths)
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} statement(s) on tenant tables built outside {HELPER}: use "
            "TenantScoped (one tenant) or AllTenants (work across tenants) there",
            file=sys.stderr,
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
