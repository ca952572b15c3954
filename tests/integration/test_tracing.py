"""Server spans, checked with an in-memory exporter against a real in-process gRPC server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import opentelemetry.instrumentation.grpc as otel_grpc
import pytest
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from memory_service import server as server_module
from memory_service.bootstrap import RunningServer, build_server
from memory_service.config import Settings
from memory_service.memories.adapters import retrieval_client
from tests.support.servers import TEST_JWT_SECRET, TEST_RETRIEVAL_SECRET, mint_token


@pytest.fixture
def traced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[RunningServer, InMemorySpanExporter]]:
    monkeypatch.setenv("MEMORY_JWT_SECRET", TEST_JWT_SECRET)
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", TEST_RETRIEVAL_SECRET)
    monkeypatch.setenv("MEMORY_DATABASE_URL", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setenv("MEMORY_LISTEN", "127.0.0.1:0")
    settings = Settings.from_env()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = build_server(settings, provider)
    yield server, exporter
    server.stop(1)


def test_each_rpc_yields_a_server_span_with_tenant_and_error_reason(
    traced: tuple[RunningServer, InMemorySpanExporter],
) -> None:
    server, exporter = traced
    token = mint_token(f"t-{uuid.uuid4().hex[:6]}", "mara")
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = svc_grpc.MemoryServiceStub(channel)
        stub.ListMemories(
            svc.ListMemoriesRequest(), metadata=[("authorization", f"Bearer {token}")]
        )
        with pytest.raises(grpc.RpcError):
            stub.GetMemory(
                svc.GetMemoryRequest(name="memories/" + "0" * 32),
                metadata=[("authorization", f"Bearer {token}")],
            )
    spans = {span.name: span for span in exporter.get_finished_spans()}
    listed = spans["/crmmem.memory.v1.MemoryService/ListMemories"]
    assert listed.kind is SpanKind.SERVER
    assert listed.attributes is not None
    assert listed.attributes["crmmem.tenant_id"].startswith("t-")  # type: ignore[union-attr]
    failed = spans["/crmmem.memory.v1.MemoryService/GetMemory"]
    assert failed.attributes is not None
    assert failed.attributes["crmmem.error_reason"] == "NOT_FOUND"
    assert failed.attributes["rpc.grpc.status_code"] == grpc.StatusCode.NOT_FOUND.value[0]
    assert pb.Memory  # the generated types are importable beside the server


def test_without_a_tracer_provider_no_call_keeps_span_bookkeeping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Traces not exported (`python -m memory_service serve` then passes no provider): neither
    the server nor the sidecar client installs OpenTelemetry's interceptors; with one, both do."""
    installed: list[str] = []

    def recording(name: str, real: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            installed.append(name)
            return real(*args, **kwargs)

        return make

    monkeypatch.setattr(
        server_module, "server_interceptor", recording("server", otel_grpc.server_interceptor)
    )
    monkeypatch.setattr(
        retrieval_client,
        "client_interceptor",
        recording("client", otel_grpc.client_interceptor),
    )
    monkeypatch.setenv("MEMORY_JWT_SECRET", TEST_JWT_SECRET)
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", TEST_RETRIEVAL_SECRET)
    monkeypatch.setenv("MEMORY_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("MEMORY_RETRIEVAL_ADDRESS", "127.0.0.1:9")  # never reached here
    for provider, expected in ((None, []), (TracerProvider(), ["client", "server"])):
        installed.clear()
        monkeypatch.setenv("MEMORY_DATABASE_URL", f"sqlite:///{tmp_path / uuid.uuid4().hex}.db")
        server = build_server(Settings.from_env(), provider)
        server.stop(1)
        assert sorted(installed) == expected
