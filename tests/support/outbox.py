"""What a memory service's index outbox still holds, read from its database: a test waits for
the outbox to have tried, to be sending, or to have drained, instead of sleeping for as long as
that takes on some machine."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.pool import NullPool


@dataclass(frozen=True)
class Queued:
    """One queued index operation: `leased` while a worker is sending it, `last_error` once a
    try failed (None for one not tried yet, or handed back untried)."""

    leased: bool
    last_error: str | None


def queued(database_url: str, tenant_id: str) -> list[Queued]:
    """The tenant's queued index operations; an empty list once they have all run."""
    engine = sa.create_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text(
                    "SELECT lease_owner, last_error FROM index_outbox WHERE tenant_id = :tenant"
                ),
                {"tenant": tenant_id},
            )
            return [Queued(owner is not None, error) for owner, error in rows]
    finally:
        engine.dispose()
