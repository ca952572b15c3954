"""Every call runs on one of the server's handler threads (`MEMORY_MAX_WORKERS`, 16 by default,
`memory_service/transport/worker_pool.py`). A call that holds its thread for as long as the
client likes, such as a health Watch (no credentials needed) left open, must not let one client
take every thread and leave the service answering nobody."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

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
