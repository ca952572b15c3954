"""An index that loses a tenant's points must never make recall answer a confident empty list,
at the default check interval: not in the seconds after a wipe, and not on the first recall of a
memory service that starts against an emptied index."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from crmmem.memory.v1 import memory_service_pb2
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from tests.conftest import BACKENDS, memory_with_own_sidecar
from tests.e2e.helpers import create_pref
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess, sidecar_stub

VALUE = "prefers blue shirts"


@pytest.fixture(params=BACKENDS)
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ServerProcess, str]]:
    """A memory service at the default index-check interval, and its own sidecar."""
    with memory_with_own_sidecar(request.param, tmp_path) as (memory, sidecar):
        yield memory, sidecar.address


def _recall(client: Client) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query="shirt colour", limit=5), timeout=30
    )


def _confident_and_wrong(reply: memory_service_pb2.RecallMemoriesResponse) -> bool:
    found = [r.memory.applicable_revision.value for r in reply.memories]
    return not reply.degraded and VALUE not in found


def test_a_wiped_index_never_answers_a_confident_empty_list(
    stack: tuple[ServerProcess, str],
) -> None:
    memory, sidecar = stack
    mara = memory.client("acme", "mara")
    create_pref(mara, "shirt_color", VALUE)
    eventually(
        lambda: not _confident_and_wrong(_recall(mara)) and not _recall(mara).degraded,
        60,
        "the memory was never recalled",
        interval=0.05,
    )

    sidecar_stub(sidecar).DeleteDocuments(
        rpb.DeleteDocumentsRequest(tenant_id="acme", all_of_tenant=True), timeout=10
    )
    wrong = 0
    answers = 0
    stop = time.monotonic() + 4
    while time.monotonic() < stop:
        answers += 1
        wrong += _confident_and_wrong(_recall(mara))
        time.sleep(0.05)
    print(f"\nafter a wipe: {wrong} of {answers} answers confident without the memory")
    assert wrong == 0
