"""Every call runs on one of the server's handler threads (`MEMORY_MAX_WORKERS`, 16 by default,
`memory_service/kernel/transport/worker_pool.py`). A call that holds its thread for as long as the
client likes, such as a health Watch (no credentials needed) left open, must not let one client
take every thread and leave the service answering nobody."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.servers import ServerProcess

WORKERS = 16  # the default MEMORY_MAX_WORKERS the test servers run with


def test_open_health_watches_do_not_starve_other_calls(memory_server: ServerProcess) -> None:
    """Fails on previous main: the wrapper that refuses undecodable requests hid from gRPC that
    Watch answers through a callback, so each open Watch held a thread until it ended."""
    channels = [memory_server.channel() for _ in range(WORKERS)]
    watches = []
    try:
        for channel in channels:
            watch = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(service=""), timeout=60
            )
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
            watches.append(watch)
        probe = health_pb2_grpc.HealthStub(memory_server.channel())
        try:
            answer = probe.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        except grpc.RpcError as error:
            raise AssertionError(
                f"with {len(watches)} health watches open, Check answered {error.code()}"
            ) from error
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        for watch in watches:
            watch.cancel()
        for channel in channels:
            channel.close()


def test_idle_reflection_streams_do_not_starve_other_calls(memory_server: ServerProcess) -> None:
    """Reflection needs no credentials and reads its requests as a stream: a client that opens
    streams and never sends on them must not hold every handler thread."""
    channels = [memory_server.channel() for _ in range(WORKERS + 4)]
    hold = threading.Event()

    def silent() -> Iterator[reflection_pb2.ServerReflectionRequest]:
        hold.wait(60)
        return
        yield

    streams = []
    try:
        for channel in channels:
            stream = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                silent(), timeout=60
            )
            streams.append(stream)
        deadline = time.monotonic() + 10  # until every stream has reached the server
        while time.monotonic() < deadline and memory_server_streams(streams) < len(streams):
            time.sleep(0.05)
        probe = health_pb2_grpc.HealthStub(memory_server.channel())
        try:
            answer = probe.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        except grpc.RpcError as error:
            raise AssertionError(
                f"with {len(streams)} silent reflection streams, Check answered {error.code()}"
            ) from error
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        hold.set()
        for stream in streams:
            stream.cancel()
        for channel in channels:
            channel.close()


def memory_server_streams(streams: list[Any]) -> int:
    """How many of the calls have started (their initial metadata is in)."""
    return sum(1 for stream in streams if stream.is_active())
