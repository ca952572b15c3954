"""A caller chooses its own deadline. One tenant asking for recall with deadlines too short for
any search to meet must not open the sidecar's breaker for every other tenant: the breaker says
the sidecar is down or hung, and a caller's impatience says neither."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import memory_service_pb2

from tests.conftest import BACKENDS, memory_with_own_sidecar
from tests.e2e.helpers import create_pref
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=BACKENDS)
def stack(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with memory_with_own_sidecar(request.param, tmp_path) as pair:
        yield pair


def _recall(client: Client, timeout: float = 30) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query="shirt colour", limit=5),
        timeout=timeout,
    )


def test_one_tenants_impatient_recalls_do_not_open_the_breaker_for_everyone(
    stack: tuple[ServerProcess, ServerProcess],
) -> None:
    memory, _ = stack
    mara = memory.client("acme", "mara")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    eventually(lambda: bool(_recall(mara).memories), 60, "never indexed", interval=0.1)
    mallory = memory.client("globex", "mallory")
    create_pref(mallory, "shirt_color", "prefers red shirts")
    eventually(lambda: bool(_recall(mallory).memories), 60, "never indexed", interval=0.1)
    missed, errors = 0, set()
    deadline = 0.06
    for _ in range(100):
        # The attacker homes in on deadlines past what the service keeps for its own work and
        # short of a search on these cores: longer after "no time left", shorter after an answer.
        try:
            reply = _recall(mallory, timeout=deadline)
        except grpc.RpcError as error:
            errors.add(error.code())
            deadline += 0.002
            continue
        if "DEADLINE_EXCEEDED" in reply.degraded_reason:
            missed += 1
        elif "no time left" in reply.degraded_reason:
            deadline += 0.002
        elif not reply.degraded:
            deadline = max(0.005, deadline - 0.002)
    assert errors <= {grpc.StatusCode.DEADLINE_EXCEEDED}
    assert missed >= 20  # the attack reached the sidecar with deadlines it could not meet
    for _ in range(5):
        reply = _recall(mara)
        assert not reply.degraded, reply.degraded_reason
        assert reply.memories
