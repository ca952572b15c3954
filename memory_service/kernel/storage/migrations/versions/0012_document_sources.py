"""Document-sourced facts: a revision keeps the document version and excerpt it cites and when
that document changed since; the current version of each document its connector reported.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_revisions") as batch:
        batch.add_column(
            sa.Column("document_version", sa.String(128), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("excerpt", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_change_time", sa.DateTime(), nullable=True))
    op.create_index(
        "ix_memory_revisions_evidence",
        "memory_revisions",
        ["tenant_id", "evidence_type", "evidence_ref"],
    )
    op.create_table(
        "documents",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("uri", sa.String(320), primary_key=True),
        sa.Column("version", sa.String(128), nullable=False),
        sa.Column("report_time", sa.DateTime(), nullable=False),
        sa.Column("reported_by", sa.String(128), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("documents")
    op.drop_index("ix_memory_revisions_evidence", "memory_revisions")
    with op.batch_alter_table("memory_revisions") as batch:
        batch.drop_column("source_change_time")
        batch.drop_column("excerpt")
        batch.drop_column("document_version")
