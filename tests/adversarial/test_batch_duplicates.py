"""Two items of one batch for one key: the refusal names the earlier item. It named the memory
the earlier item would have created, an id the rolled-back batch never stored, so a caller
following it (to correct that memory instead) found nothing."""

from __future__ import annotations

import grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb

from tests.e2e.helpers import expect_error, list_all
from tests.e2e.test_batch_create import batch_request, said_items
from tests.support.servers import Client


def test_a_repeated_key_names_the_earlier_item_not_a_memory_never_stored(alice: Client) -> None:
    items = said_items(alice, 3)
    items[2].memory.key = items[0].memory.key
    items[2].memory.scope.id = "alice"  # the caller's own scope, spelled out this time

    info = expect_error(
        lambda: alice.memories.BatchCreateMemories(batch_request(items), timeout=30),
        grpc.StatusCode.ALREADY_EXISTS,
        "MEMORY_EXISTS",
    )
    assert info.metadata["request"] == "requests[2]"
    named = info.metadata.get("memory")
    if named:  # whatever the refusal names must exist
        alice.memories.GetMemory(service_pb.GetMemoryRequest(name=named), timeout=10)
    assert info.metadata.get("duplicates") == "requests[0]"
    assert list_all(alice) == []
