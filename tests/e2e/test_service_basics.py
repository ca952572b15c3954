"""Standard services: health (overall and per service) and server reflection."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.servers import ServerProcess

pytestmark = pytest.mark.timeout(60)

SERVICES = [
    "crmmem.memory.v1.MemoryService",
    "crmmem.memory.v1.TranscriptService",
    "crmmem.memory.v1.AccessService",
]


@pytest.mark.parametrize("service", ["", *SERVICES])
def test_health_is_serving_without_credentials(memory_server: ServerProcess, service: str) -> None:
    stub = health_pb2_grpc.HealthStub(memory_server.channel())
    reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_health_of_unknown_service_is_not_found(memory_server: ServerProcess) -> None:
    stub = health_pb2_grpc.HealthStub(memory_server.channel())
    with pytest.raises(grpc.RpcError) as caught:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def _reflect(
    server: ServerProcess, request: reflection_pb2.ServerReflectionRequest
) -> reflection_pb2.ServerReflectionResponse:
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel())
    [reply] = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    return reply


def test_reflection_lists_the_services(memory_server: ServerProcess) -> None:
    reply = _reflect(memory_server, reflection_pb2.ServerReflectionRequest(list_services=""))
    listed = {s.name for s in reply.list_services_response.service}
    assert set(SERVICES) <= listed, listed
    assert "grpc.health.v1.Health" in listed


@pytest.mark.parametrize("service", SERVICES)
def test_reflection_describes_each_service(memory_server: ServerProcess, service: str) -> None:
    reply = _reflect(
        memory_server, reflection_pb2.ServerReflectionRequest(file_containing_symbol=service)
    )
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in reply.file_descriptor_response.file_descriptor_proto
    ]
    described = {f"{f.package}.{s.name}" for f in files for s in f.service}
    assert service in described, described
