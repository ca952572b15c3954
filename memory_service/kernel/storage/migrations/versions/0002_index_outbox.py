"""The transactional outbox that feeds the search index.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "index_outbox",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=False),
        sa.Column("due_time", UtcDateTime(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_until", UtcDateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
    )
    op.create_index("ix_index_outbox_due_time", "index_outbox", ["due_time"])


def downgrade() -> None:
    op.drop_table("index_outbox")
