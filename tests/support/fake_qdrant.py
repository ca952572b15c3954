"""A Qdrant server that only says its version, over real gRPC on 127.0.0.1: enough to see the
sidecar refuse an old server, and to see that it refused before asking anything else. With
`refuse`, every other method answers that code, as a real Qdrant does to a wrong or missing API
key (its HealthCheck needs none)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import grpc
from qdrant_client.grpc import qdrant_pb2, qdrant_pb2_grpc


class FakeQdrant(qdrant_pb2_grpc.QdrantServicer):  # type: ignore[misc]
    """Answers HealthCheck (what `QdrantClient.info()` asks over gRPC) with `version`; every
    other method is recorded in `calls` and answered UNIMPLEMENTED."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.calls: list[str] = []

    def HealthCheck(self, request: Any, context: Any) -> Any:  # gRPC's name
        self.calls.append("/qdrant.Qdrant/HealthCheck")
        return qdrant_pb2.HealthCheckReply(
            title="qdrant - vector search engine", version=self.version
        )


class _Recorder(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, calls: list[str], refuse: grpc.StatusCode | None) -> None:
        self._calls = calls
        self._refuse = refuse

    def service(self, handler_call_details: Any) -> Any:
        self._calls.append(handler_call_details.method)
        if self._refuse is None:
            return None  # UNIMPLEMENTED
        code = self._refuse

        def refuse(request: bytes, context: grpc.ServicerContext) -> bytes:
            context.abort(code, "Invalid api-key")
            return b""

        return grpc.unary_unary_rpc_method_handler(refuse)  # bytes in and out: no decoding


@contextmanager
def fake_qdrant(
    version: str, refuse: grpc.StatusCode | None = None
) -> Iterator[tuple[str, FakeQdrant]]:
    """Yields the server's URL (its gRPC port, as QDRANT_URL names it) and the fake."""
    fake = FakeQdrant(version)
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    qdrant_pb2_grpc.add_QdrantServicer_to_server(fake, server)
    server.add_generic_rpc_handlers([_Recorder(fake.calls, refuse)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", fake
    finally:
        server.stop(0)
