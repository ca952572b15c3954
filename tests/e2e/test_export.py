"""Export as JSON Lines through gRPC, validated against the committed, versioned JSON Schema, and
restored into a clean store of the same database kind: everything that gives a memory its
meaning comes back (docs/export-format.md)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import memory_env
from tests.e2e.helpers import (
    ASSISTANT,
    ASSISTANT_INFERENCE,
    PREFERENCE,
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    confirm,
    correct,
    create_memory,
    create_pref,
    delete,
    get,
    messages,
    next_monday,
    request_id,
    ts,
)
from tests.e2e.test_document_facts import HANDBOOK, PLAN, document_fact, report
from tests.e2e.test_review_queue import resolve
from tests.support import exports
from tests.support.exports import skipped
from tests.support.servers import Client, ServerProcess, database_url, start_server

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "schemas" / "memory-export.v2.schema.json").read_text()
)
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=FormatChecker())
RESTORE = imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT
MERGE = imp_pb.RESTORE_MODE_MERGE


def export(
    client: Client,
    parent: str,
    include_deleted: bool = False,
    since: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    request = memory_service_pb2.ExportMemoriesRequest(
        parent=parent, include_deleted=include_deleted
    )
    if since is not None:
        request.since.CopyFrom(ts(since))
    lines = []
    for chunk in client.memories.ExportMemories(request, timeout=30):
        assert chunk.schema == "crmmem.memory-export/v2"
        lines.extend(chunk.lines)
    records = [json.loads(line) for line in lines]
    for record in records:
        VALIDATOR.validate(record)
    assert records[0]["record"] == "export"
    return records


def of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["record"] == kind]


def archive_of(records: list[dict[str, Any]]) -> bytes:
    return ("\n".join(json.dumps(r) for r in records) + "\n").encode()


def restore(client: Client, records: list[dict[str, Any]], mode: int = 0) -> imp_pb.ImportBatch:
    return exports.restore(client, archive_of(records), mode)


@pytest.fixture
def clean_server(memory_server: ServerProcess, tmp_path: Path) -> Iterator[ServerProcess]:
    """A second, empty store on the same kind of database as `memory_server`."""
    backend = "sqlite" if memory_server.database_url.startswith("sqlite") else "postgres"
    with database_url(backend, tmp_path)() as url:
        server = start_server("memory_service", memory_env(url), tmp_path)
        yield server
        server.stop()


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
    assert [r["scope"]["id"] for r in of(export(admin, "users/mara"), "memory")] == ["mara"]
    tenant_export = of(export(admin, "tenant"), "memory")
    assert sorted(r["scope"]["id"] for r in tenant_export) == ["mara", "sam"]
    stranger = memory_server.client(f"{tenant}-x", "ada", ["admin"])
    assert of(export(stranger, "tenant"), "memory") == []
    with pytest.raises(grpc.RpcError) as error:
        export(mara, "everything")
    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_a_user_export_carries_the_messages_its_revisions_cite(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    mine = create_pref(mara, "meeting_time", "I prefer morning meetings")
    records = export(mara, "users/mara")
    [message] = of(records, "message")
    assert (message["owner_user_id"], message["content"]) == ("mara", "I prefer morning meetings")
    [memory] = of(records, "memory")
    assert memory["etag"] == mine.etag
    provenance = memory["revisions"][0]["provenance"]
    assert provenance["evidence"] == message["name"]
    assert (provenance["conversation_ref"], provenance["message_ref"]) == (
        message["conversation_ref"],
        message["id"],
    )
    assert records.index(message) < records.index(memory)  # evidence before what cites it


def _tenant_with_everything(server: ServerProcess, tenant: str) -> dict[str, Any]:
    """Customer, user and organization memories, corrections, a deletion, grants, a candidate,
    a confirmed inference and an import batch with a confirmed item and a skipped secret."""
    admin = server.client(tenant, "ada", ["admin"])
    rep = server.client(tenant, "rep1")
    mara = server.client(tenant, "mara")
    admin.access.RegisterCustomer(
        access_pb.RegisterCustomerRequest(
            customer=access_pb.Customer(customer_id="c-1", display_name="Acme Corp")
        )
    )
    admin.access.GrantCustomerAccess(
        access_pb.GrantCustomerAccessRequest(user_id="rep1", customer_id="c-1")
    )
    delivery = create_memory(
        rep, "delivery", "Acme wants morning delivery", scope_type=SCOPE_CUSTOMER, scope_id="c-1"
    ).memory
    correct(rep, delivery, "Acme wants afternoon delivery", valid_from=next_monday())
    morning = create_pref(mara, "meeting_time", "prefers morning meetings", key_context="work")
    correct(mara, morning, "prefers afternoon meetings")
    suggested = create_memory(
        mara, "lunch", "likes sushi", speaker=ASSISTANT, method=ASSISTANT_INFERENCE
    )
    confirm(mara, suggested.revision.name)
    create_memory(mara, "drink", "maybe likes tea", speaker=ASSISTANT, method=ASSISTANT_INFERENCE)
    create_memory(admin, "holidays", "office closed on Fridays in August", scope_type=SCOPE_ORG)
    gone = create_pref(mara, "snack", "loves almonds")
    delete(mara, gone.name)
    batch = mara.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY,
            archive=b"- I prefer window seats\n- my password is hunter2-Blue-42\n",
            request_id=request_id(),
        ),
        timeout=30,
    ).batch
    items = mara.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items
    [accepted] = [i for i in items if i.outcome == imp_pb.ITEM_OUTCOME_ACCEPTED]
    assert any(i.skip_reason == imp_pb.SKIP_REASON_SECRET for i in items)
    mara.imports.ConfirmImportItem(
        imp_pb.ConfirmImportItemRequest(
            name=accepted.name,
            memory=memory_pb2.Memory(key="seat", kind=PREFERENCE),
            request_id=request_id(),
        ),
        timeout=10,
    )
    return {"delivery": delivery.name, "batch": batch.name}


def _context(client: Client, as_of: dt.datetime | None = None) -> list[tuple[str, ...]]:
    request = ctx_pb.BuildContextRequest(customers=[ctx_pb.CustomerReference(customer_id="c-1")])
    if as_of is not None:
        request.as_of.CopyFrom(ts(as_of))
    reply = client.context.BuildContext(request, timeout=10)
    return sorted(
        (
            m.memory.name,
            m.memory.etag,
            str(m.memory.applicable_revision.revision_number),
            m.memory.applicable_revision.value,
            m.memory.applicable_revision.provenance.transcript_message,
        )
        for m in reply.memories
    )


def _comparable(records: list[dict[str, Any]], drop_batch: str = "") -> list[dict[str, Any]]:
    """Without the header (a new export id and date), the restore's own batch, and the
    restore stamp on confirmations (the one thing a restore adds)."""
    out = []
    for record in records:
        if record["record"] == "export" or drop_batch in (
            record.get("id"),
            record.get("batch_id"),
        ):
            continue
        record = json.loads(json.dumps(record))
        for revision in record.get("revisions", []):
            if revision["confirmation"]:
                revision["confirmation"]["restored_by"] = None
                revision["confirmation"]["restore_time"] = None
        out.append(record)
    return sorted(out, key=lambda r: (r["record"], json.dumps(r, sort_keys=True)))


def test_a_tenant_round_trips_into_a_clean_store(
    memory_server: ServerProcess, clean_server: ServerProcess, tenant: str
) -> None:
    made = _tenant_with_everything(memory_server, tenant)
    admin = memory_server.client(tenant, "ada", ["admin"])
    exported = export(admin, "tenant", include_deleted=True)
    assert len(of(exported, "customer")) == len(of(exported, "grant")) == 1
    assert len(of(exported, "import_batch")) == 1
    assert all(i["skip_reason"] != "SECRET" for i in of(exported, "import_item"))
    assert "hunter2" not in json.dumps(exported)
    assert all(m["content"] is not None for m in of(exported, "message"))

    # Only an admin restores, and only into an empty tenant.
    with pytest.raises(grpc.RpcError) as error:
        restore(clean_server.client(tenant, "mara"), exported)
    assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
    new_admin = clean_server.client(tenant, "ada", ["admin"])
    batch = restore(new_admin, exported)
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == len(of(exported, "memory")) == 7
    assert batch.skipped_count == 0, skipped(new_admin, batch)

    restored = export(new_admin, "tenant", include_deleted=True)
    batch_id = batch.name.split("/")[1]
    assert _comparable(restored, batch_id) == _comparable(exported)
    # Counts, values, revisions, lineage, both clocks and etags are equal (above); confirmations
    # say who restored them and when instead of pretending the user confirmed again.
    stamps = [
        r["confirmation"]
        for m in of(restored, "memory")
        for r in m["revisions"]
        if r["confirmation"]
    ]
    assert stamps
    assert all(c["restored_by"] == "ada" and c["restore_time"] for c in stamps)

    # Provenance resolves: every cited message is readable by its owner in the new store.
    for message in of(exported, "message"):
        owner = clean_server.client(tenant, message["owner_user_id"])
        texts = {m.name: m.text for m in messages(owner, message["conversation_ref"])}
        assert texts[message["name"]] == message["content"]
    # ... and the customer grant came back, so the rep's context is the same, now and later.
    rep_before = memory_server.client(tenant, "rep1")
    rep_after = clean_server.client(tenant, "rep1")
    later = next_monday() + dt.timedelta(days=1)
    assert _context(rep_after) == _context(rep_before)
    assert _context(rep_after, later) == _context(rep_before, later)
    assert "Acme wants afternoon delivery" in {c[3] for c in _context(rep_after, later)}
    assert get(rep_after, made["delivery"]).etag == get(rep_before, made["delivery"]).etag
    mara_before = memory_server.client(tenant, "mara")
    mara_after = clean_server.client(tenant, "mara")
    assert _context(mara_after) == _context(mara_before)

    # The same archive again is the same batch; another clean restore is refused now that
    # the tenant has memories.
    assert restore(new_admin, exported).name == batch.name
    with pytest.raises(grpc.RpcError) as error:
        restore(new_admin, [*exported[:1], *of(exported, "customer")])
    assert error.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "has memories" in (error.value.details() or "")


def test_an_incremental_export_restores_on_top_of_the_full_one(
    memory_server: ServerProcess, clean_server: ServerProcess, tenant: str
) -> None:
    admin = memory_server.client(tenant, "ada", ["admin"])
    mara = memory_server.client(tenant, "mara")
    kept = create_pref(mara, "meeting_time", "prefers morning meetings")
    changed = create_pref(mara, "drink", "likes coffee")
    doomed = create_pref(mara, "snack", "loves almonds")
    full = export(admin, "tenant", include_deleted=True)
    time.sleep(0.05)
    since = dt.datetime.now(dt.UTC)
    correct(mara, changed, "likes green tea")
    delete(mara, doomed.name)
    added = create_pref(mara, "seat", "prefers the window seat")
    incremental = export(admin, "tenant", include_deleted=True, since=since)
    assert incremental[0]["export_type"] == "incremental"
    assert incremental[0]["since"]
    ids = {m["id"] for m in of(incremental, "memory")}
    assert kept.name.split("/")[1] not in ids
    assert ids == {n.split("/")[1] for n in (changed.name, doomed.name, added.name)}

    target_admin = clean_server.client(tenant, "ada", ["admin"])
    assert restore(target_admin, full).state == imp_pb.IMPORT_STATE_SUCCEEDED
    # On top of data a merge is needed, and only the restorer role may merge.
    refused = clean_server.client(tenant, "ada", ["admin"]).imports
    with pytest.raises(grpc.RpcError) as error:
        refused.CreateImportBatch(
            imp_pb.CreateImportBatchRequest(format=RESTORE, archive=archive_of(incremental))
        )
    assert error.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as error:
        restore(target_admin, incremental, MERGE)
    assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
    restorer = clean_server.client(tenant, "rita", ["restorer"])
    merged = restore(restorer, incremental, MERGE)
    assert merged.state == imp_pb.IMPORT_STATE_SUCCEEDED, merged.error
    assert merged.accepted_count == 3, skipped(restorer, merged)

    source = _comparable(export(admin, "tenant", include_deleted=True))
    target = export(target_admin, "tenant", include_deleted=True)
    drop = {b["id"] for b in of(target, "import_batch")}
    assert [
        r for r in _comparable(target) if r.get("id") not in drop and r.get("batch_id") not in drop
    ] == source
    # The same incremental again changes nothing; it is the same archive.
    assert restore(restorer, incremental, MERGE).name == merged.name


def test_document_facts_and_a_resolved_conflict_round_trip_and_stay_watched(
    memory_server: ServerProcess, clean_server: ServerProcess, tenant: str
) -> None:
    """Document evidence (URI, version, excerpt, the time its source changed) and a review
    decision (the memory kept) survive export and a clean restore, and a restored document fact
    is still flagged when its document's connector reports a new version."""
    admin = memory_server.client(tenant, "ada", ["admin"])
    alice = memory_server.client(tenant, "alice")
    current = document_fact(admin, "alpha.owner")
    changed = document_fact(admin, "alpha.lead", HANDBOOK)
    source_connector = memory_server.client(tenant, "docs-sync", ["document-connector"])
    assert list(report(source_connector, HANDBOOK, "v2").flagged_memories) == [changed.name]
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings")
    house = create_memory(
        admin, "meeting_time", "Meetings are in the afternoon", scope_type=SCOPE_ORG
    ).memory
    resolve(admin, house.name, mine.name, request_id=request_id())
    delete(admin, document_fact(admin, "alpha.sponsor").name)  # a marker keeps the version

    exported = export(admin, "tenant", include_deleted=True)  # every line schema-valid
    assert exported[0]["schema_version"] == "2.1"
    by_id = {m["id"]: m for m in of(exported, "memory")}
    plan = by_id[current.name.split("/")[1]]["revisions"][0]
    assert plan["provenance"]["document"] == {
        "uri": PLAN,
        "version": "v1",
        "excerpt": current.applicable_revision.provenance.document.excerpt,
    }
    assert plan["provenance"]["evidence"] == PLAN
    assert plan["source_change_time"] is None
    assert by_id[changed.name.split("/")[1]]["revisions"][0]["source_change_time"]
    [marker] = [m for m in by_id.values() if m["temporal"]["deleted_at"]]
    assert marker["revisions"][0]["provenance"]["document"] == {
        "uri": None,
        "version": "v1",
        "excerpt": "",
    }
    closing = by_id[house.name.split("/")[1]]["revisions"][-1]
    assert closing["provenance"]["extraction_method"] == "REVIEW_DECISION"
    assert closing["provenance"]["kept_memory"] == mine.name

    target = clean_server.client(tenant, "ada", ["admin"])
    batch = restore(target, exported)
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.skipped_count == 0, skipped(target, batch)
    restored = export(target, "tenant", include_deleted=True)
    assert _comparable(restored, batch.name.split("/")[1]) == _comparable(exported)
    after = get(target, current.name).applicable_revision.provenance
    assert (after.document.uri, after.document.version) == (PLAN, "v1")
    assert get(target, changed.name).applicable_revision.HasField("source_change_time")

    connector = clean_server.client(tenant, "docs-sync", ["document-connector"])
    assert list(report(connector, PLAN, "v2").flagged_memories) == [current.name]
    assert get(target, current.name).applicable_revision.HasField("source_change_time")
