"""When each memory was last used in a context or a recall (written in batches, off the read path).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_usage",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("memory_id", sa.String(32), primary_key=True),
        sa.Column("last_used_time", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_memory_usage_last_used", "memory_usage", ["tenant_id", "last_used_time"])


def downgrade() -> None:
    op.drop_index("ix_memory_usage_last_used", "memory_usage")
    op.drop_table("memory_usage")
