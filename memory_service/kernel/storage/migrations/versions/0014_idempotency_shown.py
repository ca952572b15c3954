"""A batch's stored response shows many memories: deleting any of them redacts it.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "idempotency_shown",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("memory_id", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.String(128), primary_key=True),
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_idempotency_shown_create_time", "idempotency_shown", ["create_time"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_shown_create_time", "idempotency_shown")
    op.drop_table("idempotency_shown")
