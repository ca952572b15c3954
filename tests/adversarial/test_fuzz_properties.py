"""Property: no request, however hostile, makes either service answer INTERNAL or UNKNOWN.

For every RPC of every service (enumerated from the proto descriptors) hypothesis builds
requests field by field: random messages, valid requests with one or two fields made hostile
(NUL, combining marks, strings past every column size, extreme integers, unknown enum numbers,
forged page tokens, timestamps outside 0001-9999), and raw bytes that do not decode. They go to
the running memory service on SQLite and PostgreSQL and to the retrieval sidecar. `make fuzz`
runs the same generator for 100,000 requests and more.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import servers
from tests.support.fuzzing import (
    MEMORY_MODULES,
    RETRIEVAL_MODULES,
    Builder,
    HypothesisSource,
    Pool,
    Rpc,
    call,
    mutations,
    request_for,
    rpcs,
    seed_pool,
    sidecar_callers,
)
from tests.support.servers import ServerProcess, mint_token

FATAL = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
SETTINGS = settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
_pools: dict[str, tuple[grpc.Channel, Pool, list[Sequence[tuple[str, str]]]]] = {}


def prepared(
    server: ServerProcess, seed: bool
) -> tuple[grpc.Channel, Pool, list[Sequence[tuple[str, str]]]]:
    """One channel, one seeded pool and the callers to try, per server."""
    if server.address not in _pools:
        tenant = f"fuzz-{uuid.uuid4().hex[:8]}"
        channel = server.channel()
        pool = Pool()
        if seed:
            seed_pool(channel, tenant, pool)
        callers: list[Sequence[tuple[str, str]]] = [
            (("authorization", f"Bearer {mint_token(tenant, 'alice')}"),),
            (("authorization", f"Bearer {mint_token(tenant, 'ada', ['admin'])}"),),
            (),
        ]
        if not seed:  # the sidecar: with its shared secret (where it has one) and without
            callers = [*sidecar_callers(getattr(servers, "TEST_RETRIEVAL_SECRET", ""))]
        _pools[server.address] = (channel, pool, callers)
    return _pools[server.address]


def exercise(server: ServerProcess, rpc: Rpc, data: st.DataObject, seed: bool) -> None:
    channel, pool, callers = prepared(server, seed)
    source = HypothesisSource(data.draw)
    builder = Builder(source, pool)
    payload = request_for(builder, rpc).SerializeToString()
    if source.coin(0.2):
        payload = source.choice(list(mutations(source, payload)))
    metadata = source.choice(callers)
    code, reply = call(channel, rpc, payload, metadata)
    assert code not in FATAL, f"{rpc.path} answered {code.name} to {payload[:500]!r}"
    if reply is not None:
        from google.protobuf import message_factory

        pool.harvest(message_factory.GetMessageClass(rpc.response).FromString(reply))


@pytest.mark.parametrize("rpc", rpcs(MEMORY_MODULES), ids=lambda r: f"{r.service}.{r.method}")
@SETTINGS
@given(data=st.data())
def test_memory_service_never_answers_internal(
    memory_server: ServerProcess, rpc: Rpc, data: st.DataObject
) -> None:
    exercise(memory_server, rpc, data, seed=True)


@pytest.mark.parametrize("rpc", rpcs(RETRIEVAL_MODULES), ids=lambda r: r.method)
@SETTINGS
@given(data=st.data())
def test_retrieval_sidecar_never_answers_internal(
    retrieval_server: ServerProcess, rpc: Rpc, data: st.DataObject
) -> None:
    exercise(retrieval_server, rpc, data, seed=False)
