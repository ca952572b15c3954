"""Identity comes from a verified token and nothing else."""

from __future__ import annotations

import time

import jwt
import pytest

from memory_service.domain.errors import Unauthenticated
from memory_service.transport.auth import TokenAuthenticator

SECRET = "s" * 40
AUTH = TokenAuthenticator(SECRET, "crmmem", "crmmem.memory")


def token(secret: str = SECRET, **claims: object) -> str:
    now = int(time.time())
    body: dict[str, object] = {
        "iss": "crmmem",
        "aud": "crmmem.memory",
        "sub": "mara",
        "tenant": "acme",
        "roles": ["admin"],
        "iat": now,
        "exp": now + 60,
    }
    body.update(claims)
    return jwt.encode({k: v for k, v in body.items() if v is not None}, secret, algorithm="HS256")


def test_minted_token_round_trips() -> None:
    identity = AUTH.verify(AUTH.mint("acme", "mara", ["admin"]))
    assert (identity.tenant_id, identity.user_id, identity.is_admin) == ("acme", "mara", True)


@pytest.mark.parametrize(
    "bad",
    [
        token(secret="x" * 40),
        token(exp=int(time.time()) - 3600),
        token(aud="someone-else"),
        token(iss="someone-else"),
        token(tenant=None),
        token(tenant="bad tenant!"),
        token(roles="admin"),
        jwt.encode({"sub": "mara", "tenant": "acme"}, SECRET, algorithm="HS256"),
        "not-a-jwt",
    ],
)
def test_bad_tokens_are_unauthenticated(bad: str) -> None:
    with pytest.raises(Unauthenticated):
        AUTH.verify(bad)


def test_unsigned_tokens_are_refused() -> None:
    unsigned = jwt.encode(
        {"sub": "mara", "tenant": "acme", "iat": 1, "exp": 2**31}, key="", algorithm="none"
    )
    with pytest.raises(Unauthenticated):
        AUTH.verify(unsigned)


def test_lifetime_is_bounded_by_the_configured_maximum() -> None:
    now = int(time.time())
    short = TokenAuthenticator(SECRET, "crmmem", "crmmem.memory", max_lifetime_seconds=600)
    assert short.verify(token(iat=now, exp=now + 600)).user_id == "mara"
    with pytest.raises(Unauthenticated, match="lives longer"):
        short.verify(token(iat=now, exp=now + 601))
    with pytest.raises(ValueError, match="ttl"):
        short.mint("acme", "mara", ttl_seconds=601)


@pytest.mark.parametrize("tenant", ["acme\n", "acme\r\n", " acme", ""])
def test_tenant_claims_match_as_whole_strings(tenant: str) -> None:
    with pytest.raises(Unauthenticated):
        AUTH.verify(token(tenant=tenant))
