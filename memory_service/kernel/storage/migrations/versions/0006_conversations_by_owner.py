"""Conversations are keyed by owner: (tenant, owner, id) instead of (tenant, id).

Until now the first user to append to a conversation id owned it for the whole tenant, so
another user could squat an id (locking its owner out) or learn that it existed. Existing rows
keep their owner; message sequences become unique per owner's conversation.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS = ["tenant_id", "owner_user_id", "id", "last_sequence", "create_time"]


def _conversations(name: str, key: list[str]) -> None:
    op.create_table(
        name,
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("owner_user_id", sa.String(128), nullable=False),
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("last_sequence", sa.Integer(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint(*key, name=f"pk_{name}"),
    )


def _rekey(key: list[str]) -> None:
    """A primary key cannot be altered in place on SQLite: copy into a new table."""
    _conversations("conversations_rekeyed", key)
    old = sa.table("conversations", *(sa.column(c) for c in COLUMNS))
    new = sa.table("conversations_rekeyed", *(sa.column(c) for c in COLUMNS))
    op.execute(new.insert().from_select(COLUMNS, sa.select(*old.c)))
    op.drop_table("conversations")
    op.rename_table("conversations_rekeyed", "conversations")


def upgrade() -> None:
    _rekey(["tenant_id", "owner_user_id", "id"])
    with op.batch_alter_table("transcript_messages") as batch:
        batch.drop_constraint("uq_transcript_messages_sequence", type_="unique")
        batch.create_unique_constraint(
            "uq_transcript_messages_owner_sequence",
            ["tenant_id", "author_user_id", "conversation_id", "sequence"],
        )


def downgrade() -> None:
    with op.batch_alter_table("transcript_messages") as batch:
        batch.drop_constraint("uq_transcript_messages_owner_sequence", type_="unique")
        batch.create_unique_constraint(
            "uq_transcript_messages_sequence", ["tenant_id", "conversation_id", "sequence"]
        )
    _rekey(["tenant_id", "id"])
