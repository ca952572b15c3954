"""Identity comes from a verified token and nothing else."""

from __future__ import annotations

import re
import time

import jwt
import pytest

from memory_service.kernel.domain.errors import Unauthenticated
from memory_service.kernel.transport.auth import TokenAuthenticator

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


@pytest.mark.parametrize(
    ("tenant", "user", "refused"),
    [
        ("acme", "bad user", "user id 'bad user'"),
        ("ac/me", "mara", "tenant id 'ac/me'"),
        ("acme", "", "user id ''"),
        ("acme", "m" * 129, "user id 'mmm"),
    ],
)
def test_mint_refuses_what_the_service_would_refuse(tenant: str, user: str, refused: str) -> None:
    with pytest.raises(ValueError, match=f"the service refuses the {re.escape(refused)}"):
        AUTH.mint(tenant, user)


@pytest.mark.parametrize("tenant", ["acme\n", "acme\r\n", " acme", ""])
def test_tenant_claims_match_as_whole_strings(tenant: str) -> None:
    with pytest.raises(Unauthenticated):
        AUTH.verify(token(tenant=tenant))


def test_a_token_verified_before_is_not_decoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    auth = TokenAuthenticator(SECRET, "crmmem", "crmmem.memory")
    good = token(sub="ines")
    decodes: list[str] = []
    real_decode = jwt.decode
    monkeypatch.setattr(
        jwt, "decode", lambda t, *a, **k: decodes.append(t) or real_decode(t, *a, **k)
    )
    assert [auth.verify(good).user_id for _ in range(3)] == ["ines"] * 3
    assert decodes == [good]
    # Any other text is another token: a forged signature over the same claims is decoded
    # (and refused) whatever was verified before.
    forged = good.rsplit(".", 1)[0] + "." + token(secret="x" * 40, sub="ines").rsplit(".", 1)[1]
    with pytest.raises(Unauthenticated):
        auth.verify(forged)
    assert decodes == [good, forged]


def test_a_verified_token_still_expires() -> None:
    now = time.time()
    clock = [now]
    auth = TokenAuthenticator(SECRET, "crmmem", "crmmem.memory", clock=lambda: clock[0])
    short = token(exp=int(now) + 60)
    assert auth.verify(short).user_id == "mara"
    clock[0] = now + 60 + 29  # within the 30 s leeway, as the library allows
    assert auth.verify(short).user_id == "mara"
    clock[0] = now + 60 + 31
    with pytest.raises(Unauthenticated, match="expired"):
        auth.verify(short)


def test_a_verified_token_before_its_time_is_decoded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clock set back past the token's iat does not answer from what was verified: the
    library decides again."""
    now = time.time()
    clock = [now]
    auth = TokenAuthenticator(SECRET, "crmmem", "crmmem.memory", clock=lambda: clock[0])
    fresh = token()
    decodes: list[str] = []
    real_decode = jwt.decode
    monkeypatch.setattr(
        jwt, "decode", lambda t, *a, **k: decodes.append(t) or real_decode(t, *a, **k)
    )
    assert auth.verify(fresh).user_id == "mara"
    clock[0] = now - 3600
    assert auth.verify(fresh).user_id == "mara"
    assert decodes == [fresh, fresh]
