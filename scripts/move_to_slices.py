"""Moves `memory_service/` into feature slices (issue #39) and rewrites every reference to it.

    python scripts/move_to_slices.py            # from the repository root, on a clean tree

On the latest main: bring this script, its table, the check and the READMEs from the `slices`
branch, run, then take (or merge by hand) the two docs it rewrote:

    git checkout -b slices-again main
    git checkout slices -- scripts/slice_map.py scripts/move_to_slices.py \
        scripts/check_slices.py tests/unit/test_slice_check.py ':(glob)memory_service/*/README.md'
    python scripts/move_to_slices.py && git commit -qm "python scripts/move_to_slices.py"
    git checkout slices -- docs/architecture.md docs/layout.md

Idempotent: run it on today's main or on a main others changed since, and again on its own
result (a second run changes nothing). It stores no diff: every rewrite is computed from the
files as they are now, from the table in `scripts/slice_map.py`:

1. `git mv` each file of `memory_service/` to its place (MOVES); a file in neither MOVES nor
   STAYS stops the run, named, before anything changes.
2. Moves the classes SPLITS names into their own module (unused imports pruned by ruff).
3. Rewrites the imports of every Python file of the repository (`from memory_service.a.b import
   x`, `from memory_service.a import b`, `import memory_service.a.b`), from its syntax tree; an
   import across slices goes through the other slice's public module, and each slice's
   `public.py` is regenerated from what the other slices import.
4. Rewrites dotted names (mock.patch targets, `python -m` lines, Alembic script locations) and
   file paths (`memory_service/storage/scoped.py`, and `storage/scoped.py` as the docs write
   it) in every tracked text file: Python, Markdown, TOML, YAML, INI, shell, Makefile,
   Dockerfile. A bare old package name (`memory_service.domain`) is ambiguous and reported.
5. Replaces `scripts/check_layers.py` (and its test) by `scripts/check_slices.py`, removes the
   emptied folders, sorts imports and formats what it touched (ruff).
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from slice_map import (  # noqa: E402
    KERNEL,
    LAYERS,
    MOVES,
    PUBLIC,
    SLICES,
    SPLIT_DOCS,
    SPLITS,
    STAYS,
)

PACKAGE = "memory_service"
PKG = ROOT / PACKAGE
SELF = {"scripts/move_to_slices.py", "scripts/slice_map.py"}
TEXT_SUFFIXES = {
    ".py",
    ".pyi",
    ".mako",
    ".md",
    ".toml",
    ".ini",
    ".cfg",
    ".yaml",
    ".yml",
    ".sh",
    ".txt",
}
TEXT_NAMES = {"Makefile", "Dockerfile"}
RETIRED = ("scripts/check_layers.py", "tests/unit/test_layer_check.py")
INIT_DOCS = {
    KERNEL: "What every slice shares: names, errors, units of work, scoping, paging, ports.",
    "domain": "Rules and records, no I/O: the standard library and the kernel's domain only.",
    "app": "One entry per use case: the unit of work, the request id, commit, side effects.",
    "storage": "SQLAlchemy repositories, every statement built by kernel/storage/scoped.py.",
    "transport": "Inbound gRPC: parse the request once, call one app entry, present the answer.",
    "adapters": "Outbound ports that need a third-party library.",
    "workers": "Background work beside the request path.",
}


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def tracked() -> list[str]:
    return [line for line in git("ls-files", "-z").split("\0") if line]


# ---------------------------------------------------------------- the table, as modules


def destination(rel: str) -> str | None:
    """Where `rel` (a path under memory_service/) goes, or None when it stays."""
    if rel in MOVES:
        return MOVES[rel]
    for key, value in MOVES.items():
        if key.endswith("/") and rel.startswith(key):
            return value + rel[len(key) :]
    return None


def stays(rel: str) -> bool:
    return any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in STAYS)


def dotted(rel: str) -> str:
    """memory_service's module of a path under it (a package for __init__.py)."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def module_map() -> dict[str, str]:
    """Old dotted module -> new dotted module, for every module and package of the table.

    An old package maps to a new one only where the whole package moved to one place
    (domain/importing -> imports/domain, storage/migrations -> kernel/storage/migrations)."""
    found: dict[str, str] = {}
    for old, new in MOVES.items():
        if old.endswith("/"):
            found[dotted(old.rstrip("/") + ".py")] = dotted(new.rstrip("/") + ".py")
        elif not old.endswith("__init__.py") or old == "domain/importing/__init__.py":
            found[dotted(old)] = dotted(new)
    # the migrations' files, whose names are not identifiers, are reached by path only
    return found


MODULES = module_map()
# old layer packages split over the slices: `from memory_service.domain import x` is resolved
# name by name, and a bare mention in text is reported
SPLIT_PACKAGES = {dotted(old) for old in MOVES if old.endswith("__init__.py")} - set(MODULES)
SPLIT_SYMBOLS = {
    (dotted(source), name): dotted(target)
    for source, targets in SPLITS.items()
    for target, names in targets.items()
    for name in names
}


def renamed(name: str) -> str:
    """The new dotted name of `name` (a module, or an attribute of one), by its longest
    moved prefix; unchanged when no prefix moved."""
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in MODULES:
            return ".".join([MODULES[prefix], *parts[end:]])
    return name


def slice_of_module(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) > 1 and parts[0] == PACKAGE and parts[1] in (*SLICES, KERNEL):
        return parts[1]
    return None


def slice_of_path(rel_to_root: str) -> str | None:
    parts = rel_to_root.split("/")
    if len(parts) > 2 and parts[0] == PACKAGE and parts[1] in (*SLICES, KERNEL):
        return parts[1]
    return None


# ---------------------------------------------------------------- step 1: files


def check_table() -> None:
    files = [f[len(PACKAGE) + 1 :] for f in tracked() if f.startswith(PACKAGE + "/")]
    unplaced = [f for f in files if destination(f) is None and not stays(f)]
    if unplaced:
        print("not in scripts/slice_map.py (add to MOVES or STAYS):", file=sys.stderr)
        for f in unplaced:
            print(f"  memory_service/{f}", file=sys.stderr)
        sys.exit(2)


def move_files() -> int:
    moved = 0
    for full in tracked():
        if not full.startswith(PACKAGE + "/"):
            continue
        rel = full[len(PACKAGE) + 1 :]
        new = destination(rel)
        if new is None or not (ROOT / full).exists():
            continue
        target = PKG / new
        target.parent.mkdir(parents=True, exist_ok=True)
        git("mv", full, f"{PACKAGE}/{new}")
        moved += 1
    return moved


def make_packages() -> None:
    for name in (KERNEL, *SLICES):
        folder = PKG / name
        folder.mkdir(exist_ok=True)
        packages = [folder, *(p for p in folder.iterdir() if p.is_dir() and p.name in LAYERS)]
        for package in packages:
            init = package / "__init__.py"
            if init.exists():
                continue
            if package == folder:
                doc = INIT_DOCS[KERNEL] if name == KERNEL else f"The {name} slice (README.md)."
            else:
                doc = INIT_DOCS[package.name]
            init.write_text(f'"""{doc}"""\n', encoding="utf-8")
            git("add", str(init.relative_to(ROOT)))


def remove_empty_folders() -> None:
    for folder in sorted(PKG.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if not folder.is_dir():
            continue
        if folder.name == "__pycache__":
            owner = folder.parent
            if not any(p.suffix == ".py" for p in owner.iterdir()):
                shutil.rmtree(folder)
            continue
        if not any(folder.iterdir()):
            folder.rmdir()


# ---------------------------------------------------------------- step 2: splits


def block_span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) of a top-level definition with its decorators and the comment
    lines right above it."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    assert node.end_lineno is not None
    return start, node.end_lineno


def split_classes() -> list[Path]:
    touched = []
    for source_rel, targets in SPLITS.items():
        source = PKG / source_rel
        if not source.exists():
            continue
        text = source.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        header_end = 0
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            ):
                assert node.end_lineno is not None
                header_end = node.end_lineno
            else:
                break
        imports = [
            ast.get_source_segment(text, n) or ""
            for n in tree.body
            if isinstance(n, ast.Import | ast.ImportFrom)
        ]
        assigned = [
            n
            for n in tree.body
            if isinstance(n, ast.Assign | ast.AnnAssign) and n.lineno > header_end
        ]
        cut: list[tuple[int, int]] = []
        for target_rel, names in targets.items():
            blocks = [
                n
                for n in tree.body
                if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name in names
            ]
            if not blocks:
                continue
            spans = [block_span(lines, n) for n in blocks]
            cut += spans
            body = "\n\n".join("".join(lines[a:b]).rstrip() + "\n" for a, b in spans)
            used = {n.id for b in blocks for n in ast.walk(b) if isinstance(n, ast.Name)}
            helpers = [
                ast.get_source_segment(text, n) or ""
                for n in assigned
                if {t.id for t in ast.walk(n) if isinstance(t, ast.Name)} & used
            ]
            target = PKG / target_rel
            target.parent.mkdir(parents=True, exist_ok=True)
            doc = SPLIT_DOCS.get(target_rel, f"{', '.join(names)}: moved out of {source_rel}.")
            target.write_text(
                f'"""{doc}"""\n\n'
                + "\n".join(imports)
                + "\n\n"
                + "".join(h + "\n" for h in helpers)
                + "\n\n"
                + body,
                encoding="utf-8",
            )
            git("add", str(target.relative_to(ROOT)))
            touched.append(target)
        if cut:
            keep = [
                line
                for i, line in enumerate(lines)
                if not any(a <= i < b for a, b in cut) or i < header_end
            ]
            source.write_text("".join(keep), encoding="utf-8")
            touched.append(source)
    if touched:
        ruff("check", "--fix", "--select", "F401,I001", *map(str, touched))
    return touched


# ---------------------------------------------------------------- step 3: imports


class Publics:
    """What each slice's public module re-exports: name -> origin module."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, str]] = defaultdict(dict)

    def add(self, slice_name: str, name: str, origin: str) -> None:
        known = self.names[slice_name].get(name)
        if known and known != origin:
            sys.exit(f"{slice_name}.public: {name} from both {known} and {origin}")
        self.names[slice_name][name] = origin

    def load_existing(self) -> dict[str, dict[str, str]]:
        """The origins today's public modules give their names (a re-run starts from them)."""
        found: dict[str, dict[str, str]] = defaultdict(dict)
        for name in SLICES:
            path = PKG / name / f"{PUBLIC}.py"
            if not path.exists():
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        found[name][alias.asname or alias.name] = node.module
        return found


def is_module(name: str) -> bool:
    """Whether dotted `name` is a module or package of the tree as it is now."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def import_text(module: str, aliases: list[str], indent: str) -> str:
    joined = ", ".join(aliases)
    line = f"{indent}from {module} import {joined}"
    if len(line) <= 100:
        return line
    inner = "".join(f"{indent}    {a},\n" for a in aliases)
    return f"{indent}from {module} import (\n{inner}{indent})"


def rewrite_from(
    node: ast.ImportFrom, importer_slice: str | None, publics: Publics, existing: dict
) -> list[tuple[str, list[str]]] | None:
    """The statements (module, aliases) that replace `node`, or None to keep it."""
    module = node.module or ""
    if node.level or not (module == PACKAGE or module.startswith(PACKAGE + ".")):
        return None
    groups: dict[str, list[str]] = {}
    for alias in node.names:
        full = f"{module}.{alias.name}"
        shown = alias.asname
        if full in MODULES:  # `from package import module`
            new_full = MODULES[full]
            target, _, leaf = new_full.rpartition(".")
            name = leaf
            if leaf != alias.name and not shown:
                shown = alias.name
        else:
            target = renamed(module)
            name = alias.name
            target = SPLIT_SYMBOLS.get((target, name), target)
        owner = slice_of_module(target)
        public = f"{PACKAGE}.{owner}.{PUBLIC}"
        if (
            importer_slice is not None
            and owner in SLICES
            and owner != importer_slice
            and target != public
        ):
            publics.add(owner, name, target)
            target = public
        elif owner in SLICES and target == public and importer_slice != owner:
            origin = existing.get(owner, {}).get(name)
            if origin:
                publics.add(owner, name, origin)
        groups.setdefault(target, []).append(f"{name} as {shown}" if shown else name)
    if list(groups) == [module] and all(
        (f"{a.name} as {a.asname}" if a.asname else a.name) in groups[module] for a in node.names
    ):
        return None
    return list(groups.items())


def rewrite_imports(path: Path, publics: Publics, existing: dict) -> bool:
    text = path.read_text(encoding="utf-8")
    if PACKAGE not in text:
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    rel = path.relative_to(ROOT).as_posix()
    importer_slice = slice_of_path(rel)
    if importer_slice == KERNEL:
        importer_slice = None  # the kernel imports no slice: check_slices.py reports it
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if path.name == f"{PUBLIC}.py" and slice_of_path(rel) in SLICES:
                continue  # regenerated below
            statements = rewrite_from(node, importer_slice, publics, existing)
        elif isinstance(node, ast.Import):
            new_names = [renamed(a.name) for a in node.names]
            if new_names == [a.name for a in node.names]:
                continue
            statements = None
            first = lines[node.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            parts = [
                f"{n} as {a.asname}" if a.asname else n
                for n, a in zip(new_names, node.names, strict=True)
            ]
            assert node.end_lineno is not None
            edits.append((node.lineno - 1, node.end_lineno, f"{indent}import {', '.join(parts)}"))
            continue
        else:
            continue
        if statements is None:
            continue
        assert node.end_lineno is not None
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        last = lines[node.end_lineno - 1]
        if first[: len(indent)] != indent or first.strip()[:4] != "from" or ";" in last:
            sys.exit(f"{rel}:{node.lineno}: an import the script cannot rewrite by lines")
        new = "\n".join(import_text(m, a, indent) for m, a in statements)
        edits.append((node.lineno - 1, node.end_lineno, new))
    if not edits:
        return False
    for start, end, new in sorted(edits, reverse=True):
        tail = lines[end - 1]
        comment = ""
        if "#" in tail and end - start == 1:
            comment = "  " + tail[tail.index("#") :].rstrip("\n")
        lines[start:end] = [new + comment + "\n"]
    path.write_text("".join(lines), encoding="utf-8")
    return True


def write_publics(publics: Publics) -> list[Path]:
    written = []
    for name in SLICES:
        path = PKG / name / f"{PUBLIC}.py"
        exports = publics.names.get(name, {})
        by_origin: dict[str, list[str]] = defaultdict(list)
        for export, origin in sorted(exports.items()):
            by_origin[origin].append(export)
        body = [
            f'"""What other slices may use of the {name} slice: they import these names from\n'
            "here, never from the slice's modules (scripts/check_slices.py). Kept to what they\n"
            "use; "
            'first written by scripts/move_to_slices.py."""\n\n',
            "from __future__ import annotations\n\n",
        ]
        # `name as name` is an explicit re-export (PEP 484) and needs no __all__ list; one
        # statement a name, as ruff's isort (combine-as-imports off) keeps them
        for origin in sorted(by_origin):
            for export in by_origin[origin]:
                body.append(import_text(origin, [f"{export} as {export}"], "") + "\n")
        text = "".join(body)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            git("add", str(path.relative_to(ROOT)))
            written.append(path)
    return written


# ---------------------------------------------------------------- step 4: names and paths in text

# (a logger keeps the name it had, below: not rewritten)
DOTTED = re.compile(rf"(?<!getLogger\(\")\b{PACKAGE}(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Log lines name their logger, and operators filter on those names: a moved module keeps
# logging under its old name, so the move changes no log line.
OLD_NAME = {
    f"{PACKAGE}/{new}": dotted(old)
    for old, new in MOVES.items()
    if not old.endswith("/") and not old.endswith("__init__.py")
}


def path_pairs() -> list[tuple[str, str]]:
    """(old, new) paths under memory_service/, folders without their slash, longest first."""
    pairs = []
    for old, new in MOVES.items():
        if old.endswith("/"):
            pairs.append((old.rstrip("/"), new.rstrip("/")))
        elif old.endswith("__init__.py"):
            if old == "domain/importing/__init__.py":
                pairs.append(("domain/importing", "imports/domain"))
        else:
            pairs.append((old, new))
    return sorted(pairs, key=lambda p: -len(p[0]))


PATHS = path_pairs()
FULL_PATH = re.compile(
    rf"{PACKAGE}/(" + "|".join(re.escape(old) for old, _ in PATHS) + r")(?![\w])"
)
SHORT_PATH = re.compile(
    r"(?<![\w/.\-])(" + "|".join(re.escape(old) for old, _ in PATHS) + r")(?![\w])"
)
PATH_OF = dict(PATHS)
AMBIGUOUS: set[str] = set()


def rewrite_text(path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    new = text

    def dotted_name(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in SPLIT_PACKAGES:
            AMBIGUOUS.add(f"{rel}: {name}")
        return renamed(name)

    if rel in OLD_NAME:
        new = new.replace("getLogger(__name__)", f'getLogger("{OLD_NAME[rel]}")')
    new = DOTTED.sub(dotted_name, new)
    new = FULL_PATH.sub(lambda m: f"{PACKAGE}/{PATH_OF[m.group(1)]}", new)
    new = SHORT_PATH.sub(lambda m: PATH_OF[m.group(1)], new)
    new = new.replace("scripts/check_layers.py", "scripts/check_slices.py")
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


LIMIT = 100


def prose_lines(text: str) -> dict[int, str]:
    """0-based line -> its continuation prefix, for each line of a comment or of a
    triple-quoted string (a docstring's prose)."""
    found: dict[int, str] = {}
    lines = text.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return found
    for token in tokens:
        (row, col), (end_row, _) = token.start, token.end
        if token.type == tokenize.COMMENT and not lines[row - 1][:col].strip():
            found[row - 1] = lines[row - 1][:col] + "# "
        elif token.type == tokenize.STRING and token.string.lstrip("rRbBuUfF")[:3] in {
            '"""',
            "'''",
        }:
            indent = lines[row - 1][: len(lines[row - 1]) - len(lines[row - 1].lstrip())]
            for line in range(row - 1, end_row):
                found[line] = indent
    return found


def reflow(path: Path) -> None:
    """Wraps the comment and docstring lines a longer path pushed past the line limit: the
    overflow moves to the start of the next line of the same paragraph (or a line of its own)."""
    text = path.read_text(encoding="utf-8")
    if not any(len(line) > LIMIT for line in text.splitlines()):
        return
    prose = prose_lines(text)
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    carry = carry_prefix = ""
    while i < len(lines) or carry:
        line = lines[i] if i < len(lines) else ""
        prefix = prose.get(i)
        if carry:
            content = line[len(prefix) :] if prefix is not None and line.startswith(prefix) else ""
            joinable = (
                prefix is not None
                and line.startswith(prefix)
                and content.strip()
                and not content.startswith((" ", "-", "*", '"""', "'''"))
                and not re.match(r"\d+\.", content)
            )
            if joinable:
                line = f"{carry_prefix}{carry} {content}"
            else:
                out.append(f"{carry_prefix}{carry}")
                carry = ""
                continue
            carry = ""
        if prefix is not None and len(line) > LIMIT and "noqa" not in line and "://" not in line:
            cut = line.rfind(" ", len(prefix) + 1, LIMIT + 1)
            if cut > len(prefix):
                carry_prefix = prefix if i in prose else ""
                line, carry = line[:cut], line[cut + 1 :]
        out.append(line)
        i += 1
    path.write_text("\n".join(out) + ("\n" if text.endswith("\n") else ""), encoding="utf-8")


def text_files() -> list[Path]:
    found = []
    for rel in tracked():
        path = ROOT / rel
        if rel in SELF or not path.is_file() or path.is_symlink():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            found.append(path)
    return found


# ---------------------------------------------------------------- step 5: lint files, ruff


def ruff(*args: str) -> None:
    exe = ROOT / ".venv" / "bin" / "ruff"
    subprocess.run([str(exe) if exe.exists() else "ruff", *args], cwd=ROOT, check=False)


def retire_layer_check() -> None:
    for rel in RETIRED:
        if (ROOT / rel).exists() and (ROOT / "scripts" / "check_slices.py").exists():
            git("rm", "-q", rel)


def main() -> int:
    if not (ROOT / ".git").exists():
        sys.exit("run from a git checkout")
    check_table()
    moved = move_files()
    make_packages()
    split = split_classes()
    make_packages()  # the folders a split made
    retire_layer_check()
    publics = Publics()
    existing = publics.load_existing()
    python = [p for p in text_files() if p.suffix in {".py", ".pyi"}]
    # public modules first vanish from the walk (they are regenerated), then every file
    changed = [p for p in python if rewrite_imports(p, publics, existing)]
    changed += write_publics(publics)
    changed += [p for p in text_files() if rewrite_text(p)]
    remove_empty_folders()
    for path in changed:
        if path.suffix == ".py" and path.exists():
            reflow(path)
    py_changed = sorted({str(p) for p in [*changed, *split] if p.suffix == ".py" and p.exists()})
    if py_changed:
        ruff("check", "--fix", "--select", "I001,RUF022", "--quiet", *py_changed)
        ruff("format", "--quiet", *py_changed)
    git("add", "-A", PACKAGE, *sorted({str(p.relative_to(ROOT)) for p in changed if p.exists()}))
    print(f"moved {moved} files; rewrote {len(set(changed))} files")
    for line in sorted(AMBIGUOUS):
        print(f"left as is (an old layer package now spread over slices): {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
