"""Checks the layer rules of docs/architecture.md; `make lint` runs it.

- transport/ handles inbound gRPC only: it never imports storage, adapters, workers or the
  composition root (it gets what it runs from bootstrap.py).
- app/ runs use cases over ports: no gRPC, no generated protos, no SQL, no transport, no
  concrete adapters or workers.
- domain/ imports only itself and the standard library (named exceptions below, with why).

Every import statement counts, including ones inside functions and `if TYPE_CHECKING:` blocks.
Usage: python scripts/check_layers.py [ROOT]  (ROOT holds the memory_service package; exit 1
and one line per violation when a rule is broken).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "memory_service"
FORBIDDEN = {
    "transport": (
        f"{PACKAGE}.storage",
        f"{PACKAGE}.adapters",
        f"{PACKAGE}.workers",
        f"{PACKAGE}.bootstrap",
        "sqlalchemy",
    ),
    "app": (
        "grpc",
        "grpc_health",
        "grpc_status",
        "grpc_reflection",
        "crmmem",
        "google.protobuf",
        "sqlalchemy",
        f"{PACKAGE}.storage",
        f"{PACKAGE}.transport",
        f"{PACKAGE}.adapters",
        f"{PACKAGE}.workers",
        f"{PACKAGE}.bootstrap",
    ),
}
# Third-party modules the domain may use, per file: an archive is parsed as a stream (bounded
# memory for a 64 MiB archive), and the standard library has no streaming JSON parser.
DOMAIN_EXCEPTIONS = {"importing/parsers.py": frozenset({"ijson"})}


def imported(tree: ast.AST, module: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) for every import; `from a import b` yields `a` and `a.b`, and
    relative imports are resolved against `module`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, base] if base else parent)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path) -> list[str]:
    found = []
    stdlib = sys.stdlib_module_names
    for layer in ("transport", "app", "domain"):
        folder = root / PACKAGE / layer
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).as_posix()
            module = ".".join([PACKAGE, layer, *path.relative_to(folder).with_suffix("").parts])
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line, name in imported(tree, module):
                where = f"{path.relative_to(root)}:{line}"
                if layer == "domain":
                    top = name.split(".")[0]
                    allowed = DOMAIN_EXCEPTIONS.get(relative, frozenset())
                    if not (
                        within(name, f"{PACKAGE}.domain")
                        or name == PACKAGE
                        or top in stdlib
                        or top in allowed
                    ):
                        found.append(f"{where}: domain imports {name}")
                    continue
                for prefix in FORBIDDEN[layer]:
                    if within(name, prefix):
                        found.append(f"{where}: {layer} imports {name}")
                        break
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} layer rule violation(s); see docs/architecture.md", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
