"""Memories by subject: an index on (tenant, scope type, scope id, live, id), and organization
memories with the empty scope id every other one has.

A caller's context and listing read the memories of the caller's own subjects (the user, the
granted customers, the organization). Through the (tenant, id, ...) index that read walked
every memory of the tenant in id order and kept the caller's: 29 ms for a context of 35 at
80,000 memories in the tenant. Now each subject is one range of this index and the ranges are
merged: the read costs what the caller sees (0.6 ms there).

The organization's range is the empty scope id. Every write path gave organization memories
that id, except ProposeMemory, which kept an id it was sent; such memories get the empty id
here (a new version, so the index takes their new scope, and their index change queued). One
whose key is already held by a live organization memory keeps its id: an administrator still
lists and reads it, and can delete one of the two.

Revision ID: 0018
Revises: 0017
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from memory_service.domain.rules import scoped_key_hash

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memories_subject", "memories", ["tenant_id", "scope_type", "scope_id", "live", "id"]
    )
    bind = op.get_bind()
    now = datetime.now(UTC).replace(tzinfo=None)  # stored as UTC without a zone
    odd = bind.execute(
        sa.text(
            "SELECT tenant_id, id, key, key_context, live FROM memories"
            " WHERE scope_type = 'ORGANIZATION' AND scope_id <> ''"
        )
    ).all()
    for tenant_id, memory_id, key, key_context, live in odd:
        held = (
            live is not None
            and bind.execute(
                sa.text(
                    "SELECT 1 FROM memories WHERE tenant_id = :t AND scope_type = 'ORGANIZATION'"
                    " AND scope_id = '' AND key = :k AND key_context = :c AND live IS NOT NULL"
                ),
                {"t": tenant_id, "k": key, "c": key_context},
            ).first()
        )
        if held:
            continue
        bind.execute(
            sa.text(
                "UPDATE memories SET scope_id = '', key_hash = :h, version = version + 1,"
                " update_time = :now WHERE tenant_id = :t AND id = :m"
            ).bindparams(sa.bindparam("now", now, type_=sa.DateTime())),
            {
                "h": scoped_key_hash("ORGANIZATION", "", key, key_context),
                "t": tenant_id,
                "m": memory_id,
            },
        )
        bind.execute(
            sa.text(
                "INSERT INTO index_outbox (tenant_id, memory_id, due_time, create_time, attempts,"
                " kind) VALUES (:t, :m, :now, :now, 0, 'memory')"
            ).bindparams(sa.bindparam("now", now, type_=sa.DateTime())),
            {"t": tenant_id, "m": memory_id},
        )


def downgrade() -> None:
    op.drop_index("ix_memories_subject", "memories")
