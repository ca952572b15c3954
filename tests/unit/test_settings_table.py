"""The configuration table of docs/settings.md is the settings classes' own: every variable
either process reads is listed with its default, and nothing is listed that no process reads.
The processes read the environment only through those classes."""

from __future__ import annotations

import re
from pathlib import Path

from memory_service.config import Settings
from retrieval_service.config import RetrievalSettings
from scripts.settings_table import SETTINGS_DOC, documented_table, render, variables

ROOT = Path(__file__).parents[2]
PROCESS_PACKAGES = ("memory_service", "retrieval_service", "crmmem_runtime")
# Environment reads allowed outside the settings classes: the client CLI (not a process), the
# error line quoting a bad value, and defaults the sidecar sets for its libraries.
ALLOWED = {
    "memory_service/cli.py",
    "memory_service/memoryctl/connection.py",
    "crmmem_runtime/settings.py",
    "retrieval_service/embedding/sentence_transformer.py",
}


def test_the_documented_table_is_generated_from_the_settings() -> None:
    table = documented_table(SETTINGS_DOC.read_text())
    listed = set(re.findall(r"^\| `([A-Z_]+)` \|", table, re.MULTILINE))
    read = set(variables(Settings)) | set(variables(RetrievalSettings))
    assert sorted(read - listed) == [], "read by a process but missing from docs/settings.md"
    assert sorted(listed - read) == [], "in docs/settings.md but read by no process"
    assert table == render(), "docs/settings.md is stale: run `make settings-table`"


def test_every_setting_has_a_description() -> None:
    for cls in (Settings, RetrievalSettings):
        for name, field in variables(cls).items():
            assert field.description, f"{name} has no docstring"


def test_the_processes_read_the_environment_only_through_their_settings() -> None:
    readers = re.compile(r"os\.environ(?!\.setdefault)|os\.getenv|environ\.get")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in PROCESS_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in ALLOWED
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if readers.search(line)
    ]
    assert offenders == []


def test_names_and_defaults_are_unchanged() -> None:
    """The variables and defaults the processes had before they were typed."""
    memory = {name: field.default for name, field in variables(Settings).items()}
    assert memory["MEMORY_LISTEN"] == "127.0.0.1:50051"
    assert memory["MEMORY_RETRIEVAL_ADDRESS"] == "127.0.0.1:50052"
    assert memory["MEMORY_JWT_ISSUER"] == "crmmem"
    assert memory["MEMORY_JWT_AUDIENCE"] == "crmmem.memory"
    assert memory["MEMORY_JWT_MAX_LIFETIME_SECONDS"] == 86400
    assert memory["MEMORY_IDEMPOTENCY_TTL_HOURS"] == 48
    assert memory["MEMORY_MAX_WORKERS"] == 16
    assert (memory["MEMORY_SHUTDOWN_GRACE_SECONDS"], memory["MEMORY_SHUTDOWN_DRAIN_SECONDS"]) == (
        10,
        5,
    )
    assert memory["MEMORY_RECALL_TIMEOUT_MS"] == 5000
    assert memory["MEMORY_RECALL_MARGIN_MS"] == 50
    assert memory["MEMORY_BREAKER_MIN_CALLS"] == 5
    assert memory["MEMORY_BREAKER_FAILURE_RATE"] == 0.5
    assert memory["MEMORY_OUTBOX_POLL_SECONDS"] == 1.0
    assert memory["MEMORY_AUTO_MIGRATE"] is True
    assert memory["MEMORY_DEV_MODE"] is False
    assert memory["MEMORY_DELETION_MARKER_DAYS"] == 365
    sidecar = {name: field.default for name, field in variables(RetrievalSettings).items()}
    assert sidecar["RETRIEVAL_LISTEN"] == "127.0.0.1:50052"
    assert sidecar["RETRIEVAL_DOCUMENT_CHUNK_MS"] == 25
    assert sidecar["RETRIEVAL_SHUTDOWN_DRAIN_SECONDS"] == 2
    assert sidecar["QDRANT_SHARDS"] == 1
