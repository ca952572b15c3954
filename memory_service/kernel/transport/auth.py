"""Bearer-token authentication (I6): tenant, user and roles come from a verified JWT only."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import jwt

from memory_service.kernel.domain.errors import Unauthenticated
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.domain.rules import SUBJECT_ID_PATTERN

ALGORITHM = "HS256"
DEFAULT_MAX_LIFETIME_SECONDS = 86400
LEEWAY_SECONDS = 30
# Tokens already verified, by their exact text (a client sends the same token on every call
# until it renews it): a few thousand callers' worth, a few MB at most.
VERIFIED_TOKENS = 4096


class TokenAuthenticator:
    def __init__(
        self,
        secret: str,
        issuer: str,
        audience: str,
        max_lifetime_seconds: int = DEFAULT_MAX_LIFETIME_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secret = secret
        self._issuer = issuer
        self._audience = audience
        self._max_lifetime = max_lifetime_seconds
        self._clock = clock
        self._lock = threading.Lock()
        # token -> (identity, not valid before, expires): what a full verification decided
        self._verified: dict[str, tuple[Identity, float, float]] = {}

    def authenticate(self, context: grpc.ServicerContext) -> Identity:
        headers = [
            value if isinstance(value, str) else value.decode("utf-8", "replace")
            for key, value in context.invocation_metadata() or ()
            if key == "authorization"
        ]
        if len(headers) > 1:
            # Proxies and libraries disagree on which of two they honour: accept neither.
            raise Unauthenticated("send exactly one 'authorization' header")
        header = headers[0] if headers else ""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Unauthenticated("send 'authorization: Bearer <token>' metadata")
        return self.verify(token.strip())

    def verify(self, token: str) -> Identity:
        """The token's identity. A token this process verified before (the same text, so the
        same signature over the same claims) is only checked against the clock again: decoding
        and the HMAC are most of what an RPC refused at once (recall with the breaker open)
        costs the service."""
        known = self._verified.get(token)
        if known is not None:
            identity, not_before, expires = known
            now = self._clock()
            if expires <= now - LEEWAY_SECONDS:
                raise Unauthenticated("the token has expired")
            if not_before <= now + LEEWAY_SECONDS:
                return identity
        identity, not_before, expires = self._decode(token)
        with self._lock:
            if len(self._verified) >= VERIFIED_TOKENS:
                del self._verified[next(iter(self._verified))]  # the oldest
            self._verified[token] = (identity, not_before, expires)
        return identity

    def _decode(self, token: str) -> tuple[Identity, float, float]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                audience=self._audience,
                issuer=self._issuer,
                options={"require": ["exp", "iat", "sub", "tenant"]},
                leeway=LEEWAY_SECONDS,
            )
        except jwt.ExpiredSignatureError as error:
            raise Unauthenticated("the token has expired") from error
        except jwt.InvalidTokenError as error:
            raise Unauthenticated(f"the token is not valid: {error}") from error
        issued, expires = claims["iat"], claims["exp"]
        if not all(isinstance(t, int | float) for t in (issued, expires)):
            raise Unauthenticated("the token's iat and exp claims must be numbers")
        if expires - issued > self._max_lifetime:
            # A leaked long-lived token would outlive any rotation; the issuer must mint short ones.
            raise Unauthenticated(
                f"the token lives longer than the {self._max_lifetime} seconds this service accepts"
            )
        tenant, user, roles = claims.get("tenant"), claims.get("sub"), claims.get("roles", [])
        if not isinstance(tenant, str) or not SUBJECT_ID_PATTERN.fullmatch(tenant):
            raise Unauthenticated("the token's tenant claim is malformed")
        if not isinstance(user, str) or not SUBJECT_ID_PATTERN.fullmatch(user):
            raise Unauthenticated("the token's sub claim is malformed")
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise Unauthenticated("the token's roles claim must be a list of strings")
        not_before = max(float(issued), float(claims.get("nbf", issued)))
        return Identity(tenant, user, frozenset(roles)), not_before, float(expires)

    def derived_key(self, purpose: str) -> str:
        """A key for another use of the secret (page tokens), independent of the JWT key."""
        return hmac.new(self._secret.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    def mint(
        self, tenant: str, user: str, roles: Sequence[str] = (), ttl_seconds: int = 86400
    ) -> str:
        """Development tokens only; production tokens come from the identity provider. Only a
        token `verify` accepts: ValueError, naming what it would refuse, for any other."""
        if not 0 < ttl_seconds <= self._max_lifetime:
            raise ValueError(f"ttl must be between 1 and {self._max_lifetime} seconds")
        for what, value in (("tenant", tenant), ("user", user)):
            if not SUBJECT_ID_PATTERN.fullmatch(value):
                raise ValueError(
                    f"the service refuses the {what} id {value!r}: ids are 1 to 128 of "
                    "A-Z a-z 0-9 . _ @ : -"
                )
        now = int(time.time())
        claims = {
            "iss": self._issuer,
            "aud": self._audience,
            "sub": user,
            "tenant": tenant,
            "roles": list(roles),
            "iat": now,
            "exp": now + ttl_seconds,
        }
        token = jwt.encode(claims, self._secret, algorithm=ALGORITHM)
        try:
            self._decode(token)  # the service's own checks, whatever else they come to cover
        except Unauthenticated as error:
            raise ValueError(f"the service would refuse this token: {error}") from None
        return token
