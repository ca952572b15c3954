"""Runs use cases in transactions, with AIP-155 idempotency recorded in the same transaction."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from google.protobuf.message import Message as ProtoMessage

from memory_service.domain.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    WriteConflict,
)
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import StoredResponse, UnitOfWork, UnitOfWorkFactory
from memory_service.transport.convert import check_request_id

R = TypeVar("R")
P = TypeVar("P", bound=ProtoMessage)
WRITE_ATTEMPTS = 3


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


class Transactions:
    def __init__(self, units: UnitOfWorkFactory, idempotency_ttl: timedelta) -> None:
        self._units = units
        self._ttl = idempotency_ttl

    def read(self, identity: Identity, work: Callable[[UnitOfWork], R]) -> R:
        with self._units(identity.tenant_id, write=False) as uow:
            return work(uow)

    def write(
        self,
        identity: Identity,
        method: str,
        request: ProtoMessage,
        response_type: type[P],
        work: Callable[[UnitOfWork], P],
    ) -> P:
        """Commit `work` once per request_id; a replay returns the stored response.

        The request id is claimed first in the transaction, so duplicates in flight at once wait
        for the first and replay it. A lost race on a unique key (two first writes at once) is
        retried, and the retry sees the winner: the stored response, an existing memory, or an
        existing conversation.
        """
        request_id = check_request_id(getattr(request, "request_id", ""))
        request_fingerprint = fingerprint(method, request)
        for _ in range(WRITE_ATTEMPTS):
            try:
                with self._units(identity.tenant_id, write=True) as uow:
                    if request_id:
                        replay = self._claim(uow, identity, method, request_id, request_fingerprint)
                        if replay is not None:
                            return response_type.FromString(replay)
                    response = work(uow)
                    if request_id:
                        uow.idempotency.record(
                            identity.user_id,
                            request_id,
                            response.SerializeToString(),
                            record_shown(response),
                        )
                    uow.commit()
                    return response
            except WriteConflict:
                continue
        raise Aborted("the write kept colliding with concurrent writes; retry", None, {})

    def _claim(
        self,
        uow: UnitOfWork,
        identity: Identity,
        method: str,
        request_id: str,
        request_fingerprint: str,
    ) -> bytes | None:
        """The stored response of an earlier attempt, or None once this attempt holds the id."""
        replay = self._replay(uow, identity, request_id, request_fingerprint)
        if replay is None:
            now = utcnow()
            claimed = StoredResponse(method, request_fingerprint, b"", now)
            uow.idempotency.claim(identity.user_id, request_id, claimed, now - self._ttl)
        return replay

    def _replay(
        self, uow: UnitOfWork, identity: Identity, request_id: str, request_fingerprint: str
    ) -> bytes | None:
        stored = uow.idempotency.get(identity.user_id, request_id)
        if stored is None or stored.create_time < utcnow() - self._ttl:
            return None
        if stored.fingerprint != request_fingerprint:
            raise InvalidArgument(
                "request_id",
                "was already used for a different request",
                reason="REQUEST_ID_REUSED",
            )
        if stored.redacted:
            raise FailedPrecondition(
                "the memory or import item this request showed has since been deleted",
                reason="MEMORY_DELETED",
            )
        return stored.response


def record_shown(response: ProtoMessage) -> str:
    """The id of the record whose text a response carries — a memory in its `memory` field, or
    else an import item in its `item` field — so that deleting that record (or the memory it
    became, or its batch) redacts the stored response too ('' for responses that show none)."""
    for field in ("memory", "item"):
        shown = getattr(response, field, None)
        if shown is not None and response.HasField(field):
            name: str = shown.name
            if name.startswith("memories/") or name.startswith("importBatches/"):
                return name.rsplit("/", 1)[-1]
    return ""
