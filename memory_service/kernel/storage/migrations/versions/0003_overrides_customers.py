"""Overrides ("for now") and the customer directory.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "overrides",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("parent_type", sa.String(16), nullable=False),
        sa.Column("parent_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("key_context", sa.String(128), nullable=False),
        sa.Column("scope_type", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("expire_time", UtcDateTime(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("author_user_id", sa.String(128), nullable=False),
        sa.Column("evidence_ref", sa.String(320), nullable=False),
    )
    op.create_index(
        "ix_overrides_parent", "overrides", ["tenant_id", "parent_type", "parent_id", "expire_time"]
    )
    op.create_table(
        "customers",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("customer_id", sa.String(128), primary_key=True),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("match_name", sa.String(256), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_customers_match_name", "customers", ["tenant_id", "match_name"])


def downgrade() -> None:
    op.drop_table("customers")
    op.drop_table("overrides")
