"""Checks the slice and layer rules of docs/architecture.md; `make lint` runs it.

The memory service is feature slices (`memory_service/<slice>/`, listed in
scripts/slice_map.py) over a shared `memory_service/kernel/`; each holds the same layers as
subpackages (domain, app, storage, transport, adapters, workers). The rules:

- Slice boundary: a slice imports another slice only through that slice's public module,
  `memory_service/<slice>/public.py`, never its internals. A public module re-exports its own
  slice's names only. The kernel imports no slice, and nothing of the wiring at the top
  (bootstrap, server, unit_of_work, __main__, cli).
- Layers, inside every slice and the kernel, judged on where an imported name really lives (a
  name taken from another slice's public module counts as the module it comes from):
  - transport/ handles inbound gRPC only: never storage, adapters, workers, the wiring or
    SQLAlchemy. From a domain it takes only the types it converts, names, errors and field
    rules (TRANSPORT_MAY_USE): never a use case and never a unit of work, so every read and
    write reaches the domain through one app/ entry.
  - app/ runs use cases over ports: no gRPC, no generated protos, no SQL, no transport, no
    storage, adapters or workers.
  - domain/ imports only domains (its own, the kernel's, another slice's through its public
    module) and the standard library (named exceptions below, with why).

Every import statement counts, including ones inside functions and `if TYPE_CHECKING:` blocks.
Usage: python scripts/check_slices.py [ROOT]  (ROOT holds the memory_service package; exit 1
and one line per violation when a rule is broken; else the slices' dependencies, one line).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "memory_service"
SLICES = (
    "memories",
    "transcripts",
    "context",
    "imports",
    "exports",
    "access",
    "tasks",
    "review",
    "documents",
)
KERNEL = "kernel"
PUBLIC = "public"
LAYERS = ("domain", "app", "storage", "transport", "adapters", "workers")
WIRING = tuple(
    f"{PACKAGE}.{name}" for name in ("bootstrap", "server", "unit_of_work", "__main__", "cli")
)
THIRD_PARTY = {
    "transport": ("sqlalchemy",),
    "app": (
        "grpc",
        "grpc_health",
        "grpc_status",
        "grpc_reflection",
        "crmmem",
        "google.protobuf",
        "sqlalchemy",
    ),
}
LAYERS_REFUSED = {
    "transport": ("storage", "adapters", "workers"),
    "app": ("storage", "transport", "adapters", "workers"),
}
K = f"{PACKAGE}.{KERNEL}"
# What transport/ may import from any slice's domain, and from the kernel's transaction runner.
# A module mapped to None may be imported whole: it holds records, names, errors or pure rules,
# nothing that opens or takes a unit of work. A module mapped to names also holds a use case
# (a class whose methods take a unit of work), so only the listed names, the types and limits
# the transport converts and checks, may be imported from it, by name.
TRANSPORT_MAY_USE: dict[str, frozenset[str] | None] = {
    # records and enums the proto maps to, Identity, utcnow
    f"{K}.domain.model": None,
    # resource names, parsed from requests and formatted into answers
    f"{K}.domain.names": None,
    # the errors and reasons the transport maps to gRPC status
    f"{K}.domain.errors": None,
    # the etag format of requests and answers
    f"{K}.domain.etags": None,
    # field patterns and limits checked at the edge; a revision's state shown in an answer
    f"{K}.domain.rules": None,
    # the degraded-recall answer; not UnitOfWork nor any repository
    f"{K}.domain.ports": frozenset({"SearchUnavailable"}),
    # the request key the transport builds for a write; not Transactions, Answer
    f"{K}.app.transactions": frozenset({"RequestKey"}),
    # whether a revision was inferred, shown in an answer
    f"{PACKAGE}.memories.domain.authority": None,
    # what a memory request asks for: the drafts, CreateMemory, MemoryFilter
    f"{PACKAGE}.memories.domain.memory_requests": None,
    # what a deletion reached, shown in its answer; not MemoryUseCases (memory_writes)
    f"{PACKAGE}.memories.domain.receipts": frozenset({"DeletionReceipt"}),
    # not RecallUseCases
    f"{PACKAGE}.memories.domain.recall": frozenset({"DropReason", "RecallResult", "ScopeHint"}),
    # a memory as an answer shows it; show_* only for answers whose app entry returns records
    f"{PACKAGE}.memories.domain.shown": frozenset(
        {"ShownMemory", "ShownRevision", "show_memory", "show_revision"}
    ),
    # request and answer types, limits; not DocumentUseCases
    f"{PACKAGE}.documents.domain.documents": frozenset(
        {"document_ref", "document_excerpt", "DocumentReport", "MAX_NAMED_MEMORIES"}
    ),
    # the context request and the enums of its answer; not ContextBuilder
    f"{PACKAGE}.context.domain.context": frozenset(
        {"ContextRequest", "CustomerRef", "Applicability", "ExclusionReason", "ReferenceStatus"}
    ),
    # not OverrideUseCases
    f"{PACKAGE}.context.domain.overrides": frozenset({"Expiry", "OverrideDraft"}),
    # not ProposalUseCases
    f"{PACKAGE}.context.domain.proposals": frozenset({"Decision", "Proposal", "Outcome"}),
    # not ReviewUseCases
    f"{PACKAGE}.review.domain.review": frozenset(
        {"QUEUE_ORDER", "ReviewItem", "ReviewQuery", "ReviewReason"}
    ),
    # not TaskUseCases
    f"{PACKAGE}.tasks.domain.tasks": frozenset({"CheckpointDraft"}),
    # the schema id an export stream carries; not ExportUseCases
    f"{PACKAGE}.exports.domain.export": frozenset({"SCHEMA_ID"}),
    # the archive size limit (also the server's message size); not the parsers
    f"{PACKAGE}.imports.domain.parsers": frozenset({"MAX_ARCHIVE_BYTES"}),
}
# The same refused from any module that happens to re-export them (an app module imports them).
TRANSPORT_NEVER = frozenset({"Transactions", "Answer", "UnitOfWork", "UnitOfWorkFactory"})
# Third-party modules a domain may use, per file: an archive is parsed as a stream (bounded
# memory for a 64 MiB archive), and the standard library has no streaming JSON parser.
DOMAIN_EXCEPTIONS = {f"{PACKAGE}.imports.domain.parsers": frozenset({"ijson"})}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def place(module: str) -> tuple[str | None, str | None]:
    """(slice or kernel, layer) of a module of the package; (None, None) for the wiring."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != PACKAGE or parts[1] not in (*SLICES, KERNEL):
        return None, None
    layer = parts[2] if len(parts) > 2 and parts[2] in LAYERS else None
    return parts[1], layer


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, Path] = {}
        for path in sorted((root / PACKAGE).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            self.modules[".".join(parts)] = path
        # each public module's names: exported name -> (module, name or None for a module)
        self.exports: dict[str, dict[str, tuple[str, str | None]]] = {}
        for name in SLICES:
            public = f"{PACKAGE}.{name}.{PUBLIC}"
            found: dict[str, tuple[str, str | None]] = {}
            if public in self.modules:
                tree = ast.parse(self.modules[public].read_text(encoding="utf-8"))
                for module, imported, shown, _ in self.uses(tree, public):
                    if imported is not None:
                        found[shown or imported] = (module, imported)
                    elif shown:
                        found[shown] = (module, None)
            self.exports[public] = found

    def is_package(self, name: str) -> bool:
        return self.root.joinpath(*name.split(".")).is_dir()

    def uses(self, tree: ast.AST, module: str) -> Iterator[tuple[str, str | None, str | None, int]]:
        """(module, name, bound as, line) for every import: name is None when a whole module is
        imported (`import a.b`, or `from a import b` where a/b is a module)."""
        is_init = self.modules.get(module, Path()).name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name, None, alias.asname, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = module.split(".")
                    parent = parts[: len(parts) - node.level + (1 if is_init else 0)]
                    base = ".".join([*parent, base] if base else parent)
                package = self.is_package(base)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if package and (full in self.modules or self.is_package(full)):
                        yield full, None, alias.asname or alias.name, node.lineno
                    else:
                        yield base, alias.name, alias.asname, node.lineno

    def origin(self, module: str, name: str | None) -> tuple[str, str | None]:
        """Where an imported name really lives: through a public module to its source."""
        exports = self.exports.get(module)
        if exports is not None and name is not None and name in exports:
            return exports[name]
        return module, name


def transport_problem(module: str, name: str | None) -> str | None:
    if name in TRANSPORT_NEVER or (name or "").endswith("UseCases"):
        return "a unit of work or a domain use case: call an app/ entry instead"
    _, layer = place(module)
    if layer != "domain" and module != f"{K}.app.transactions":
        return None
    if module not in TRANSPORT_MAY_USE:
        return "a module transport/ may not use (see TRANSPORT_MAY_USE)"
    allowed = TRANSPORT_MAY_USE[module]
    if allowed is None:
        return None
    if name is None:
        return "a module with a use case, imported whole (import the listed names only)"
    if name not in allowed:
        return "not a type, name, error or rule transport/ may use (see TRANSPORT_MAY_USE)"
    return None


def check(root: Path) -> tuple[list[str], dict[str, set[str]]]:
    found: list[str] = []
    depends: dict[str, set[str]] = defaultdict(set)
    tree = Tree(root)
    stdlib = sys.stdlib_module_names
    for module, path in tree.modules.items():
        own, layer = place(module)
        if own is None:
            continue  # the wiring and testing/ may import anything
        where = path.relative_to(root).as_posix()
        syntax = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_public = module == f"{PACKAGE}.{own}.{PUBLIC}"
        for used, name, _, line in tree.uses(syntax, module):
            at = f"{where}:{line}"
            shown = used if name is None else f"{used}.{name}"
            other, _ = place(used)
            if own == KERNEL and other in SLICES:
                found.append(f"{at}: the kernel imports the {other} slice ({shown})")
            if any(within(used, w) or within(shown, w) for w in WIRING):
                found.append(f"{at}: {own} imports the wiring ({shown})")
            if other in SLICES and other != own:
                depends[own].add(other)
                if is_public:
                    found.append(f"{at}: a public module re-exports another slice ({shown})")
                elif used != f"{PACKAGE}.{other}.{PUBLIC}":
                    found.append(
                        f"{at}: {own} imports {other}'s internals ({shown}); "
                        f"import from {PACKAGE}.{other}.{PUBLIC}"
                    )
            if layer is None:
                continue
            real, real_name = tree.origin(used, name)
            _, real_layer = place(real)
            real_shown = real if real_name is None else f"{real}.{real_name}"
            if layer == "domain":
                top = real.split(".")[0]
                allowed = DOMAIN_EXCEPTIONS.get(module, frozenset())
                ours = top == PACKAGE
                if (ours and real != PACKAGE and real_layer != "domain") or (
                    not ours and top not in stdlib and top not in allowed
                ):
                    found.append(f"{at}: domain imports {real_shown}")
                continue
            if layer in THIRD_PARTY:
                for prefix in THIRD_PARTY[layer]:
                    if within(real, prefix):
                        found.append(f"{at}: {layer} imports {real_shown}")
                if real_layer in LAYERS_REFUSED[layer]:
                    found.append(f"{at}: {layer} imports {real_layer} ({real_shown})")
            if layer == "transport":
                problem = transport_problem(real, real_name)
                if problem:
                    found.append(f"{at}: transport imports {real_shown}: {problem}")
    return found, depends


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found, depends = check(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} violation(s); see docs/architecture.md", file=sys.stderr)
        return 1
    shown = "; ".join(f"{s} -> {', '.join(sorted(depends[s]))}" for s in sorted(depends))
    print(f"check_slices: 0 violations; slices use (through public.py): {shown or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
