"""Checks that no module of our packages imports itself back through others: `make lint` runs it.

A circle of imports means two modules cannot be understood, tested or moved apart; a type-only
import (`if TYPE_CHECKING:`) counts, because it ties the modules' meaning as much as a runtime
one. Every import statement counts, including ones inside functions. `from package import name`
counts as an import of `package.name` when that is a module, else of `package`; an import of
`a.b.c` also counts as one of the packages `a.b` and `a` (their `__init__` runs first), except
the importing module's own packages.

Usage: python scripts/check_imports.py [ROOT]  (ROOT holds the packages; prints each circle and
exits 1 when there is one, prints the module count and exits 0 otherwise).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGES = ("memory_service", "retrieval_service", "crmmem_runtime")


def modules(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ours that the module `name` at `path` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target
            # `import a.b.c` runs a/b/__init__.py first: a package's __init__ is imported too,
            # unless it is one of this module's own packages (already run before this one).
            parent = target.rpartition(".")[0]
            while parent:
                if parent in known and not within(name, parent):
                    yield parent
                parent = parent.rpartition(".")[0]


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    known = modules(root)
    graph = {name: set(imported(name, path, known)) for name, path in known.items()}
    found = circles(graph)
    for group in found:
        print("import circle: " + " -> ".join(group))
    if found:
        return 1
    print(f"check_imports: {len(known)} modules, 0 circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
