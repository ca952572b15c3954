"""Undecodable request bytes, plain or gzip-compressed, are INVALID_ARGUMENT on every method
the memory service serves, not only the few a hand-picked list names: each method's handler is
wrapped as it is registered (`memory_service/kernel/transport/edge.py`), so a method registered
some other way, or a streaming one, must not fall back to gRPC's own INTERNAL. The methods come from
the server's reflection, so a service added later is covered without editing this test."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.servers import ServerProcess, mint_token

PAYLOADS = (b"\xff\xff\xff", b"\x0a\x05ab", b"\x12\x06")
REFLECTION = "grpc.reflection.v1alpha.ServerReflection"


def served_methods(channel: grpc.Channel) -> list[tuple[str, bool, bool]]:
    """(path, client streaming, server streaming) of every method reflection lists."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    names = [
        service.name
        for answer in stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
        )
        for service in answer.list_services_response.service
    ]
    methods = []
    for name in names:
        if name == REFLECTION:
            continue  # its one method streams requests: nothing to decode up front
        (answer,) = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol=name)]),
            timeout=10,
        )
        for encoded in answer.file_descriptor_response.file_descriptor_proto:
            proto = descriptor_pb2.FileDescriptorProto.FromString(encoded)
            for service in proto.service:
                if f"{proto.package}.{service.name}" != name:
                    continue
                for method in service.method:
                    methods.append(
                        (f"/{name}/{method.name}", method.client_streaming, method.server_streaming)
                    )
    return methods


def test_undecodable_bytes_are_invalid_argument_on_every_method(
    memory_server: ServerProcess,
) -> None:
    channel = memory_server.channel()
    metadata = (("authorization", f"Bearer {mint_token('t-every-method', 'alice')}"),)
    methods = served_methods(channel)
    assert len(methods) > 20, methods  # reflection answered with the whole API
    assert any(path.startswith("/grpc.health.v1.Health/") for path, _, _ in methods)
    wrong = {}
    for path, client_streaming, server_streaming in methods:
        if client_streaming:
            continue
        for payload, compression in [(p, grpc.Compression.NoCompression) for p in PAYLOADS] + [
            (PAYLOADS[0] * 1000, grpc.Compression.Gzip)
        ]:
            options = {"metadata": metadata, "timeout": 10, "compression": compression}
            try:
                if server_streaming:
                    list(channel.unary_stream(path)(payload, **options))
                else:
                    channel.unary_unary(path)(payload, **options)
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.INVALID_ARGUMENT:
                    wrong[(path, payload[:8], compression)] = error.code()
            else:
                wrong[(path, payload[:8], compression)] = "OK"
    assert not wrong, wrong


@pytest.mark.parametrize("payload", PAYLOADS)
def test_undecodable_health_check_is_invalid_argument_without_credentials(
    memory_server: ServerProcess, payload: bytes
) -> None:
    """Health is called by probes that carry no token: the wrapper must stand before it too."""
    channel = memory_server.channel()
    with pytest.raises(grpc.RpcError) as caught:
        channel.unary_unary("/grpc.health.v1.Health/Check")(payload, timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    log = memory_server.log()
    assert "Traceback" not in log
