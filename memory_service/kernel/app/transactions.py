"""Units of work for the use cases, with request-id idempotency recorded in the same transaction.

A write reserves its request id first, inside the transaction that does the work, so duplicates
in flight at once wait for the first and replay its answer (invariant I4 in docs/invariants.md).
The answer is stored as the bytes the caller received; the transport says how to encode and
decode it, so this layer knows nothing about the wire format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

from memory_service.kernel.domain.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    Reason,
    WriteConflict,
)
from memory_service.kernel.domain.model import Identity, utcnow
from memory_service.kernel.domain.ports import StoredResponse, UnitOfWork, UnitOfWorkFactory

R = TypeVar("R")
A = TypeVar("A")
WRITE_ATTEMPTS = 3


@dataclass(frozen=True)
class RequestKey(Generic[A]):
    """A write as the idempotency store sees it: the method, the caller's request id ('' when
    the caller sent none), a digest of everything else the request asks for, and how the answer
    is stored and read back."""

    method: str
    request_id: str
    fingerprint: str
    encode: Callable[[A], bytes]
    decode: Callable[[bytes], A]


class Answer(Generic[A]):
    """What a write answers, and the id of the memory or import item whose text the answer
    carries ('' for none; a batch's answer carries several): deleting that record (or the
    memory it became, or its batch) redacts the stored answer, and a replay then says
    MEMORY_DELETED instead of the text."""

    __slots__ = ("_present", "_reply", "shows")

    def __init__(self, reply: A, shows: str | tuple[str, ...] = "") -> None:
        self._reply: tuple[A] | None = (reply,)
        self._present: Callable[[], A] | None = None
        self.shows = shows

    @classmethod
    def later(cls, present: Callable[[], A], shows: str | tuple[str, ...] = "") -> Answer[A]:
        """An answer built only when asked for: from what the work decided (never from a
        read), so without a request id to store it under it is built after the commit,
        outside the writer lock; a batch's answer is a few milliseconds of conversion."""
        answer = cls.__new__(cls)
        answer._reply, answer._present, answer.shows = None, present, shows
        return answer

    @property
    def reply(self) -> A:
        if self._reply is None:
            assert self._present is not None
            self._reply = (self._present(),)
        return self._reply[0]

    @property
    def shown(self) -> tuple[str, ...]:
        return tuple(filter(None, (self.shows,) if isinstance(self.shows, str) else self.shows))


class Transactions:
    def __init__(
        self,
        units: UnitOfWorkFactory,
        idempotency_ttl: timedelta,
        index_work_committed: Callable[[], None] = lambda: None,
    ) -> None:
        """`index_work_committed` runs after a commit that queued index work due now: it wakes
        the outbox drain, so indexing starts at the commit rather than at the next poll."""
        self._units = units
        self._ttl = idempotency_ttl
        self._index_work_committed = index_work_committed

    def read(self, identity: Identity, work: Callable[[UnitOfWork], R]) -> R:
        with self._units(identity.tenant_id, write=False) as uow:
            return work(uow)

    def write(
        self, identity: Identity, key: RequestKey[A], work: Callable[[UnitOfWork], Answer[A]]
    ) -> A:
        """Commit `work` once per request id; a replay returns the stored answer.

        A lost race on a unique key (two first writes at once) is retried, and the retry sees
        the winner: the stored answer, an existing memory, or an existing conversation.
        """
        for _ in range(WRITE_ATTEMPTS):
            try:
                with self._units(identity.tenant_id, write=True) as uow:
                    if key.request_id:
                        replay = self._reserve(uow, identity, key)
                        if replay is not None:
                            return key.decode(replay)
                    answer = work(uow)
                    if key.request_id:
                        uow.idempotency.record(
                            identity.user_id,
                            key.request_id,
                            key.encode(answer.reply),
                            answer.shown,
                        )
                    uow.commit()
                    if uow.outbox.queued_now:
                        self._index_work_committed()
                return answer.reply  # built here, after the commit, unless stored above
            except WriteConflict:
                continue
        raise Aborted("the write kept colliding with concurrent writes; retry", None, {})

    def _reserve(self, uow: UnitOfWork, identity: Identity, key: RequestKey[A]) -> bytes | None:
        """The stored answer of an earlier attempt, or None once this attempt holds the id."""
        stored = uow.idempotency.get(identity.user_id, key.request_id)
        now = utcnow()
        if stored is not None and stored.create_time >= now - self._ttl:
            return self._replay(stored, key)
        reserved = StoredResponse(key.method, key.fingerprint, b"", now)
        # An expired row is forgotten first; with no row there is nothing to forget.
        expired = None if stored is None else now - self._ttl
        uow.idempotency.reserve(identity.user_id, key.request_id, reserved, expired)
        return None

    @staticmethod
    def _replay(stored: StoredResponse, key: RequestKey[A]) -> bytes:
        if stored.fingerprint != key.fingerprint:
            raise InvalidArgument(
                "request_id",
                "was already used for a different request",
                reason=Reason.REQUEST_ID_REUSED,
            )
        if stored.redacted:
            raise FailedPrecondition(
                "the memory or import item this request showed has since been deleted",
                reason=Reason.MEMORY_DELETED,
            )
        return stored.response
