"""Memories by subject: an index on (tenant, scope type, scope id, live, id), and organization
memories with the empty scope id every other one has.

A caller's context and listing read the memories of the caller's own subjects (the user, the
granted customers, the organization). Through the (tenant, id, ...) index that read walked
every memory of the tenant in id order and kept the caller's: 29 ms for a context of 35 at
80,000 memories in the tenant. Now each subject is one range of this index and the ranges are
merged: the read costs what the caller sees (0.6 ms there).

The organization's range is the empty scope id. Every write path gave organization memories
that id, except ProposeMemory, which kept an id it was sent (now refused); such memories get
the empty id here, so every read finds them alike and their export restores. A live one takes
a new version (so the index takes its new scope) and its index change is queued; one whose key
is already held by a live organization memory keeps the old id in its key context instead
(`scope-<id>`), so neither is lost.

Revision ID: 0018
Revises: 0017
"""

import re
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


MAX_VERSION = 2**31 - 1  # the records' integer columns


def upgrade() -> None:
    op.create_index(
        "ix_memories_subject", "memories", ["tenant_id", "scope_type", "scope_id", "live", "id"]
    )
    bind = op.get_bind()
    now = sa.bindparam("now", datetime.now(UTC).replace(tzinfo=None), type_=sa.DateTime())
    odd = bind.execute(
        sa.text(
            "SELECT tenant_id, id, scope_id, key, key_context, live FROM memories"
            " WHERE scope_type = 'ORGANIZATION' AND scope_id <> ''"
        )
    ).all()
    for tenant_id, memory_id, scope_id, key, key_context, live in odd:
        where = {"t": tenant_id, "m": memory_id}
        if live is None:  # a deletion marker: its key and hash stay as the deletion left them
            bind.execute(
                sa.text("UPDATE memories SET scope_id = '' WHERE tenant_id = :t AND id = :m"),
                where,
            )
            continue
        context = _free_context(bind, tenant_id, memory_id, scope_id, key, key_context)
        bind.execute(
            sa.text(
                "UPDATE memories SET scope_id = '', key_context = :c, update_time = :now,"
                " version = CASE WHEN version < :max THEN version + 1 ELSE version END"
                " WHERE tenant_id = :t AND id = :m"
            ).bindparams(now),
            {**where, "c": context, "max": MAX_VERSION},
        )
        bind.execute(
            sa.text(
                "INSERT INTO index_outbox (tenant_id, memory_id, due_time, create_time, attempts,"
                " kind) VALUES (:t, :m, :now, :now, 0, 'memory')"
            ).bindparams(now),
            where,
        )


def _free_context(
    bind: sa.Connection, tenant_id: str, memory_id: str, scope_id: str, key: str, context: str
) -> str:
    """`context` when no live organization memory holds (key, context), else one naming the
    old scope id (`scope-<id>`, then with the memory's own id if that is held too)."""
    subject = "scope-" + re.sub(r"[^a-z0-9_.-]", "-", scope_id.lower())
    tried = [
        context,
        f"{context}.{subject}" if context else subject,
        f"{context}.{subject}"[: 128 - 13] + f"-{memory_id[-12:]}"
        if context
        else subject[: 128 - 13] + f"-{memory_id[-12:]}",
    ]
    for candidate in tried:
        held = bind.execute(
            sa.text(
                "SELECT 1 FROM memories WHERE tenant_id = :t AND scope_type = 'ORGANIZATION'"
                " AND scope_id = '' AND key = :k AND key_context = :c AND live IS NOT NULL"
            ),
            {"t": tenant_id, "k": key, "c": candidate[:128]},
        ).first()
        if not held:
            return candidate[:128]
    return tried[-1][:128]


def downgrade() -> None:
    op.drop_index("ix_memories_subject", "memories")
