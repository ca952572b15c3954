"""Evidence said before a deletion, or before the revision that holds a key now, cannot bring an
old value back: not through create, correct, confirm, propose, import confirmation or restore.
Evidence said afterwards may write the key again."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    CANDIDATE,
    PREFERENCE,
    confirm,
    correct,
    create_memory,
    create_pref,
    delete,
    expect_error,
    get,
    next_monday,
    revision_name,
    say,
)
from tests.support.servers import Client, ServerProcess

STALE = "STALE_EVIDENCE"
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


def test_create_citing_words_said_before_the_deletion_does_not_recreate_it(alice: Client) -> None:
    old = say(alice, None, "I prefer morning meetings")
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings", evidence=old)
    delete(alice, memory.name)

    expect_error(
        lambda: create_pref(alice, "meeting_time", "I prefer morning meetings", evidence=old),
        PRECONDITION,
        STALE,
    )
    earlier = say(alice, None, "I prefer morning meetings")  # said after: a new statement
    again = create_memory(alice, "meeting_time", "I prefer morning meetings", evidence=earlier)
    assert again.revision.state == ACTIVE


def test_correct_citing_words_older_than_the_current_revision_is_refused(alice: Client) -> None:
    said_mornings = say(alice, None, "I prefer morning meetings")
    memory = create_pref(alice, "meeting_time", "I prefer afternoon meetings")
    expect_error(
        lambda: correct(alice, memory, "I prefer morning meetings", evidence=said_mornings),
        PRECONDITION,
        STALE,
    )
    assert get(alice, memory.name).applicable_revision.value == "I prefer afternoon meetings"
    assert correct(alice, memory, "I prefer morning meetings").revision.state == ACTIVE


def test_confirming_an_old_candidate_cannot_undo_a_newer_correction(alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings")
    suggestion = say(alice, None, "evening meetings then?", ASSISTANT)
    candidate = correct(
        alice, memory, "evening meetings", evidence=suggestion, method=ASSISTANT_INFERENCE
    )
    assert candidate.revision.state == CANDIDATE
    newer = correct(alice, candidate.memory, "I prefer afternoon meetings").memory

    expect_error(lambda: confirm(alice, revision_name(memory.name, 2)), PRECONDITION, STALE)
    assert get(alice, newer.name).applicable_revision.value == "I prefer afternoon meetings"


def test_confirming_a_candidate_whose_evidence_underlies_a_deleted_memory_is_refused(
    alice: Client,
) -> None:
    """Confirm checks the same stale-evidence conditions as create: evidence behind a memory
    the user deleted writes nothing more (fails on previous main, which let confirm through)."""
    said = say(alice, None, "I prefer morning meetings and short calls")
    candidate = create_memory(
        alice, "call_length", "short calls", evidence=said, method=ASSISTANT_INFERENCE
    )
    assert candidate.revision.state == CANDIDATE
    deleted = create_pref(alice, "meeting_time", "morning meetings", evidence=said)
    delete(alice, deleted.name)
    expect_error(
        lambda: confirm(alice, revision_name(candidate.memory.name, 1)), PRECONDITION, STALE
    )
    again = say(alice, None, "yes, short calls please")  # said again now: a new statement
    confirmed = confirm(alice, revision_name(candidate.memory.name, 1), transcript_message=again)
    assert confirmed.revision.state == ACTIVE


def test_a_proposal_citing_words_said_before_the_deletion_is_refused(alice: Client) -> None:
    old = say(alice, None, "I prefer morning meetings")
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings", evidence=old)
    delete(alice, memory.name)
    reply = alice.context.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=memory_pb2.Memory(
                scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER),
                key="meeting_time",
                kind=PREFERENCE,
            ),
            value="I prefer morning meetings",
            method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
            evidence_messages=[old],
        ),
        timeout=10,
    )
    assert reply.decision == ctx_pb.PROPOSAL_DECISION_REFUSED_STALE, reply


def _import_old_statement(client: Client, text: str) -> str:
    """An archive statement said in 2023; returns the item's name."""
    archive = json.dumps(
        [
            {
                "conversation_id": f"old-{uuid.uuid4().hex[:6]}",
                "current_node": "n1",
                "mapping": {
                    "root": {"id": "root", "parent": None, "message": None},
                    "n1": {
                        "id": "n1",
                        "parent": "root",
                        "message": {
                            "id": "m1",
                            "author": {"role": "user"},
                            "create_time": 1_680_000_000,
                            "content": {"content_type": "text", "parts": [text]},
                        },
                    },
                },
            }
        ]
    ).encode()
    batch = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS, archive=archive
        ),
        timeout=30,
    ).batch
    items = client.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items
    assert [i.text for i in items] == [text]
    return items[0].name


def _confirm_item(client: Client, item: str, key: str) -> imp_pb.ConfirmImportItemResponse:
    return client.imports.ConfirmImportItem(
        imp_pb.ConfirmImportItemRequest(
            name=item, memory=memory_pb2.Memory(key=key, kind=PREFERENCE)
        ),
        timeout=10,
    )


@pytest.mark.parametrize("effective", ["now", "next_monday"])
def test_confirming_an_old_import_cannot_supersede_a_newer_correction(
    alice: Client, effective: str
) -> None:
    item = _import_old_statement(alice, "I prefer morning meetings")
    memory = create_pref(alice, "meeting_time", "I prefer afternoon meetings")
    if effective == "next_monday":
        memory = correct(
            alice, memory, "I prefer evening meetings", valid_from=next_monday()
        ).memory

    expect_error(lambda: _confirm_item(alice, item, "meeting_time"), PRECONDITION, STALE)
    after = get(alice, memory.name)
    assert after.etag == memory.etag
    assert after.applicable_revision.value == "I prefer afternoon meetings"
    monday = get(alice, memory.name, as_of=next_monday() + timedelta(hours=1))
    expected = "I prefer evening meetings" if effective == "next_monday" else "I prefer afternoon"
    assert monday.applicable_revision.value.startswith(expected)


def test_confirming_an_old_import_does_not_recreate_a_deleted_memory(alice: Client) -> None:
    item = _import_old_statement(alice, "I like morning meetings best")
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings")
    delete(alice, memory.name)
    expect_error(lambda: _confirm_item(alice, item, "meeting_time"), PRECONDITION, STALE)


def test_a_restore_does_not_bring_back_a_key_deleted_since(
    alice: Client, admin: Client, memory_server: ServerProcess, tenant: str
) -> None:
    memory = create_pref(alice, "meeting_time", "I prefer morning meetings")
    lines = []
    for chunk in admin.memories.ExportMemories(
        memory_service_pb2.ExportMemoriesRequest(parent="tenant"), timeout=30
    ):
        lines.extend(chunk.lines)
    delete(alice, memory.name)
    # The same export as another store would hold it: a different id for the same key, merged
    # into this tenant (it has data) by the restorer role.
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["record"] == "memory":
            record["id"] = uuid.uuid4().hex
    archive = "\n".join(json.dumps(r) for r in records).encode()
    restorer = memory_server.client(tenant, "rita", ["restorer"])
    batch = restorer.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT,
            archive=archive,
            restore_mode=imp_pb.RESTORE_MODE_MERGE,
        ),
        timeout=30,
    ).batch
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == 0
    skipped = restorer.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items
    reasons = {i.source_ref.split(": ")[1].split("/")[0]: i.skip_reason for i in skipped}
    assert reasons == {
        "memories": imp_pb.SKIP_REASON_KEY_DELETED,
        "conversations": imp_pb.SKIP_REASON_DUPLICATE,  # the message cited is already here
    }
    live = alice.memories.ListMemories(memory_service_pb2.ListMemoriesRequest(), timeout=10)
    assert list(live.memories) == []
