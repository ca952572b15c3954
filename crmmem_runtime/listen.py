"""Binding a gRPC server to its address, for the memory service and the retrieval sidecar.

gRPC sets SO_REUSEPORT by default, so a second instance on the same port starts and the kernel
splits connections between the two. SERVER_OPTIONS turns that off; `listen` then fails with one
clear line when the port is taken."""

from __future__ import annotations

from typing import Protocol

SERVER_OPTIONS: list[tuple[str, int]] = [("grpc.so_reuseport", 0)]


class AddressInUse(Exception):
    """The listen address is taken (or cannot be bound): the process must not start."""


class _Bindable(Protocol):
    def add_insecure_port(self, address: str) -> int: ...


def listen(server: _Bindable, address: str) -> int:
    """Bind `address`; the port actually bound (useful with port 0)."""
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if port == 0:
        raise AddressInUse(
            f"cannot listen on {address}: the address is in use by another process "
            "or not available on this host"
        )
    return port
