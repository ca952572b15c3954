"""Outbox rows of several kinds: a whole-tenant rebuild or resync, and the refills it queues.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("index_outbox") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="memory"))


def downgrade() -> None:
    with op.batch_alter_table("index_outbox") as batch:
        batch.drop_column("kind")
