"""A memory's revisions are found by tenant and memory: the index on the tenant alone is
replaced by one on (tenant, memory, number).

Every read of memories (a context, a correction, a list) fetches their revisions with
`tenant_id = ? AND memory_id IN (...)`. SQLite, without statistics, answered it from an index
led by the tenant alone, reading every revision of the tenant and sorting them; this index
finds the rows asked for, in order. Its first column serves what the old index served.

Revision ID: 0015
Revises: 0014
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memory_revisions_tenant_memory",
        "memory_revisions",
        ["tenant_id", "memory_id", "number"],
    )
    op.drop_index("ix_memory_revisions_tenant_id", "memory_revisions")


def downgrade() -> None:
    op.create_index("ix_memory_revisions_tenant_id", "memory_revisions", ["tenant_id"])
    op.drop_index("ix_memory_revisions_tenant_memory", "memory_revisions")
