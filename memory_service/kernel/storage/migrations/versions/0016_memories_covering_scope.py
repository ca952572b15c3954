"""The index on a memory's (tenant, id) also holds its scope and whether it is live.

A context and a listing read a tenant's memories in id order and keep those in the caller's
scopes that are live. With (tenant, id) alone SQLite looked up every memory of the tenant in
the table to test those columns; with them in the index it reads the table only for the
memories kept (about 1.0 ms less per context at 500 memories). The leading columns are the
old index's, so it serves all the old one did.

Revision ID: 0016
Revises: 0015
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memories_tenant_scope",
        "memories",
        ["tenant_id", "id", "scope_type", "scope_id", "live"],
    )
    op.drop_index("ix_memories_tenant_id_id", "memories")


def downgrade() -> None:
    op.create_index("ix_memories_tenant_id_id", "memories", ["tenant_id", "id"])
    op.drop_index("ix_memories_tenant_scope", "memories")
