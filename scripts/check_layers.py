"""Checks the layer rules of docs/architecture.md; `make lint` runs it.

- transport/ handles inbound gRPC only: it never imports storage, adapters, workers or the
  composition root (it gets what it runs from bootstrap.py). From the domain it takes only the
  types it converts, names, errors and field rules (TRANSPORT_MAY_USE): never a use case and
  never a unit of work, so every read and write reaches the domain through one app/ entry.
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
# What transport/ may import from the guarded modules (the domain, and the app's transaction
# runner). A module mapped to None may be imported whole: it holds records, names, errors or
# pure rules, nothing that opens or takes a unit of work. A module mapped to names also holds a
# use case (a class whose methods take a unit of work), so only the listed names, the types and
# limits the transport converts and checks, may be imported from it, by name.
GUARDED = (f"{PACKAGE}.domain", f"{PACKAGE}.app.transactions")
TRANSPORT_MAY_USE: dict[str, frozenset[str] | None] = {
    # records and enums the proto maps to, Identity, utcnow
    f"{PACKAGE}.domain.model": None,
    # resource names, parsed from requests and formatted into answers
    f"{PACKAGE}.domain.names": None,
    # the errors and reasons the transport maps to gRPC status
    f"{PACKAGE}.domain.errors": None,
    # the etag format of requests and answers
    f"{PACKAGE}.domain.etags": None,
    # field patterns and limits checked at the edge; a revision's state shown in an answer
    f"{PACKAGE}.domain.rules": None,
    # whether a revision was inferred, shown in an answer
    f"{PACKAGE}.domain.authority": None,
    # request and answer types, limits; not DocumentUseCases
    f"{PACKAGE}.domain.documents": frozenset(
        {"document_ref", "document_excerpt", "DocumentReport", "MAX_NAMED_MEMORIES"}
    ),
    # the context request and the enums of its answer; not ContextBuilder
    f"{PACKAGE}.domain.context": frozenset(
        {"ContextRequest", "CustomerRef", "Applicability", "ExclusionReason", "ReferenceStatus"}
    ),
    # not OverrideUseCases
    f"{PACKAGE}.domain.overrides": frozenset({"Expiry", "OverrideDraft"}),
    # not ProposalUseCases
    f"{PACKAGE}.domain.proposals": frozenset({"Decision", "Proposal", "Outcome"}),
    # not RecallUseCases
    f"{PACKAGE}.domain.recall": frozenset({"DropReason", "RecallResult", "ScopeHint"}),
    # a memory as an answer shows it; show_* only for answers whose app entry returns records
    f"{PACKAGE}.domain.shown": frozenset(
        {"ShownMemory", "ShownRevision", "show_memory", "show_revision"}
    ),
    # not ReviewUseCases
    f"{PACKAGE}.domain.review": frozenset(
        {"QUEUE_ORDER", "ReviewItem", "ReviewQuery", "ReviewReason"}
    ),
    # what a memory request asks for: the drafts, CreateMemory, MemoryFilter
    f"{PACKAGE}.domain.memory_requests": None,
    # what a deletion reached, shown in its answer; not MemoryUseCases (memory_writes)
    f"{PACKAGE}.domain.receipts": frozenset({"DeletionReceipt"}),
    # not TaskUseCases
    f"{PACKAGE}.domain.tasks": frozenset({"CheckpointDraft"}),
    # the schema id an export stream carries; not ExportUseCases
    f"{PACKAGE}.domain.export": frozenset({"SCHEMA_ID"}),
    # the degraded-recall answer; not UnitOfWork nor any repository
    f"{PACKAGE}.domain.ports": frozenset({"SearchUnavailable"}),
    # the archive size limit (also the server's message size); not the parsers
    f"{PACKAGE}.domain.importing.parsers": frozenset({"MAX_ARCHIVE_BYTES"}),
    # the request key the transport builds for a write; not Transactions, Answer
    f"{PACKAGE}.app.transactions": frozenset({"RequestKey"}),
}
# The same refused from any module that happens to re-export them (an app module imports them).
TRANSPORT_NEVER = frozenset({"Transactions", "Answer", "UnitOfWork", "UnitOfWorkFactory"})
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


def uses(tree: ast.AST, module: str, root: Path) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) for every import; name is None when the whole module is imported
    (`import a.b`, or `from a import b` where a/b is a module of the package under `root`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, base] if base else parent)
            package = root.joinpath(*base.split(".")).is_dir()
            for alias in node.names:
                if package:
                    yield node.lineno, f"{base}.{alias.name}", None
                else:
                    yield node.lineno, base, alias.name


def transport_use_problem(module: str, name: str | None) -> str | None:
    """Why transport/ may not import `name` from `module` (None: it may)."""
    if name in TRANSPORT_NEVER or (name or "").endswith("UseCases"):
        return "a unit of work or a domain use case: call an app/ entry instead"
    if not any(within(module, guarded) for guarded in GUARDED):
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


def violations(root: Path) -> list[str]:
    found = []
    stdlib = sys.stdlib_module_names
    for layer in ("transport", "app", "domain"):
        folder = root / PACKAGE / layer
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).as_posix()
            module = ".".join([PACKAGE, layer, *path.relative_to(folder).with_suffix("").parts])
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            if layer == "transport":
                for line, used, name in uses(tree, module, root):
                    problem = transport_use_problem(used, name)
                    if problem:
                        shown = used if name is None else f"{used}.{name}"
                        found.append(
                            f"{path.relative_to(root)}:{line}: transport imports {shown}: {problem}"
                        )
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
