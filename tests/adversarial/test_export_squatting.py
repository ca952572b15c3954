"""ExportMemories streams until the client has read everything, and gRPC's flow control makes
the server wait while a client reads nothing. A signed-in client that opens big exports and
never reads them must not take the threads every other call needs, nor hold an export thread
for ever (docs/export-format.md)."""

from __future__ import annotations

import time
from typing import Any

import grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import memory_service_pb2_grpc as service_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memory_service.memories.transport.memory_servicer import EXPORT_SEND_SECONDS
from memory_service.server import EXPORT_WORKERS
from tests.adversarial.test_handler_pool_squatting import WORKERS, memory_server_streams
from tests.e2e.test_batch_create import append_batch, batch_request, item
from tests.support.servers import ServerProcess, mint_token

# A client that reads nothing: no window growth, so the server soon waits on flow control.
STALLED = [("grpc.http2.bdp_probe", 0), ("grpc.max_receive_message_length", 8 * 1024 * 1024)]
FILLER = "I prefer meetings in the morning, before the weekly pipeline review. "


def seed_export(memory_server: ServerProcess, tenant: str, batches: int = 4) -> None:
    """About a megabyte of memories (and the messages they rest on) per batch."""
    client = memory_server.client(tenant, "alice")
    for batch in range(batches):
        values = [f"{index} {FILLER * 55}"[:3900] for index in range(100)]
        said = append_batch(client, values)
        items = [item(f"k_{batch}_{i}", values[i], said[i].name) for i in range(100)]
        client.memories.BatchCreateMemories(batch_request(items), timeout=60)


def stalled_exports(
    memory_server: ServerProcess, tenant: str, count: int, timeout: float
) -> tuple[list[grpc.Channel], list[Any]]:
    """`count` exports of alice's memories, each on its own connection, never read."""
    token = mint_token(tenant, "alice")
    channels = [grpc.insecure_channel(memory_server.address, options=STALLED) for _ in range(count)]
    streams = [
        service_grpc.MemoryServiceStub(channel).ExportMemories(
            service_pb.ExportMemoriesRequest(parent="users/alice"),
            timeout=timeout,
            metadata=[("authorization", f"Bearer {token}")],
        )
        for channel in channels
    ]
    deadline = time.monotonic() + 10  # until every stream has reached the server
    while time.monotonic() < deadline and memory_server_streams(streams) < len(streams):
        time.sleep(0.05)
    return channels, streams


def ending(stream: Any) -> grpc.StatusCode:
    """How a stream ends once read to the end."""
    try:
        for _ in stream:
            pass
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def close(channels: list[grpc.Channel], streams: list[Any]) -> None:
    for stream in streams:
        stream.cancel()
    for channel in channels:
        channel.close()


def test_unread_exports_do_not_starve_other_calls(
    memory_server: ServerProcess, tenant: str
) -> None:
    """Fails on previous main: every unread export held one of the 16 handler threads, so the
    service answered nobody, of any tenant."""
    seed_export(memory_server, tenant)
    channels, streams = stalled_exports(memory_server, tenant, WORKERS + 4, timeout=120)
    try:
        time.sleep(1)  # the exports have read their first page and wait on flow control
        probe = health_pb2_grpc.HealthStub(memory_server.channel())
        other = memory_server.client(f"{tenant}-other", "bob")
        try:
            answer = probe.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            listed = other.memories.ListMemories(service_pb.ListMemoriesRequest(), timeout=10)
        except grpc.RpcError as error:
            raise AssertionError(
                f"with {len(streams)} unread exports open, the service answered {error.code()}"
            ) from error
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        assert list(listed.memories) == []
    finally:
        close(channels, streams)


def test_an_export_the_client_stops_reading_is_cancelled(
    memory_server: ServerProcess, tenant: str
) -> None:
    """Fails on previous main: an unread export waited for its reader for as long as the
    client kept the call open. Now the server cancels it once one chunk has waited longer than
    EXPORT_SEND_SECONDS, which frees its thread: after every export thread was taken by a
    stalled reader, the same tenant can export again."""
    seed_export(memory_server, tenant)
    channels, streams = stalled_exports(memory_server, tenant, EXPORT_WORKERS, timeout=300)
    try:
        time.sleep(EXPORT_SEND_SECONDS + 10)
        # OK would mean the export waited for its reader and was sent in full.
        assert [ending(stream) for stream in streams] == [grpc.StatusCode.CANCELLED] * len(streams)
        reader = memory_server.client(tenant, "alice")
        chunks = reader.memories.ExportMemories(
            service_pb.ExportMemoriesRequest(parent="users/alice"), timeout=60
        )
        lines = sum(len(chunk.lines) for chunk in chunks)
        assert lines > 400  # the export record, 400 memories and what they rest on
    finally:
        close(channels, streams)
