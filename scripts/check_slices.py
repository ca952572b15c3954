"""Checks the slice and layer rules of docs/architecture.md; `make lint` runs it.

The memory service is feature slices (`memory_service/<slice>/`, listed in
scripts/slice_map.py) over a shared `memory_service/kernel/`; each holds the same layers as
subpackages (domain, app, storage, transport, adapters, workers). The rules:

- Layout: every folder of `memory_service/` holding Python is a listed slice, the kernel, or a
  listed folder of the wiring (OTHER_PACKAGES); a new slice must be listed. Inside a slice every
  module lives in a layer folder, except its `__init__.py` and `public.py` (the kernel has no
  public module).
- How a slice or kernel module imports the package: it names a module at or below a layer
  folder (`from memory_service.tasks.domain import tasks`, `import memory_service.kernel.
  domain.model as model`; without `as`, `import a.b.c` binds the package `a` and is refused),
  or takes names from another slice's public module (`from memory_service.<slice>.public
  import Name`). Nothing else: not `import memory_service`, not a slice or the kernel as
  a package, not a public module as a module. An attribute of an imported module of the
  package (`names.rules.supersede`) is judged as if it had been imported by name. No star
  import anywhere in the package, and no dynamic import or code (`__import__`,
  `importlib.import_module`, `exec`, `eval`, a spec's loader, `sys.modules`, `getattr` on
  `importlib`/`sys`/`builtins`, `pkgutil`, `pydoc`, `runpy`) in a slice or the kernel: a list
  against the ways a module is reached by a string, not a sandbox.
- Slice boundary: a slice imports another slice only through that slice's public module,
  `memory_service/<slice>/public.py`, never its internals. A public module holds only
  `from <module> import Name as Name` lines, and each name, followed to where it is defined,
  is its own slice's and not a module (no code of its own, no corridor from another slice or
  the kernel). The kernel imports nothing of the package outside the kernel (no slice,
  no wiring, no testing/, config, command lines).
- Layers, inside every slice and the kernel, judged on where an imported name really lives: a
  name imported from any module of the package (a public module, an app module re-exporting a
  domain rule, `Transactions as Tx`) is followed through the `from A import N` / `import A as N`
  / `N = M` bindings of each module (and tuple unpacking, `:=`, `M if c else K`, `M or K`,
  `[M][0]`) to every module that may define it, and every module on the way
  (public modules aside) is judged as well as the one at the end:
  - transport/ handles inbound gRPC only: never storage, adapters, workers, the wiring or
    SQLAlchemy. From a domain it takes only the types it converts, names, errors and field
    rules (TRANSPORT_MAY_USE): never a use case and never a unit of work, so every read and
    write reaches the domain through one app/ entry.
  - app/ runs use cases over ports: no gRPC, no generated protos, no SQL, no transport, no
    storage, adapters or workers.
  - storage/ keeps records: no transport, gRPC or generated protos.
  - workers/ run in the background: no transport.
  - domain/ imports only domains (its own, the kernel's, another slice's through its public
    module) and the standard library (named exceptions below, with why).
- Slices may not import each other in a circle, even through public modules: each circle is
  a violation, named with one path around it.
- A public module re-exports names, never a whole module: attributes reached through a module
  are judged by nobody.

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

from slice_map import SLICES  # the one list of slices (scripts/ is this script's path)

PACKAGE = "memory_service"
KERNEL = "kernel"
PUBLIC = "public"
LAYERS = ("domain", "app", "storage", "transport", "adapters", "workers")
# Folders of memory_service/ that are neither a slice nor the kernel: they build or drive the
# slices and may import anything. A folder holding Python that is not listed is refused.
OTHER_PACKAGES = ("testing", "memoryctl")
WIRING = tuple(
    f"{PACKAGE}.{name}" for name in ("bootstrap", "server", "unit_of_work", "__main__", "cli")
)
GRPC = ("grpc", "grpc_health", "grpc_status", "grpc_reflection", "crmmem")
THIRD_PARTY = {
    "transport": ("sqlalchemy",),
    "app": (*GRPC, "google.protobuf", "sqlalchemy"),
    "storage": GRPC,
}
LAYERS_REFUSED = {
    "transport": ("storage", "adapters", "workers"),
    "app": ("storage", "transport", "adapters", "workers"),
    "storage": ("transport",),
    "workers": ("transport",),
}
# Dynamic imports and code: a module named in a string is judged by no rule.
DYNAMIC_NAMES = frozenset({"__import__", "exec", "eval", "import_module"})
DYNAMIC_ATTRIBUTES = frozenset(
    {"__import__", "import_module", "exec_module", "load_module", "module_from_spec"}
)
DYNAMIC_MODULES = ("runpy", "pkgutil", "pydoc")
# `sys.modules[...]`, `getattr(importlib, ...)`: a module reached by a string either way.
DYNAMIC_OWNERS = frozenset({"sys", "importlib", "builtins"})
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
    # field patterns and limits checked at the edge (by name: not applicable_revision, state_at,
    # supersede nor any other rule a use case decides with)
    f"{K}.domain.rules": frozenset(
        {
            "KEY_PATTERN",
            "SUBJECT_ID_PATTERN",
            "MAX_BATCH_ITEMS",
            "MAX_CONTEXT_CUSTOMERS",
            "MAX_DISPLAY_NAME_CHARS",
            "MAX_EVIDENCE_MESSAGES",
            "MAX_EVIDENCE_REF_CHARS",
            "MAX_EXCERPT_CHARS",
            "MAX_FILTER_CHARS",
            "MAX_ID_CHARS",
            "MAX_MESSAGE_CHARS",
            "MAX_PAGE_TOKEN_CHARS",
            "MAX_QUERY_CHARS",
            "MAX_QUOTE_CHARS",
            "MAX_REPEATED_ITEMS",
            "MAX_REQUEST_ID_CHARS",
            "MAX_RESOURCE_NAME_CHARS",
            "MAX_STORED_INT",
            "MAX_TASK_PAYLOAD_BYTES",
            "MAX_TASK_STATUS_CHARS",
            "MAX_VALUE_CHARS",
            "check_interval",
            "names_a_subject",
            "text_problem",
        }
    ),
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


def is_public(module: str) -> bool:
    parts = module.split(".")
    return len(parts) == 3 and parts[0] == PACKAGE and parts[1] in SLICES and parts[2] == PUBLIC


Binding = tuple[str, str | None]


def module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run when a module is imported: into if/try/with blocks, not into a def
    or a class (an import there binds no name of the module)."""
    for node in body:
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from module_level([n for n in inner if isinstance(n, ast.stmt)])
        if isinstance(node, ast.Try | ast.TryStar):
            for handler in node.handlers:
                yield from module_level(handler.body)


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, Path] = {}
        for path in sorted((root / PACKAGE).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            self.modules[".".join(parts)] = path
        self.syntax: dict[str, ast.Module] = {}
        self._bindings: dict[str, dict[str, Binding]] = {}

    def parse(self, module: str) -> ast.Module:
        if module not in self.syntax:
            path = self.modules[module]
            self.syntax[module] = ast.parse(path.read_text(encoding="utf-8"), str(path))
        return self.syntax[module]

    def is_package(self, name: str) -> bool:
        return self.root.joinpath(*name.split(".")).is_dir()

    def resolve(self, node: ast.ImportFrom, module: str) -> str:
        base = node.module or ""
        if node.level:
            is_init = self.modules.get(module, Path()).name == "__init__.py"
            parts = module.split(".")
            parent = parts[: len(parts) - node.level + (1 if is_init else 0)]
            base = ".".join([*parent, base] if base else parent)
        return base

    def imports(self, node: ast.stmt, module: str) -> Iterator[tuple[str, str | None, str]]:
        """(module, name, bound as) for one import statement: name is None when a whole module
        is imported (`import a.b`, or `from a import b` where a/b is a module)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    yield alias.name, None, alias.asname
                else:  # `import a.b.c` binds a, the package, through which all of it is reached
                    yield alias.name.split(".")[0], None, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = self.resolve(node, module)
            package = self.is_package(base)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                bound = alias.asname or alias.name
                if package and (full in self.modules or self.is_package(full)):
                    yield full, None, bound
                else:
                    yield base, alias.name, bound

    def uses(self, tree: ast.AST, module: str) -> Iterator[tuple[str, str | None, str | None, int]]:
        """(module, name, bound as, line) for every import statement of a module."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:  # the whole dotted module, whatever it binds
                    yield alias.name, None, alias.asname, node.lineno
            elif isinstance(node, ast.ImportFrom):
                for used, name, bound in self.imports(node, module):
                    yield used, name, bound, node.lineno

    def bindings(self, module: str) -> dict[str, list[Binding]]:
        """The names a module binds to names it imported: name -> every (module, name or None
        for a whole module) it may stand for. Followed: imports, `N = M`, `N = m.M`, tuple
        unpacking (`N, _ = M, None`), `(N := M)`, and a value that only picks among imported
        names (`M if c else K`, `M or K`, `[M][0]`). A call makes a new value, not an alias."""
        if module not in self._bindings:
            found: dict[str, list[Binding]] = {}
            self._bindings[module] = found
            if module in self.modules:
                for node in module_level(self.parse(module).body):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        for used, name, bound in self.imports(node, module):
                            # if/else and try/except fallbacks: every import of a name counts
                            if (used, name) not in found.setdefault(bound, []):
                                found[bound].append((used, name))
                    elif isinstance(node, ast.Assign):
                        for target in node.targets:
                            self.bind(target, node.value, found)
                    elif isinstance(node, ast.AnnAssign) and node.value is not None:
                        self.bind(node.target, node.value, found)
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        continue
                    for inner in ast.walk(node):
                        if isinstance(inner, ast.NamedExpr):
                            self.bind(inner.target, inner.value, found)
        return self._bindings[module]

    def bind(self, target: ast.expr, value: ast.expr, found: dict[str, list[Binding]]) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
                for one, other in zip(target.elts, value.elts, strict=True):
                    self.bind(one, other, found)
            else:
                for one in target.elts:
                    self.bind(one, value, found)
            return
        if isinstance(target, ast.Starred):
            self.bind(target.value, value, found)
            return
        sources = self.sources(value, found)
        if isinstance(target, ast.Name) and sources:
            known = found.setdefault(target.id, [])
            known.extend(s for s in dict.fromkeys(sources) if s not in known)

    def sources(self, value: ast.expr, found: dict[str, list[Binding]]) -> list[Binding]:
        """What an expression may evaluate to, among the names a module imported."""
        if isinstance(value, ast.Name):
            return list(found.get(value.id, []))
        if isinstance(value, ast.Attribute):
            return [
                hop
                for owner in self.sources(value.value, found)
                for hop in self.attribute(owner, value.attr)
            ]
        if isinstance(value, ast.IfExp):
            return [*self.sources(value.body, found), *self.sources(value.orelse, found)]
        if isinstance(value, ast.BoolOp):
            return [b for v in value.values for b in self.sources(v, found)]
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            return [b for v in value.elts for b in self.sources(v, found)]
        if isinstance(value, ast.Subscript | ast.Starred | ast.NamedExpr):
            return self.sources(value.value, found)
        return []

    def attribute(self, owner: Binding, attr: str) -> list[Binding]:
        """`owner.attr`: an attribute of a module is that module's name; of anything else (a
        class's method, say), the thing it belongs to is what is judged."""
        module, name = owner
        if name is None:
            return [(module, attr)]
        if f"{module}.{name}" in self.modules or self.is_package(f"{module}.{name}"):
            return [(f"{module}.{name}", attr)]
        ends = [end for end in self.ends(module, name) if end != owner]
        return [hop for end in ends for hop in self.attribute(end, attr)] or [owner]

    def chain(self, module: str, name: str | None) -> list[Binding]:
        """Every module an imported name passes through, from the one imported to every one
        that may define it: `from A import N` where A has `from B import N` (or `import ...
        as N`, or any binding `bindings` follows)."""
        hops: list[Binding] = [(module, name)]
        todo: list[Binding] = [(module, name)]
        while todo:
            module, name = todo.pop()
            if name is None or module not in self.modules:
                continue
            for bound in self.bindings(module).get(name, []):
                if bound in hops:
                    continue
                if bound[1] is None and self.is_package(bound[0]) and bound[0] not in self.modules:
                    continue
                hops.append(bound)
                todo.append(bound)
        return hops

    def ends(self, module: str, name: str | None) -> list[Binding]:
        """Where a name is finally defined: the hops of its chain that bind it no further."""
        return [
            (m, n)
            for m, n in self.chain(module, name)
            if n is None or m not in self.modules or not self.bindings(m).get(n)
        ]


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
        return "a module with a use case or a rule, imported whole (import the listed names only)"
    if name not in allowed:
        return "not a type, name, error or rule transport/ may use (see TRANSPORT_MAY_USE)"
    return None


def layer_problems(module: str, layer: str, real: str, real_name: str | None) -> Iterator[str]:
    """What is wrong with a module of `layer` using `real_name` of `real` (one hop)."""
    _, real_layer = place(real)
    real_shown = real if real_name is None else f"{real}.{real_name}"
    top = real.split(".")[0]
    if layer == "domain":
        allowed = DOMAIN_EXCEPTIONS.get(module, frozenset())
        ours = top == PACKAGE
        if (ours and real_layer != "domain") or (
            not ours and top not in sys.stdlib_module_names and top not in allowed
        ):
            yield f"domain imports {real_shown}"
        return
    for prefix in THIRD_PARTY.get(layer, ()):
        if within(real, prefix):
            yield f"{layer} imports {real_shown}"
    if real_layer in LAYERS_REFUSED.get(layer, ()):
        yield f"{layer} imports {real_layer} ({real_shown})"
    if layer == "transport":
        problem = transport_problem(real, real_name)
        if problem:
            yield f"transport imports {real_shown}: {problem}"


def layout_problems(root: Path, tree: Tree) -> Iterator[str]:
    """Folders of the package that are no listed slice, and modules outside a layer folder."""
    known = (*SLICES, KERNEL, *OTHER_PACKAGES)
    for folder in sorted((root / PACKAGE).iterdir()):
        if not folder.is_dir() or folder.name == "__pycache__" or folder.name in known:
            continue
        if any(folder.rglob("*.py")):
            yield (
                f"{folder.relative_to(root).as_posix()}/: a package that is no listed slice "
                "(add a new slice to SLICES in scripts/slice_map.py)"
            )
    for module, path in tree.modules.items():
        own, layer = place(module)
        if own is None:
            continue
        parts = module.split(".")
        where = path.relative_to(root).as_posix()
        if len(parts) == 2 or (own != KERNEL and is_public(module) and path.name == "public.py"):
            continue
        in_folder = layer is not None and (root / PACKAGE / own / layer) in path.parents
        if not in_folder:
            yield f"{where}: a module of {own} outside its layer folders ({', '.join(LAYERS)})"


def import_problem(own: str, used: str, name: str | None) -> str | None:
    """Rule 1: a slice or kernel module names a module at or below a layer folder, or takes
    names from another slice's public module; anything else reaches past the rules."""
    if not within(used, PACKAGE):
        return None
    where, layer = place(used)
    if layer is not None:
        return None
    if name is not None and is_public(used) and where != own:
        return None
    if is_public(used) and where == own:
        return "a slice imports its own modules, not its public module"
    if is_public(used):
        return f"a public module imported whole; write `from {used} import Name`"
    return "names no module at or below a layer folder, nor names from another slice's public"


def dynamic_problems(syntax: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(syntax):
        if isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES:
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute) and node.attr in DYNAMIC_ATTRIBUTES:
            yield node.lineno, node.attr
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "modules"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            yield node.lineno, "sys.modules"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in DYNAMIC_OWNERS
        ):
            yield node.lineno, f"getattr({node.args[0].id}, ...)"
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in DYNAMIC_NAMES | DYNAMIC_ATTRIBUTES:
                    yield node.lineno, alias.name
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for used in names:
                if any(within(used or "", m) for m in DYNAMIC_MODULES):
                    yield node.lineno, used or ""


def check(root: Path) -> tuple[list[str], dict[str, set[str]]]:
    tree = Tree(root)
    found: list[str] = list(layout_problems(root, tree))
    depends: dict[str, set[str]] = defaultdict(set)
    for module, path in tree.modules.items():
        where = path.relative_to(root).as_posix()
        syntax = tree.parse(module)
        for node in ast.walk(syntax):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                base = tree.resolve(node, module)
                found.append(f"{where}:{node.lineno}: a star import (from {base} import *)")
        own, layer = place(module)
        if own is None:
            continue  # the wiring and testing/ may import anything
        for line, what in dynamic_problems(syntax):
            found.append(f"{where}:{line}: a dynamic import or code ({what}) in {own}")
        for node in ast.walk(syntax):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is None and "." in alias.name and within(alias.name, PACKAGE):
                        parent, _, leaf = alias.name.rpartition(".")
                        found.append(
                            f"{where}:{node.lineno}: `import {alias.name}` binds the whole "
                            f"package ({PACKAGE}.*, by attribute); write `from {parent} import "
                            f"{leaf}`"
                        )
        public = is_public(module)
        seen: set[str] = set()
        if public:
            found += public_problems(tree, module, own, where)
        for used, name, _, line in tree.uses(syntax, module):
            if name == "*":
                continue
            at = f"{where}:{line}"
            shown = used if name is None else f"{used}.{name}"
            other, _ = place(used)
            problem = import_problem(own, used, name)
            if problem:
                found.append(f"{at}: {own} imports {shown}: {problem}")
            if own == KERNEL and within(used, PACKAGE) and not within(used, K):
                found.append(f"{at}: the kernel imports {shown}, outside the kernel")
            elif any(within(used, w) or within(shown, w) for w in WIRING):
                found.append(f"{at}: {own} imports the wiring ({shown})")
            whole = name is None or f"{used}.{name}" in tree.modules
            if public and within(used, PACKAGE) and whole:
                found.append(
                    f"{at}: a public module re-exports a whole module ({shown}); "
                    "re-export the names other slices use, so each is judged where it lives"
                )
            if other in SLICES and other != own:
                depends[own].add(other)
                if public:
                    found.append(f"{at}: a public module re-exports another slice ({shown})")
                elif used != f"{PACKAGE}.{other}.{PUBLIC}":
                    found.append(
                        f"{at}: {own} imports {other}'s internals ({shown}); "
                        f"import from {PACKAGE}.{other}.{PUBLIC}"
                    )
            if layer is None:
                continue
            found += judged(tree, module, layer, [(used, name)], at, seen)
        if layer is not None:
            for line, reached in attributes_reached(tree, syntax, module):
                found += judged(tree, module, layer, reached, f"{where}:{line}", seen)
    return found, depends


def judged(
    tree: Tree, module: str, layer: str, used: list[Binding], at: str, seen: set[str]
) -> list[str]:
    """The layer problems of using these names, each followed to every module it passes
    through; a problem already reported at the same place is not repeated."""
    found: list[str] = []
    for first, first_name in used:
        for real, real_name in tree.chain(first, first_name):
            if is_public(real):
                continue  # judged by the slice boundary; its names by where they come from
            for problem in layer_problems(module, layer, real, real_name):
                if f"{at}: {problem}" not in seen:
                    seen.add(f"{at}: {problem}")
                    found.append(f"{at}: {problem}")
    return found


def attributes_reached(
    tree: Tree, syntax: ast.Module, module: str
) -> Iterator[tuple[int, list[Binding]]]:
    """`names.rules.supersede`: what an attribute of an imported module of the package
    reaches, judged as if it had been imported by name."""
    imported: dict[str, list[Binding]] = {}
    for node in ast.walk(syntax):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for used, name, bound in tree.imports(node, module):
                imported.setdefault(bound, []).append((used, name))
    for bound, binding in tree.bindings(module).items():
        imported.setdefault(bound, []).extend(b for b in binding if b not in imported[bound])
    for node in ast.walk(syntax):
        if isinstance(node, ast.Attribute):
            reached = [(m, n) for m, n in tree.sources(node, imported) if within(m, PACKAGE)]
            if reached:
                yield node.lineno, reached


def public_problems(tree: Tree, module: str, own: str, where: str) -> Iterator[str]:
    """A public module only re-exports names its own slice defines: no code of its own (a
    function there would be judged by no layer), no name passed on from another slice or the
    kernel (a corridor), no module however many hops away."""
    for node in tree.parse(module).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        names_only = (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and all(alias.asname in (None, alias.name) for alias in node.names)
        )
        if not (docstring or future or names_only):
            yield (
                f"{where}:{node.lineno}: a public module holds only `from <its slice's module> "
                "import Name as Name` lines (and its docstring)"
            )
    for name, bindings in tree.bindings(module).items():
        for first in bindings:
            if first[0] == "__future__":
                continue
            for real, real_name in tree.ends(*first):
                shown = real if real_name is None else f"{real}.{real_name}"
                whole = real_name is None or f"{real}.{real_name}" in tree.modules
                if not within(real, f"{PACKAGE}.{own}"):
                    yield f"{where}: a public module passes on {name}, not its slice's ({shown})"
                elif whole:
                    yield f"{where}: a public module re-exports a whole module ({name}: {shown})"


def circles(depends: dict[str, set[str]]) -> list[list[str]]:
    """The slices that import each other in a circle, each as one cycle through all of them
    where there is one (Tarjan's strongly connected components, then a walk)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(depends.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in depends.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(depends):
        if node not in index:
            visit(node)
    return sorted(groups)


def a_cycle(group: list[str], depends: dict[str, set[str]]) -> list[str]:
    """One shortest path from the group's first slice back to it (breadth first)."""
    start = group[0]
    paths = [[start]]
    while paths:
        path = paths.pop(0)
        for nxt in sorted(depends.get(path[-1], set()) & set(group)):
            if nxt == start:
                return [*path, start]
            if nxt not in path:
                paths.append([*path, nxt])
    return group


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found, depends = check(root)
    found += [
        f"the slices {', '.join(group)} import each other in a circle, e.g. "
        f"{' -> '.join(a_cycle(group, depends))}: one of them must stop needing the next "
        "(a port in its domain, or the wiring joining them)"
        for group in circles(depends)
    ]
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
