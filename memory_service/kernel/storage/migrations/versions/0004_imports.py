"""Import batches and their items (evidence for review).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "import_batches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.Column("archive_sha256", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("archive", sa.LargeBinary(), nullable=True),
        sa.Column("accepted_count", sa.Integer(), nullable=False),
        sa.Column("skipped_count", sa.Integer(), nullable=False),
        sa.Column("unresolved_count", sa.Integer(), nullable=False),
        sa.Column("missing_count", sa.Integer(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("complete_time", UtcDateTime(), nullable=True),
        sa.UniqueConstraint(
            "tenant_id", "user_id", "archive_sha256", name="uq_import_batches_archive"
        ),
    )
    op.create_table(
        "import_items",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("batch_id", sa.String(32), nullable=False),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(24), nullable=False),
        sa.Column("skip_reason", sa.String(24), nullable=False),
        sa.Column("speaker", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("lineage_hash", sa.String(64), nullable=False),
        sa.Column("source_time", UtcDateTime(), nullable=True),
        sa.Column("source_ref", sa.String(512), nullable=False),
        sa.Column("attachment", sa.String(512), nullable=False),
        sa.Column("review", sa.String(16), nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=False),
    )
    op.create_index("ix_import_items_batch", "import_items", ["tenant_id", "batch_id", "ordinal"])
    op.create_index(
        "ix_import_items_lineage", "import_items", ["tenant_id", "user_id", "lineage_hash"]
    )


def downgrade() -> None:
    op.drop_table("import_items")
    op.drop_table("import_batches")
