"""An archive claims when its statements were said, but it cannot claim they were said after it
was uploaded: a time in the future does not make an old statement newer than a correction or
a deletion made since."""

from __future__ import annotations

import json
import time
from typing import Any

import grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2

from tests.e2e.helpers import ACTIVE, PREFERENCE, create_memory, delete, expect_error, get, say
from tests.support.servers import Client

TEN_YEARS = 10 * 365 * 24 * 3600


def archive(*texts: str, said: float) -> bytes:
    """A conversations export whose user messages claim to be said at `said`."""
    mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "message": None}}
    parent = "root"
    for index, text in enumerate(texts):
        node = f"n{index}"
        mapping[node] = {
            "id": node,
            "parent": parent,
            "message": {
                "id": f"msg-{node}",
                "author": {"role": "user"},
                "create_time": said,
                "content": {"content_type": "text", "parts": [text]},
            },
        }
        parent = node
    return json.dumps(
        [{"conversation_id": "old-1", "current_node": parent, "mapping": mapping}]
    ).encode()


def import_items(client: Client, data: bytes) -> tuple[imp_pb.ImportBatch, list[imp_pb.ImportItem]]:
    batch = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS, archive=data
        ),
        timeout=30,
    ).batch
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED
    listed = client.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name, page_size=100), timeout=10
    ).items
    return batch, list(listed)


def confirm_item(client: Client, item: imp_pb.ImportItem, key: str) -> None:
    client.imports.ConfirmImportItem(
        imp_pb.ConfirmImportItemRequest(
            name=item.name, memory=memory_pb2.Memory(key=key, kind=PREFERENCE)
        ),
        timeout=10,
    )


def test_a_future_source_time_is_no_later_than_the_upload(alice: Client) -> None:
    batch, items = import_items(alice, archive("I prefer green tea", said=time.time() + TEN_YEARS))
    assert items[0].source_time.ToSeconds() <= batch.create_time.ToSeconds() + 1


def test_a_future_dated_archive_cannot_undo_a_later_correction(alice: Client) -> None:
    _, items = import_items(alice, archive("I prefer green tea", said=time.time() + TEN_YEARS))
    time.sleep(0.05)
    coffee = create_memory(alice, "drink", "I prefer black coffee")
    assert coffee.revision.state == ACTIVE
    expect_error(
        lambda: confirm_item(alice, items[0], "drink"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_EVIDENCE",
    )
    assert get(alice, coffee.memory.name).applicable_revision.value == "I prefer black coffee"


def test_a_future_dated_archive_cannot_recreate_a_deleted_key(alice: Client) -> None:
    _, items = import_items(
        alice, archive("Green tea is what I prefer", said=time.time() + TEN_YEARS)
    )
    time.sleep(0.05)
    tea = create_memory(
        alice, "drink", "I prefer green tea", evidence=say(alice, None, "I prefer green tea")
    )
    delete(alice, tea.memory.name)
    expect_error(
        lambda: confirm_item(alice, items[0], "drink"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_EVIDENCE",
    )
