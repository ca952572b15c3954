"""Export as JSON Lines through gRPC, validated against the committed, versioned JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_service_pb2
from jsonschema import Draft202012Validator, FormatChecker

from tests.e2e.helpers import (
    ASSISTANT,
    ASSISTANT_INFERENCE,
    SCOPE_ORG,
    confirm,
    correct,
    create_memory,
    create_pref,
    delete,
    next_monday,
)
from tests.support.servers import Client, ServerProcess

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "schemas" / "memory-export.v1.schema.json").read_text()
)
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=FormatChecker())
RESTORE = imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT


def export(client: Client, parent: str, include_deleted: bool = False) -> list[dict[str, Any]]:
    lines = []
    for chunk in client.memories.ExportMemories(
        memory_service_pb2.ExportMemoriesRequest(parent=parent, include_deleted=include_deleted),
        timeout=30,
    ):
        assert chunk.schema == "crmmem.memory-export/v1"
        lines.extend(chunk.lines)
    records = [json.loads(line) for line in lines]
    for record in records:
        VALIDATOR.validate(record)
    return records


def test_export_carries_revisions_provenance_lineage_and_both_clocks(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    morning = create_pref(mara, "meeting_time", "prefers morning meetings", key_context="work")
    correct(mara, morning, "prefers afternoon meetings")
    suggested = create_memory(
        mara, "lunch", "likes sushi", speaker=ASSISTANT, method=ASSISTANT_INFERENCE
    )
    confirm(mara, suggested.revision.name)
    gone = create_pref(mara, "snack", "loves almonds")
    delete(mara, gone.name)

    records = {r["key"]: r for r in export(mara, "users/mara")}
    assert set(records) == {"meeting_time", "lunch"}
    meeting = records["meeting_time"]
    assert meeting["id"] == morning.name.split("/")[1]
    first, second = meeting["revisions"]
    assert (first["value"], second["value"]) == (
        "prefers morning meetings",
        "prefers afternoon meetings",
    )
    assert (first["superseded_by"], second["replaces"]) == (2, 1)
    assert first["provenance"]["evidence"].startswith("conversations/")
    assert first["create_time"]
    assert second["valid_from"]
    lunch = records["lunch"]["revisions"][0]
    assert lunch["provenance"]["speaker"] == "ASSISTANT"
    assert lunch["confirmation"]["user_id"] == "mara"

    with_deleted = {r["id"]: r for r in export(mara, "users/mara", include_deleted=True)}
    marker = with_deleted[gone.name.split("/")[1]]
    assert marker["delete_time"]
    assert (marker["key"], len(marker["key_hash"])) == ("deleted", 64)  # the key is not kept
    [purged] = marker["revisions"]
    assert purged["value"] == ""
    assert purged["provenance"]["evidence"].startswith("sha256:")
    assert "almonds" not in json.dumps(marker)


def test_who_may_export_what(memory_server: ServerProcess, tenant: str) -> None:
    mara = memory_server.client(tenant, "mara")
    sam = memory_server.client(tenant, "sam")
    admin = memory_server.client(tenant, "ada", ["admin"])
    create_pref(mara, "meeting_time", "prefers mornings")
    create_pref(sam, "meeting_time", "prefers evenings")
    for caller, parent in ((sam, "users/mara"), (mara, "tenant")):
        with pytest.raises(grpc.RpcError) as error:
            export(caller, parent)
        assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert [r["scope"]["id"] for r in export(admin, "users/mara")] == ["mara"]
    assert sorted(r["scope"]["id"] for r in export(admin, "tenant")) == ["mara", "sam"]
    stranger = memory_server.client(f"{tenant}-x", "ada", ["admin"])
    assert export(stranger, "tenant") == []
    with pytest.raises(grpc.RpcError) as error:
        export(mara, "everything")
    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_a13_export_then_import_into_a_clean_store_round_trips(
    recall_server: ServerProcess, fresh_memory_server: ServerProcess, tenant: str
) -> None:
    """From a store wired to the sidecar into a clean one: same records, same context."""
    memory_server = recall_server
    mara = memory_server.client(tenant, "mara")
    admin = memory_server.client(tenant, "ada", ["admin"])
    morning = create_pref(mara, "meeting_time", "prefers morning meetings", key_context="work")
    correct(mara, morning, "prefers afternoon meetings", valid_from=next_monday())
    suggested = create_memory(
        mara, "lunch", "likes sushi", speaker=ASSISTANT, method=ASSISTANT_INFERENCE
    )
    confirm(mara, suggested.revision.name)
    create_memory(mara, "drink", "maybe likes tea", speaker=ASSISTANT, method=ASSISTANT_INFERENCE)
    create_memory(admin, "holidays", "office closed on Fridays in August", scope_type=SCOPE_ORG)
    gone = create_pref(mara, "snack", "loves almonds")
    delete(mara, gone.name)
    exported = export(admin, "tenant", include_deleted=True)
    archive = "\n".join(json.dumps(r) for r in exported).encode()

    new_admin = fresh_memory_server.client(tenant, "ada", ["admin"])
    with pytest.raises(grpc.RpcError) as error:
        fresh_memory_server.client(tenant, "mara").imports.CreateImportBatch(
            imp_pb.CreateImportBatchRequest(format=RESTORE, archive=archive)
        )
    assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
    batch = new_admin.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=RESTORE, archive=archive)
    ).batch
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == len(exported) == 5

    restored = export(new_admin, "tenant", include_deleted=True)
    assert sorted(restored, key=lambda r: r["id"]) == sorted(exported, key=lambda r: r["id"])

    def context(server: ServerProcess) -> list[tuple[str, int, str, str]]:
        reply = server.client(tenant, "mara").context.BuildContext(ctx_pb.BuildContextRequest())
        return sorted(
            (
                m.memory.name,
                m.memory.applicable_revision.revision_number,
                m.memory.applicable_revision.value,
                m.memory.applicable_revision.provenance.transcript_message,
            )
            for m in reply.memories
        )

    assert context(fresh_memory_server) == context(memory_server)
    again = new_admin.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=RESTORE, archive=archive)
    )
    assert again.already_imported
