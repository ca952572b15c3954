"""A request's id and what it asks for, as the application layer's idempotency store keys them."""

from __future__ import annotations

import hashlib
from typing import TypeVar

from google.protobuf.message import Message as ProtoMessage

from memory_service.kernel.app.transactions import RequestKey
from memory_service.kernel.transport.fields import check_request_id

P = TypeVar("P", bound=ProtoMessage)


def fingerprint(method: str, request: ProtoMessage) -> str:
    """What the request asks for, without its request_id. The id is cleared on the request
    itself and put back, rather than on a copy: an import request carries a whole archive."""
    has_id = any(f.name == "request_id" for f in request.DESCRIPTOR.fields)
    request_id = getattr(request, "request_id", "") if has_id else ""
    if has_id:
        request.ClearField("request_id")
    try:
        digest = hashlib.sha256(method.encode())
        digest.update(request.SerializeToString(deterministic=True))
    finally:
        if request_id:
            setattr(request, "request_id", request_id)  # noqa: B010
    return digest.hexdigest()


def request_key(method: str, request: ProtoMessage, response_type: type[P]) -> RequestKey[P]:
    """The request id (checked: a UUID or empty), the fingerprint, and the response's codec."""
    return RequestKey(
        method,
        check_request_id(getattr(request, "request_id", "")),
        fingerprint(method, request),
        encode=lambda reply: reply.SerializeToString(),
        decode=response_type.FromString,
    )
