"""memoryctl, the people-facing client, against a running service (issue 6's CLI)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.helpers import correct, create_pref, delete, next_monday
from tests.support.servers import ServerProcess, mint_token


def memoryctl(
    server: ServerProcess,
    tenant: str,
    *args: str,
    user: str = "mara",
    roles: tuple[str, ...] = (),
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """memoryctl as `user`, with `stdin` as what the person types."""
    env = {
        **os.environ,
        "MEMORY_ADDRESS": server.address,
        "MEMORY_TOKEN": mint_token(tenant, user, roles),
    }
    return subprocess.run(
        [sys.executable, "-m", "memory_service.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_history_shows_every_revision_with_its_source(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    memory = create_pref(mara, "meeting_time", "prefers morning meetings", key_context="work")
    correct(mara, memory, "prefers afternoon meetings")
    shown = memoryctl(memory_server, tenant, "history", memory.name)
    assert shown.returncode == 0, shown.stderr
    assert "r1" in shown.stdout
    assert "superseded" in shown.stdout
    assert "prefers afternoon meetings" in shown.stdout
    assert "conversations/" in shown.stdout  # where it came from
    as_json = json.loads(memoryctl(memory_server, tenant, "--json", "history", memory.name).stdout)
    assert [r["revision_number"] for r in as_json["revisions"]] == ["1", "2"]


def test_about_answers_what_is_remembered_and_where_it_came_from(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    create_pref(mara, "meeting_time", "prefers morning meetings")
    about = memoryctl(memory_server, tenant, "about", "morning")
    assert about.returncode == 0, about.stderr
    assert "search unavailable" in about.stdout  # this server runs without the sidecar
    assert "prefers morning meetings" in about.stdout
    assert "user (user_statement)" in about.stdout


def test_delete_prints_the_receipt_and_errors_are_readable(
    memory_server: ServerProcess, tenant: str, tmp_path: Path
) -> None:
    mara = memory_server.client(tenant, "mara")
    memory = create_pref(mara, "snack", "loves almonds")
    deleted = memoryctl(memory_server, tenant, "delete", memory.name)
    assert deleted.returncode == 0, deleted.stderr
    assert "not reached" in deleted.stdout
    assert "backups" in deleted.stdout
    missing = memoryctl(memory_server, tenant, "history", memory.name)
    assert missing.returncode == 1
    assert missing.stderr.startswith("memoryctl: NOT_FOUND")
    archive = tmp_path / "summary.txt"
    archive.write_text("- prefers green tea\n")
    imported = memoryctl(memory_server, tenant, "import", str(archive), "--format", "summary")
    assert imported.returncode == 0, imported.stderr
    assert "succeeded" in imported.stdout


def test_export_as_csv_and_restore_with_a_summary(
    memory_server: ServerProcess, fresh_memory_server: ServerProcess, tenant: str, tmp_path: Path
) -> None:
    mara = memory_server.client(tenant, "mara")
    memory = create_pref(mara, "meeting_time", "I prefer morning meetings")
    correct(mara, memory, "I prefer afternoon meetings", valid_from=next_monday())
    delete(mara, create_pref(mara, "snack", "I love almonds").name)

    table = tmp_path / "mine.csv"
    shown = memoryctl(memory_server, tenant, "export", "--format", "csv", "--output", str(table))
    assert shown.returncode == 0, shown.stderr
    assert "exported: 1 memory, 2 message" in shown.stderr  # the deleted one is left out
    with table.open(newline="") as rows:
        read = [
            (r["key"], r["revision"], r["value"], r["valid_from"]) for r in csv.DictReader(rows)
        ]
    # One row per revision that applies for some interval; the deleted memory has none.
    assert [r[:3] for r in read] == [
        ("meeting_time", "1", "I prefer morning meetings"),
        ("meeting_time", "2", "I prefer afternoon meetings"),
    ]
    assert read[1][3].startswith(next_monday().date().isoformat())

    dump = tmp_path / "tenant.jsonl"
    admin = {"user": "ada", "roles": ("admin",)}
    exported = memoryctl(
        memory_server, tenant, "export", "--parent", "tenant", "--include-deleted",
        "--output", str(dump), **admin,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    restored = memoryctl(
        fresh_memory_server, tenant, "import", str(dump), "--format", "export", **admin
    )
    assert restored.returncode == 0, restored.stderr
    assert "archive: 1 import_batch" not in restored.stdout  # no import batch was exported
    assert "restored: 2 memories" in restored.stdout
    assert "skipped (" not in restored.stdout
    merged = memoryctl(
        fresh_memory_server, tenant, "import", str(dump), "--format", "export", "--merge",
        user="rita", roles=("restorer",),
    )  # fmt: skip
    assert merged.returncode == 0, merged.stderr
    assert "restored: 0 memories" in merged.stdout
    assert "skipped (duplicate): 4" in merged.stdout  # 2 memories and 2 messages already here
