"""Organization memories have the empty scope id, as every read now assumes.

Every write path gave organization memories that id, except ProposeMemory, which kept an id it
was sent (now refused); reads find organization memory under the empty id alone (0018), so such
a memory would be left out of contexts, listings and the tenant's export. Here each gets the
empty id: a deletion marker as it is otherwise (its hash still names the old scope, so evidence
said before that deletion is refused only for the old scope id, which no request can name any
more); a live one takes a new version (so the index takes its new scope, unless the version is
at the integer limit) and its index change is queued, and if a live organization memory holds
its key already, its key context names the old id where it fits (`scope-<id>`, numbered
until free), so neither is lost. An override on such a scope (CreateOverride let them through
too) follows the live memory it stood beside, moved here, to the empty id and that memory's
new key context; one beside no such memory keeps its scope (moved, it would shadow another; it
shadows nothing, as before, and expires as overrides do). A live memory keeps no key hash
(restore refuses one): an earlier form of 0018 wrote one on the memories it moved, cleared
here. Running it again changes nothing.

Revision ID: 0019
Revises: 0018
"""

import re
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

MAX_VERSION = 2**31 - 1  # the records' integer columns
MAX_KEY = 128  # kernel/domain/rules.py KEY_PATTERN


def upgrade() -> None:
    bind = op.get_bind()
    now = sa.bindparam("now", datetime.now(UTC).replace(tzinfo=None), type_=sa.DateTime())
    odd = bind.execute(
        sa.text(
            "SELECT tenant_id, id, scope_id, key, key_context, live FROM memories"
            " WHERE scope_type = 'ORGANIZATION' AND scope_id <> '' ORDER BY tenant_id, id"
        )
    ).all()  # in order: which of two clashing memories gets which context is the same anywhere
    # (tenant, old id, key, old context) -> the live memory's new context, for its overrides
    moved: dict[tuple[str, str, str, str], str] = {}
    for tenant_id, memory_id, scope_id, key, key_context, live in odd:
        where = {"t": tenant_id, "m": memory_id}
        if live is None:
            bind.execute(
                sa.text("UPDATE memories SET scope_id = '' WHERE tenant_id = :t AND id = :m"),
                where,
            )
            continue
        context = _free_context(bind, tenant_id, scope_id, key, key_context)
        moved[(tenant_id, scope_id, key, key_context)] = context
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
    overrides = bind.execute(
        sa.text(
            "SELECT tenant_id, id, scope_id, key, key_context FROM overrides"
            " WHERE scope_type = 'ORGANIZATION' AND scope_id <> ''"
        )
    ).all()
    for tenant_id, override_id, scope_id, key, key_context in overrides:
        context = moved.get((tenant_id, scope_id, key, key_context))
        if context is None:  # it stood beside no live memory: moved, it would shadow another
            continue
        bind.execute(
            sa.text(
                "UPDATE overrides SET scope_id = '', key_context = :c"
                " WHERE tenant_id = :t AND id = :o"
            ),
            {"t": tenant_id, "o": override_id, "c": context},
        )
    bind.execute(
        sa.text(
            "UPDATE memories SET key_hash = '' WHERE scope_type = 'ORGANIZATION'"
            " AND live IS NOT NULL AND key_hash <> ''"
        )
    )


def _free_context(
    bind: sa.Connection, tenant_id: str, scope_id: str, key: str, context: str
) -> str:
    """`context` when no live organization memory holds (key, context), else the first free
    of `scope-<id>`, `scope-<id>-2`, `scope-<id>-3`, ... (after `context.` if it has one)."""
    subject = "scope-" + re.sub(r"[^a-z0-9_.-]", "-", scope_id.lower())
    base = f"{context}.{subject}" if context else subject
    candidate, number = context, 1
    while bind.execute(
        sa.text(
            "SELECT 1 FROM memories WHERE tenant_id = :t AND scope_type = 'ORGANIZATION'"
            " AND scope_id = '' AND key = :k AND key_context = :c AND live IS NOT NULL"
        ),
        {"t": tenant_id, "k": key, "c": candidate},
    ).first():
        number += 1
        suffix = "" if number == 2 else f"-{number - 1}"
        candidate = base[: MAX_KEY - len(suffix)] + suffix
    return candidate


def downgrade() -> None:
    """The old ids are not kept: nothing to undo."""
