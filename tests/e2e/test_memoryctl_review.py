"""`memoryctl review` against a running service: `--json` lists the queue, and the interactive
walk (stdin fed to a subprocess) settles items with keep / correct / delete / confirm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from crmmem.memory.v1 import import_service_pb2 as imp_pb

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    SCOPE_ORG,
    create_memory,
    create_pref,
    get,
    list_all,
    request_id,
)
from tests.support.servers import Client, ServerProcess, mint_token


def memoryctl(
    server: ServerProcess, tenant: str, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MEMORY_ADDRESS": server.address,
        "MEMORY_TOKEN": mint_token(tenant, "mara"),
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


def seed(server: ServerProcess, tenant: str) -> dict[str, str]:
    """Mara's queue: a conflict with the organization, a candidate, an imported item."""
    mara = server.client(tenant, "mara")
    admin = server.client(tenant, "ada", ["admin"])
    mine = create_pref(mara, "meeting_time", "I prefer morning meetings")
    house = create_memory(
        admin, "meeting_time", "Meetings are in the afternoon", scope_type=SCOPE_ORG
    ).memory
    guess = create_memory(
        mara, "drink", "likes tea", method=ASSISTANT_INFERENCE, speaker=ASSISTANT
    ).memory
    batch = mara.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY,
            archive=b"- prefers window seats\n",
            request_id=request_id(),
        ),
        timeout=60,
    ).batch
    item = mara.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items[0]
    return {"mine": mine.name, "house": house.name, "guess": guess.name, "item": item.name}


def test_review_json_lists_the_queue_in_order(memory_server: ServerProcess, tenant: str) -> None:
    seeded = seed(memory_server, tenant)
    listed = memoryctl(memory_server, tenant, "--json", "review")
    assert listed.returncode == 0, listed.stderr
    items = json.loads(listed.stdout)["items"]
    assert [i["reason"] for i in items] == [
        "REVIEW_REASON_CONFLICT",
        "REVIEW_REASON_CANDIDATE",
        "REVIEW_REASON_IMPORT_PENDING",
    ]
    assert items[0]["memory"]["name"] == seeded["mine"]
    assert items[0]["other_memory"]["name"] == seeded["house"]
    assert items[2]["import_item"] == seeded["item"]
    only = memoryctl(memory_server, tenant, "--json", "review", "--reason", "candidate")
    assert [i["memory"]["name"] for i in json.loads(only.stdout)["items"]] == [seeded["guess"]]


def test_review_walks_the_queue_keep_confirm_and_confirm_an_import(
    memory_server: ServerProcess, tenant: str
) -> None:
    seeded = seed(memory_server, tenant)
    walked = memoryctl(
        memory_server,
        tenant,
        "review",
        stdin="keep\n2\nconfirm\nconfirm\nseat_preference\n",  # she gives way to the house rule
    )
    assert walked.returncode == 0, walked.stderr
    assert "[1/3] conflict" in walked.stdout
    assert "settled 3 of 3" in walked.stdout, walked.stdout

    mara: Client = memory_server.client(tenant, "mara")
    assert not get(mara, seeded["mine"]).HasField("applicable_revision")
    assert get(mara, seeded["house"]).applicable_revision.value == "Meetings are in the afternoon"
    assert get(mara, seeded["guess"]).applicable_revision.state == ACTIVE
    seat = [m for m in list_all(mara) if m.key == "seat_preference"]
    assert [m.applicable_revision.value for m in seat] == ["prefers window seats"]
    again = memoryctl(memory_server, tenant, "review")
    assert "nothing to review" in again.stdout


def test_review_corrects_deletes_skips_and_quits(memory_server: ServerProcess, tenant: str) -> None:
    seeded = seed(memory_server, tenant)
    walked = memoryctl(
        memory_server,
        tenant,
        "review",
        stdin="nonsense\ncorrect\n1\nI prefer meetings at noon\ndelete\nquit\n",
    )
    assert walked.returncode == 0, walked.stderr
    assert "choose one of" in walked.stdout
    assert "settled 2 of 3" in walked.stdout
    mara = memory_server.client(tenant, "mara")
    corrected = get(mara, seeded["mine"]).applicable_revision
    assert (corrected.value, corrected.state) == ("I prefer meetings at noon", ACTIVE)
    assert corrected.provenance.transcript_message.startswith("conversations/review-")
    assert seeded["guess"] not in {m.name for m in list_all(mara)}  # deleted
    items = mara.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=seeded["item"].rsplit("/items/", 1)[0]), timeout=10
    ).items
    assert items[0].review == imp_pb.ITEM_REVIEW_PENDING  # quit before it
