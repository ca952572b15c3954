"""Import batches count their parse attempts and are leased to one replica at a time.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("import_batches") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("lease_owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("lease_until", UtcDateTime(), nullable=True))
    op.create_index("ix_import_batches_state", "import_batches", ["state", "create_time"])


def downgrade() -> None:
    op.drop_index("ix_import_batches_state", "import_batches")
    with op.batch_alter_table("import_batches") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("lease_owner")
        batch.drop_column("attempts")
