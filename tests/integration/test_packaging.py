"""The memory service runs without the sidecar's model stack, and the sidecar without the memory
service: `pip install .` is enough for `python -m memory_service`, the `[sidecar]` extra adds
what `python -m retrieval_service` needs, and `crmmem_runtime` is all they share."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]
ML_STACK = (
    "torch",
    "sentence_transformers",
    "transformers",
    "onnxruntime",
    "tokenizers",
    "qdrant_client",
    "qdrant_edge",
)
ML_DISTRIBUTIONS = (
    "torch",
    "sentence-transformers",
    "onnxruntime",
    "qdrant-client",
    "qdrant-edge-py",
)


def imported_top_levels(package: str) -> dict[str, set[str]]:
    """For each module file of `package`, the top-level packages it imports (anywhere in it,
    function-local imports included)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


def test_the_sidecar_never_imports_the_memory_service() -> None:
    offenders = [f for f, names in imported_top_levels("retrieval_service").items()
                 if "memory_service" in names]  # fmt: skip
    assert offenders == []


def test_the_shared_runtime_imports_neither_process() -> None:
    offenders = [f for f, names in imported_top_levels("crmmem_runtime").items()
                 if names & {"memory_service", "retrieval_service", *ML_STACK}]  # fmt: skip
    assert offenders == []


def test_the_memory_service_never_imports_the_sidecar_or_its_model_stack() -> None:
    offenders = [f for f, names in imported_top_levels("memory_service").items()
                 if names & {"retrieval_service", *ML_STACK}]  # fmt: skip
    assert offenders == []


def loaded_after(statements: str) -> set[str]:
    """Top-level modules loaded by a fresh interpreter after running `statements`."""
    probe = f"{statements}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return {name.split(".")[0] for name in json.loads(output.splitlines()[-1])}


def test_the_memory_service_entry_point_loads_no_model_stack() -> None:
    """What `python -m memory_service serve` imports, down to the composition root and every
    module of the package, in a fresh interpreter."""
    loaded = loaded_after(
        "import pkgutil, importlib, memory_service, memory_service.__main__\n"
        "for m in pkgutil.walk_packages(memory_service.__path__, 'memory_service.'):\n"
        "    if '.migrations' not in m.name: importlib.import_module(m.name)"
    )
    assert "memory_service" in loaded
    assert loaded & {*ML_STACK, "retrieval_service"} == set()


def test_the_sidecar_entry_point_loads_no_memory_service() -> None:
    loaded = loaded_after(
        "import retrieval_service.__main__, retrieval_service.server, retrieval_service.config"
    )
    assert "retrieval_service" in loaded
    assert "memory_service" not in loaded


def test_the_model_stack_is_the_sidecar_extra_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    sidecar = " ".join(extras["sidecar"])
    export = " ".join(extras["sidecar-export"])
    for distribution in ML_DISTRIBUTIONS:
        assert distribution not in base
        assert distribution in f"{sidecar} {export}"
    assert "onnxruntime==" in sidecar
    # torch only exports the model (and runs RETRIEVAL_EMBEDDER=torch): the sidecar's own
    # install, and its image, go without it.
    assert "torch" not in sidecar
    assert "torch==" in export  # pinned: an unpinned torch pulls a multi-GB CUDA build
