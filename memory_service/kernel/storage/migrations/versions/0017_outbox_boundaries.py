"""Every scheduled boundary of a memory reaches the index: an index on the outbox's memory and
due time, and a change queued now for each memory that has boundaries still ahead.

Before this, a write queued only its memory's first four future boundaries (the instants a
revision starts, ends or is replaced) and a restore none, so a memory with more, or a restored
one, kept a stale point after them. The drain now queues a memory's next boundaries whenever
it indexes the memory, wherever an item at that instant is missing; the index lets it find the
memory's queued items without reading the whole outbox. The items queued here index once more
every memory with an instant on an active revision, past ones included: those whose missed
boundary already passed are the ones the index has wrong, and the drain then queues the
boundaries of those with more ahead.

Revision ID: 0017
Revises: 0016
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_index_outbox_memory", "index_outbox", ["memory_id", "due_time"])
    now = datetime.now(UTC).replace(tzinfo=None)  # the outbox keeps UTC without a zone
    op.get_bind().execute(
        sa.text(
            "INSERT INTO index_outbox (tenant_id, memory_id, due_time, create_time, attempts, kind)"
            " SELECT DISTINCT r.tenant_id, r.memory_id, :now, :now, 0, 'memory'"
            " FROM memory_revisions r JOIN memories m"
            " ON m.tenant_id = r.tenant_id AND m.id = r.memory_id"
            " WHERE m.delete_time IS NULL AND r.status = 'ACTIVE'"
            " AND (r.valid_from IS NOT NULL OR r.valid_until IS NOT NULL"
            " OR r.superseded_from IS NOT NULL)"
        ).bindparams(sa.bindparam("now", now, type_=sa.DateTime())),
    )


def downgrade() -> None:
    op.drop_index("ix_index_outbox_memory", "index_outbox")
