"""A token the service accepted once may be remembered so it is not verified again on every call
(docs: the transport layer's authentication). What a remembered token must never do: outlive
its expiry, lend its identity to a token with the same claims and another signature, blur two
tenants whose ids share a prefix, or accept a token it would refuse."""

from __future__ import annotations

import time

import grpc
import jwt
import pytest
from crmmem.memory.v1 import access_service_pb2, access_service_pb2_grpc

from tests.support.servers import (
    JWT_AUDIENCE,
    JWT_ISSUER,
    TEST_JWT_SECRET,
    ServerProcess,
    mint_token,
)

pytestmark = pytest.mark.timeout(120)


def _caller(server: ServerProcess, token: str) -> tuple[str, str, list[str]]:
    stub = access_service_pb2_grpc.AccessServiceStub(server.channel())
    answer = stub.GetCaller(
        access_service_pb2.GetCallerRequest(),
        metadata=(("authorization", f"Bearer {token}"),),
        timeout=10,
    )
    return answer.tenant_id, answer.user_id, sorted(answer.roles)


def _refused(server: ServerProcess, token: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _caller(server, token)
    assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED, caught.value.details()


def test_a_forged_signature_is_refused_after_the_genuine_token_was_accepted(
    memory_server: ServerProcess, tenant: str
) -> None:
    genuine = mint_token(tenant, "alice", ["admin"])
    for _ in range(3):
        assert _caller(memory_server, genuine) == (tenant, "alice", ["admin"])
    header, payload, _ = genuine.split(".")
    forged_elsewhere = jwt.encode(
        jwt.decode(genuine, options={"verify_signature": False}), "another-" + "z" * 40, "HS256"
    )
    assert forged_elsewhere.split(".")[:2] == [header, payload]  # the same claims, other key
    _refused(memory_server, forged_elsewhere)
    _refused(memory_server, f"{header}.{payload}.")  # no signature at all
    _refused(memory_server, f"{header}.{payload}")
    # The genuine token's claims with a raised role, signed with the wrong key.
    escalated = jwt.encode(
        {**jwt.decode(genuine, options={"verify_signature": False}), "roles": ["admin", "root"]},
        "another-" + "z" * 40,
        "HS256",
    )
    _refused(memory_server, escalated)
    assert _caller(memory_server, genuine) == (tenant, "alice", ["admin"])


def test_an_accepted_token_is_refused_once_its_expiry_and_leeway_have_passed(
    memory_server: ServerProcess, tenant: str
) -> None:
    """Expired 26 s ago, so inside the 30 s leeway for a few seconds more: accepted (and
    remembered) now, refused once the leeway has run out, however often it was seen."""
    issued = int(time.time()) - 60
    token = jwt.encode(
        {
            "iss": JWT_ISSUER,
            "aud": JWT_AUDIENCE,
            "sub": "alice",
            "tenant": tenant,
            "roles": [],
            "iat": issued,
            "exp": issued + 34,
        },
        TEST_JWT_SECRET,
        "HS256",
    )
    assert _caller(memory_server, token)[:2] == (tenant, "alice")
    assert _caller(memory_server, token)[:2] == (tenant, "alice")
    time.sleep(max(0.0, issued + 34 + 30 + 1.5 - time.time()))
    _refused(memory_server, token)
    _refused(memory_server, token)


def test_a_token_not_valid_yet_is_refused_even_after_a_valid_one_of_the_same_caller(
    memory_server: ServerProcess, tenant: str
) -> None:
    valid = mint_token(tenant, "alice")
    assert _caller(memory_server, valid)[:2] == (tenant, "alice")
    later = mint_token(tenant, "alice", nbf=int(time.time()) + 600)
    _refused(memory_server, later)
    _refused(memory_server, later)


def test_tenants_sharing_a_prefix_keep_their_own_identity(
    memory_server: ServerProcess, tenant: str, other_tenant: str
) -> None:
    assert other_tenant.startswith(tenant)
    mine, theirs = mint_token(tenant, "alice"), mint_token(other_tenant, "alice")
    for _ in range(3):
        assert _caller(memory_server, mine)[:2] == (tenant, "alice")
        assert _caller(memory_server, theirs)[:2] == (other_tenant, "alice")
    # A token whose text starts with another's (the same header and claims, a longer tail).
    _refused(memory_server, mine + "x")
    _refused(memory_server, mine + ".x")
