"""The idempotency repository: each request id a user sent, the answer stored for it and the
memories that answer shows (so a deleted memory's text is redacted from stored answers), and
the retention purge of request ids across tenants.

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`), or from
`AllTenants` for the purge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, or_, tuple_
from sqlalchemy.orm import Session

from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import StoredResponse
from memory_service.kernel.storage.models import IdempotencyRow, IdempotencyShownRow
from memory_service.kernel.storage.scoped import AllTenants, Prepare, TenantScoped


class SqlIdempotencyRepository(TenantScoped):
    def __init__(self, session: Session, tenant_id: str, *, serialised: bool = False) -> None:
        """`serialised`: this write transaction holds the database's only writer lock from its
        BEGIN (SQLite), so no other transaction can reserve a request id before it ends."""
        super().__init__(session, tenant_id)
        self._serialised = serialised
        self._reserved: dict[str, Any] | None = None  # a reserved row waiting for its answer

    def get(self, user_id: str, request_id: str) -> StoredResponse | None:
        row = self._run(
            "idempotency.get",
            lambda p: p.select(IdempotencyRow).where(
                IdempotencyRow.user_id == bindparam("user"),
                IdempotencyRow.request_id == bindparam("request"),
            ),
            user=user_id,
            request=request_id,
        ).first()
        if row is None:
            return None
        return StoredResponse(
            row.method, row.fingerprint, row.response, row.create_time, row.memory_id or ""
        )

    def reserve(
        self, user_id: str, request_id: str, stored: StoredResponse, expired: datetime | None
    ) -> None:
        """Reserves the request id: its row goes in before the work, so a duplicate in flight
        waits on it.

        On PostgreSQL a second INSERT of the same key blocks until the first transaction ends and
        then fails (WriteConflict), and the retry replays the stored response. Only an expired row
        is removed (`expired` is None when the lookup found no row: nothing to remove): deleting
        a live one would let a duplicate do the work twice. When writers are serialised the
        row goes in with its answer (`record`), one statement instead of an INSERT and an
        UPDATE: no other writer can look for it in between.
        """
        if expired is not None:
            for model in (IdempotencyRow, IdempotencyShownRow):
                self._run(
                    ("idempotency.forget_expired", model),
                    _forget_expired(model),
                    user=user_id,
                    request=request_id,
                    expired=expired,
                )
        row = {
            "user_id": user_id,
            "request_id": request_id,
            "method": stored.method,
            "fingerprint": stored.fingerprint,
            "response": stored.response,
            "create_time": stored.create_time,
            "memory_id": stored.memory_id or None,
        }
        if self._serialised:
            self._reserved = row
        else:
            self._insert(IdempotencyRow, **row)

    def flush(self) -> None:
        """Writes a reservation still waiting for its answer; the unit of work calls it before
        COMMIT."""
        row, self._reserved = self._reserved, None
        if row is not None:
            self._insert(IdempotencyRow, **row)

    def record(self, user_id: str, request_id: str, response: bytes, shown: Sequence[str]) -> None:
        """The response of a reserved request id (and the memories it shows), in the same
        transaction as its effect. The first shown memory marks the row as showing one; a
        batch lists all of them in `idempotency_shown` as well."""
        reserved = self._reserved
        if reserved is not None and (reserved["user_id"], reserved["request_id"]) == (
            user_id,
            request_id,
        ):
            self._reserved = None
            reserved.update(response=response, memory_id=shown[0] if shown else None)
            self._insert(IdempotencyRow, **reserved)
        else:
            self._run(
                "idempotency.record",
                lambda p: (
                    p.update(IdempotencyRow)
                    .where(
                        IdempotencyRow.user_id == bindparam("user"),
                        IdempotencyRow.request_id == bindparam("request"),
                    )
                    .values(response=bindparam("response"), memory_id=bindparam("memory_id"))
                ),
                user=user_id,
                request=request_id,
                response=response,
                memory_id=shown[0] if shown else None,
            )
        if len(shown) > 1:
            now = utcnow()
            self._insert_many(
                IdempotencyShownRow,
                [
                    {
                        "memory_id": memory_id,
                        "user_id": user_id,
                        "request_id": request_id,
                        "create_time": now,
                    }
                    for memory_id in dict.fromkeys(shown)
                ],
            )

    def redact_shown(self, record_ids: list[str]) -> int:
        if not record_ids:
            return 0
        result = self._session.execute(
            self._update(IdempotencyRow)
            .where(
                or_(
                    IdempotencyRow.memory_id.in_(record_ids),
                    # uncorrelated, so the subquery is scoped on its own (kernel/storage/scoped.py)
                    tuple_(IdempotencyRow.user_id, IdempotencyRow.request_id).in_(
                        self._select(
                            IdempotencyShownRow,
                            IdempotencyShownRow.user_id,
                            IdempotencyShownRow.request_id,
                        ).where(IdempotencyShownRow.memory_id.in_(record_ids))
                    ),
                ),
            )
            .values(response=b"")
        )
        return int(result.rowcount)  # type: ignore[attr-defined]


def _forget_expired(
    model: type[IdempotencyRow] | type[IdempotencyShownRow],
) -> Callable[[Prepare], Any]:
    """Deletes the row of a request id (user, request) created before `expired`."""
    return lambda p: p.delete(model).where(
        model.user_id == bindparam("user"),
        model.request_id == bindparam("request"),
        model.create_time < bindparam("expired"),
    )


def purge_idempotency_keys(everyone: AllTenants, older_than: datetime) -> int:
    """Retention across tenants: forget request ids past their retention, with every row
    listing what their answers show (written a moment after the request id's own row, so
    possibly not yet past retention): a reservation looks for those only when the lookup found the
    request id's row."""
    purged = everyone.select(
        IdempotencyRow, IdempotencyRow.tenant_id, IdempotencyRow.user_id, IdempotencyRow.request_id
    ).where(IdempotencyRow.create_time < older_than)
    everyone.session.execute(
        everyone.delete(IdempotencyShownRow).where(
            or_(
                IdempotencyShownRow.create_time < older_than,
                tuple_(
                    IdempotencyShownRow.tenant_id,
                    IdempotencyShownRow.user_id,
                    IdempotencyShownRow.request_id,
                ).in_(purged),
            )
        )
    )
    result = everyone.session.execute(
        everyone.delete(IdempotencyRow).where(IdempotencyRow.create_time < older_than)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
