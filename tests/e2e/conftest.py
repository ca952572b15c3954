"""Callers for the end-to-end tests: two users and an admin of one fresh tenant, and a stranger.

Every test runs against the shared session server of each backend (`memory_server`), isolated by
the fresh `tenant` fixture.
"""

from __future__ import annotations

import pytest

from tests.support.servers import Client, ServerProcess


@pytest.fixture
def other_tenant(tenant: str) -> str:
    """A second fresh tenant, distinct from `tenant`."""
    return f"{tenant}-other"


@pytest.fixture
def alice(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "alice")


@pytest.fixture
def alice_phone(memory_server: ServerProcess, tenant: str) -> Client:
    """Alice again, on a second channel: her other device."""
    return memory_server.client(tenant, "alice")


@pytest.fixture
def bob(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "bob")


@pytest.fixture
def admin(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "ada", ["admin"])


@pytest.fixture
def carol(memory_server: ServerProcess, other_tenant: str) -> Client:
    """A user of another tenant."""
    return memory_server.client(other_tenant, "carol")


@pytest.fixture
def other_admin(memory_server: ServerProcess, other_tenant: str) -> Client:
    """An admin of another tenant."""
    return memory_server.client(other_tenant, "ada", ["admin"])


@pytest.fixture
def alice_elsewhere(memory_server: ServerProcess, other_tenant: str) -> Client:
    """A user called `alice` too, but of another tenant: the same user id grants nothing."""
    return memory_server.client(other_tenant, "alice")
