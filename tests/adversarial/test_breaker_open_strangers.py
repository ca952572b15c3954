"""Recall with the sidecar's breaker open answers before it reads the caller's scopes (a fast
path): it must still refuse a caller without credentials, and tell a stranger asking for
somebody else's scope exactly what it tells a caller asking for its own (no oracle)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2, memory_service_pb2, memory_service_pb2_grpc

from tests.conftest import BACKENDS, memory_with_own_sidecar
from tests.e2e.helpers import create_pref
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess


@pytest.fixture(params=BACKENDS)
def stack(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with memory_with_own_sidecar(request.param, tmp_path) as pair:
        yield pair


def _recall(
    client: Client,
    scope_id: str = "",
    scope_type: memory_pb2.ScopeType.ValueType = memory_pb2.SCOPE_TYPE_UNSPECIFIED,
) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(
            query="shirt colour", limit=5, scope_type=scope_type, scope_id=scope_id
        ),
        timeout=30,
    )


def test_with_the_breaker_open_strangers_learn_nothing_and_anonymous_callers_are_refused(
    stack: tuple[ServerProcess, ServerProcess],
) -> None:
    memory, sidecar = stack
    mara = memory.client("acme", "mara")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    sidecar.process.send_signal(signal.SIGKILL)
    sidecar.process.wait(10)
    eventually(
        lambda: "breaker" in _recall(mara).degraded_reason,
        60,
        "the breaker never opened",
        interval=0.05,
    )

    anonymous = memory_service_pb2_grpc.MemoryServiceStub(memory.channel(None))
    with pytest.raises(grpc.RpcError) as refused:
        anonymous.RecallMemories(
            memory_service_pb2.RecallMemoriesRequest(query="shirt colour"), timeout=30
        )
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED

    user = memory_pb2.SCOPE_TYPE_USER
    sam, eve = memory.client("acme", "sam"), memory.client("globex", "eve")
    own = _recall(sam, "sam", user)
    assert own.degraded
    assert not own.memories
    assert not own.dropped
    for reply in (_recall(sam, "mara", user), _recall(eve, "mara", user), _recall(eve)):
        assert reply == own
