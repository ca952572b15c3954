"""Deletion reaches stored responses; candidates say why they are candidates.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.add_column(sa.Column("memory_id", sa.String(32), nullable=True))
    op.create_index("ix_idempotency_keys_memory", "idempotency_keys", ["tenant_id", "memory_id"])
    op.create_index("ix_import_items_memory", "import_items", ["tenant_id", "memory_id"])
    with op.batch_alter_table("memory_revisions") as batch:
        batch.add_column(sa.Column("status_reason", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("memory_revisions") as batch:
        batch.drop_column("status_reason")
    op.drop_index("ix_import_items_memory", "import_items")
    op.drop_index("ix_idempotency_keys_memory", "idempotency_keys")
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.drop_column("memory_id")
