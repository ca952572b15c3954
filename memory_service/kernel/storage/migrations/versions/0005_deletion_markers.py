"""Deletion markers keep a hash of the scoped key instead of the key.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memories") as batch:
        batch.add_column(sa.Column("key_hash", sa.String(64), nullable=False, server_default=""))
    op.create_index("ix_memories_key_hash", "memories", ["tenant_id", "key_hash"])


def downgrade() -> None:
    op.drop_index("ix_memories_key_hash", "memories")
    with op.batch_alter_table("memories") as batch:
        batch.drop_column("key_hash")
