"""Server spans, checked with an in-memory exporter against a real in-process gRPC server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from memory_service.bootstrap import RunningServer, build_server
from memory_service.config import Settings
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
