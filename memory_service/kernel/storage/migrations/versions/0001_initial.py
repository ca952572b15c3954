"""Memories, revisions, transcript, customer grants and idempotency keys.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """One helper per group of tables, called in the order the tables have always been created
    in, so a fresh database gets the same schema, statement for statement."""
    _memories()
    _memory_revisions()
    _transcript()
    _access_and_requests()


def _memories() -> None:
    op.create_table(
        "memories",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("scope_type", sa.String(16), nullable=False),
        sa.Column("scope_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("key_context", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("live", sa.Boolean(), nullable=True),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("update_time", UtcDateTime(), nullable=False),
        sa.Column("delete_time", UtcDateTime(), nullable=True),
        sa.UniqueConstraint(
            "tenant_id", "scope_type", "scope_id", "key", "key_context", "live",
            name="uq_memories_live_key",
        ),
    )  # fmt: skip
    op.create_index("ix_memories_tenant_id_id", "memories", ["tenant_id", "id"])


def _memory_revisions() -> None:
    op.create_table(
        "memory_revisions",
        sa.Column("memory_id", sa.String(32), sa.ForeignKey("memories.id"), primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("valid_from", UtcDateTime(), nullable=True),
        sa.Column("valid_until", UtcDateTime(), nullable=True),
        sa.Column("superseded_from", UtcDateTime(), nullable=True),
        sa.Column("superseded_by_number", sa.Integer(), nullable=False),
        sa.Column("replaces_number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("speaker", sa.String(16), nullable=False),
        sa.Column("method", sa.String(32), nullable=False),
        sa.Column("evidence_type", sa.String(32), nullable=False),
        sa.Column("evidence_ref", sa.String(320), nullable=False),
        sa.Column("quote", sa.Text(), nullable=False),
        sa.Column("source_time", UtcDateTime(), nullable=True),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("author_user_id", sa.String(128), nullable=False),
        sa.Column("confirmed_by", sa.String(128), nullable=True),
        sa.Column("confirm_time", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_memory_revisions_tenant_id", "memory_revisions", ["tenant_id"])


def _transcript() -> None:
    """A conversation and its messages."""
    op.create_table(
        "conversations",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("owner_user_id", sa.String(128), nullable=False),
        sa.Column("last_sequence", sa.Integer(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )
    op.create_table(
        "transcript_messages",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("conversation_id", sa.String(128), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("speaker", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("author_user_id", sa.String(128), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.UniqueConstraint(
            "tenant_id", "conversation_id", "sequence", name="uq_transcript_messages_sequence"
        ),
    )


def _access_and_requests() -> None:
    """Who may see which customer, and the request ids already answered."""
    op.create_table(
        "customer_grants",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("user_id", sa.String(128), primary_key=True),
        sa.Column("customer_id", sa.String(128), primary_key=True),
        sa.Column("granted_by_user_id", sa.String(128), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("user_id", sa.String(128), primary_key=True),
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("method", sa.String(64), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_idempotency_keys_create_time", "idempotency_keys", ["create_time"])


def downgrade() -> None:
    for table in (
        "idempotency_keys",
        "customer_grants",
        "transcript_messages",
        "conversations",
        "memory_revisions",
        "memories",
    ):
        op.drop_table(table)
