"""Pagination for every List RPC (AIP-158), with page tokens the client cannot forge.

Every List RPC pages the same way: `PageTokens.page` checks page_size (default and maximum here)
and page_token, the use case reads `Page.fetch` rows after `Page.cursor`, and `Page.respond`
cuts the page and issues the next token.

A token is `base64url(json cursor) "." base64url(HMAC-SHA256)`. The MAC covers the tenant, the
caller and the fingerprint of the query (the request without page_token and page_size), under a
key derived from the service's secret: a token replayed by someone else, for another query, or
edited by hand is refused as INVALID_ARGUMENT `page_token`. The cursor is then checked against
the shapes the RPC declared, so even a token minted by an older build cannot reach SQL as a
value of the wrong type or range.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import Message as ProtoMessage

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.domain.rules import MAX_ID_CHARS, MAX_PAGE_TOKEN_CHARS, MAX_STORED_INT

T = TypeVar("T", str, int)
R = TypeVar("R")
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
FIELD = "page_token"
KEY_PURPOSE = "crmmem page tokens v1"
NOT_OURS = "is not a token this service issued for this query; start again without it"


@dataclass(frozen=True)
class Cursor:
    """One position in a listing: an id (bounded string) or an ordinal (non-negative int)."""

    kind: type
    maximum: int

    def accepts(self, value: Any) -> bool:
        if self.kind is int:
            return type(value) is int and 0 <= value <= self.maximum
        return isinstance(value, str) and 0 < len(value) <= self.maximum and "\x00" not in value


ID = Cursor(str, MAX_ID_CHARS)
ORDINAL = Cursor(int, MAX_STORED_INT)


@dataclass(frozen=True)
class Page:
    """What one List call asks for: how many, and where the previous page stopped."""

    size: int
    after: tuple[Any, ...]
    _request: ProtoMessage
    _identity: Identity
    _tokens: PageTokens

    @property
    def fetch(self) -> int:
        """How many rows to read: one more than the page, to learn whether another follows."""
        return self.size + 1

    def cursor(self, first: T) -> T:
        """Where to continue after (a one-part cursor), or `first` on the first page."""
        return self.after[0] if self.after else first

    def next_token(self, *position: str | int) -> str:
        return self._tokens.encode(self._request, self._identity, list(position))

    def respond(
        self, rows: Sequence[R], position: Callable[[R], tuple[str | int, ...]]
    ) -> tuple[list[R], str]:
        """The rows to show (read with `fetch`) and the next page token, '' on the last page."""
        shown = list(rows[: self.size])
        if len(rows) <= self.size:
            return shown, ""
        return shown, self.next_token(*position(shown[-1]))


class PageTokens:
    def __init__(self, key: str) -> None:
        """`key` is derived from the service's secret for this use only."""
        self._key = key.encode()

    def page(self, request: ProtoMessage, identity: Identity, cursor: Sequence[Cursor]) -> Page:
        """Validates page_size and page_token of a List request."""
        size = page_size(request.page_size)  # type: ignore[attr-defined]
        token: str = request.page_token  # type: ignore[attr-defined]
        after: tuple[Any, ...] = ()
        if token:
            after = self._decode(request, identity, token, cursor)
        return Page(size, after, request, identity, self)

    def encode(self, request: ProtoMessage, identity: Identity, position: list[Any]) -> str:
        payload = json.dumps(position, separators=(",", ":")).encode()
        mac = self._mac(request, identity, payload)
        return f"{_b64(payload)}.{_b64(mac)}"

    def _decode(
        self, request: ProtoMessage, identity: Identity, token: str, cursor: Sequence[Cursor]
    ) -> tuple[Any, ...]:
        if len(token) > MAX_PAGE_TOKEN_CHARS or token.count(".") != 1:
            raise InvalidArgument(FIELD, NOT_OURS)
        encoded_payload, encoded_mac = token.split(".")
        try:
            payload, mac = _unb64(encoded_payload), _unb64(encoded_mac)
        except (binascii.Error, ValueError):
            raise InvalidArgument(FIELD, NOT_OURS) from None
        if not hmac.compare_digest(mac, self._mac(request, identity, payload)):
            raise InvalidArgument(FIELD, NOT_OURS)
        try:
            position = json.loads(payload)
        except ValueError:
            raise InvalidArgument(FIELD, NOT_OURS) from None
        if (
            not isinstance(position, list)
            or len(position) != len(cursor)
            or not all(c.accepts(v) for c, v in zip(cursor, position, strict=True))
        ):
            raise InvalidArgument(FIELD, NOT_OURS)
        return tuple(position)

    def _mac(self, request: ProtoMessage, identity: Identity, payload: bytes) -> bytes:
        signed = hmac.new(self._key, digestmod=hashlib.sha256)
        for part in (
            identity.tenant_id.encode(),
            identity.user_id.encode(),
            type(request).DESCRIPTOR.full_name.encode(),
            _query_fingerprint(request),
            payload,
        ):
            signed.update(len(part).to_bytes(8, "big"))
            signed.update(part)
        return signed.digest()


def page_size(value: int, field: str = "page_size") -> int:
    if value < 0:
        raise InvalidArgument(field, "must not be negative")
    return min(value or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def _query_fingerprint(request: ProtoMessage) -> bytes:
    """A page token is only valid for the query that produced it."""
    query = type(request)()
    query.CopyFrom(request)
    for name in (FIELD, "page_size"):
        query.ClearField(name)
    return hashlib.sha256(query.SerializeToString(deterministic=True)).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
