"""What a memory service's index outbox still holds, read from its database: a test waits for
the outbox to have tried, or to have drained, instead of sleeping for as long as that takes on
some machine."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.pool import NullPool


def queued_errors(database_url: str, tenant_id: str) -> list[str | None]:
    """The last error of each of the tenant's queued index operations (None for one not tried
    yet or released untried); an empty list once the tenant's operations have all run."""
    engine = sa.create_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT last_error FROM index_outbox WHERE tenant_id = :tenant"),
                {"tenant": tenant_id},
            )
            return [error for (error,) in rows]
    finally:
        engine.dispose()
