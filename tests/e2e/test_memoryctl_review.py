"""`memoryctl review` against a running service: `--json` lists the queue, and the interactive
walk (stdin fed to a subprocess) settles items with keep / correct / delete / confirm. The queue
is the one tests/e2e/test_review_queue.py seeds for alice: a conflict with the organization, a
customer fact whose document changed, a candidate and an imported item."""

from __future__ import annotations

import json

from crmmem.memory.v1 import import_service_pb2 as imp_pb

from tests.e2e.helpers import ACTIVE, get, list_all
from tests.e2e.test_memoryctl import memoryctl
from tests.e2e.test_review_queue import connector, seeded  # noqa: F401 (fixtures)
from tests.support.servers import Client, ServerProcess


def review(server: ServerProcess, tenant: str, *args: str, stdin: str = "") -> str:
    done = memoryctl(server, tenant, *args, user="alice", stdin=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_review_json_lists_the_queue_in_order(
    memory_server: ServerProcess,
    tenant: str,
    seeded: dict[str, str],  # noqa: F811
) -> None:
    items = json.loads(review(memory_server, tenant, "--json", "review"))["items"]
    assert [i["reason"] for i in items] == [
        "REVIEW_REASON_CONFLICT",
        "REVIEW_REASON_SOURCE_CHANGED",
        "REVIEW_REASON_CANDIDATE",
        "REVIEW_REASON_IMPORT_PENDING",
    ]
    assert items[0]["memory"]["name"] == seeded["mine"]
    assert items[0]["other_memory"]["name"] == seeded["house"]
    assert items[1]["memory"]["name"] == seeded["sourced"]
    assert items[3]["import_item"] == seeded["item"]
    only = review(memory_server, tenant, "--json", "review", "--reason", "candidate")
    assert [i["memory"]["name"] for i in json.loads(only)["items"]] == [seeded["guess"]]


def test_review_walks_the_queue_keep_confirm_and_confirm_an_import(
    memory_server: ServerProcess,
    tenant: str,
    alice: Client,
    seeded: dict[str, str],  # noqa: F811
) -> None:
    shown = review(
        memory_server,
        tenant,
        "review",
        # give way to the house rule; keep the changed fact; confirm; confirm the import as a key
        stdin="keep\n2\nkeep\nconfirm\nconfirm\nseat_preference\n",
    )
    assert "[1/4] conflict" in shown
    assert "settled 4 of 4" in shown, shown

    assert not get(alice, seeded["mine"]).HasField("applicable_revision")
    assert get(alice, seeded["house"]).applicable_revision.value == "Meetings are in the afternoon"
    assert get(alice, seeded["guess"]).applicable_revision.state == ACTIVE
    seat = [m for m in list_all(alice) if m.key == "seat_preference"]
    assert [m.applicable_revision.value for m in seat] == ["prefers window seats"]
    left = json.loads(review(memory_server, tenant, "--json", "review"))["items"]
    assert [i["reason"] for i in left] == ["REVIEW_REASON_SOURCE_CHANGED"]  # kept, still flagged


def test_review_corrects_deletes_skips_and_quits(
    memory_server: ServerProcess,
    tenant: str,
    alice: Client,
    seeded: dict[str, str],  # noqa: F811
) -> None:
    shown = review(
        memory_server,
        tenant,
        "review",
        stdin="nonsense\ncorrect\n1\nI prefer meetings at noon\nskip\ndelete\nquit\n",
    )
    assert "choose one of" in shown
    assert "settled 2 of 4" in shown, shown
    corrected = get(alice, seeded["mine"]).applicable_revision
    assert (corrected.value, corrected.state) == ("I prefer meetings at noon", ACTIVE)
    assert corrected.provenance.transcript_message.startswith("conversations/review-")
    assert seeded["guess"] not in {m.name for m in list_all(alice)}  # deleted
    batch = seeded["item"].rsplit("/items/", 1)[0]
    items = alice.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch), timeout=10
    ).items
    assert items[0].review == imp_pb.ITEM_REVIEW_PENDING  # quit before it


def test_review_with_nothing_waiting(memory_server: ServerProcess, tenant: str) -> None:
    assert "nothing to review" in review(memory_server, tenant, "review")
