"""Restores: a confirmation brought back from an export says who restored it and when, and a
restore batch keeps its mode (clean or merge) until its background parse runs.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_revisions") as batch:
        batch.add_column(sa.Column("confirm_restored_by", sa.String(128), nullable=True))
        batch.add_column(sa.Column("confirm_restore_time", UtcDateTime(), nullable=True))
    with op.batch_alter_table("import_batches") as batch:
        batch.add_column(
            sa.Column("restore_mode", sa.String(16), nullable=False, server_default="CLEAN")
        )


def downgrade() -> None:
    with op.batch_alter_table("import_batches") as batch:
        batch.drop_column("restore_mode")
    with op.batch_alter_table("memory_revisions") as batch:
        batch.drop_column("confirm_restore_time")
        batch.drop_column("confirm_restored_by")
