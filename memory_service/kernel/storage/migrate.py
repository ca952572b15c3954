"""Schema migrations (Alembic), run as a step of their own or at start-up on a single node.

A release's migrations leave the schema usable by the release before it (docs/deployment.md), so
while a new release rolls out, the previous one's pods start on a schema one or more revisions
ahead of what they know. Such a schema is left alone (never downgraded) and served as it is, with
one log line saying so; a schema behind this release, with migrations off, is refused in one line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, text

log = logging.getLogger("memory_service.storage.migrate")
MIGRATIONS = Path(__file__).parent / "migrations"
# The advisory lock every `migrate` of one PostgreSQL database takes first ("crmmem" in ASCII):
# in Kubernetes each starting pod runs the migration (k8s/base/memory-service.yaml), so replicas
# of a release queue here instead of racing on the same DDL, and the ones after the first find
# the schema at head and change nothing.
MIGRATION_LOCK = 0x63726D6D656D


class SchemaUnusable(Exception):
    """The schema is behind this release and may not be migrated here, or Alembic cannot bring
    it to head: the process must not start. One line, no traceback."""


@dataclass(frozen=True)
class Schema:
    """The revisions a database's schema is at, against this release's migrations."""

    revisions: tuple[str, ...]  # in the database (empty: never migrated)
    head: str  # this release's newest
    unknown: tuple[str, ...]  # revisions this release has no migration for: a newer one's

    @property
    def current(self) -> bool:
        return self.revisions == (self.head,)

    @property
    def ahead(self) -> bool:
        """Migrated by a newer release: this one leaves it alone and serves on it."""
        return bool(self.unknown)

    def describe(self) -> str:
        at = ", ".join(self.revisions) or "none"
        return f"at revision {at}; this release's newest is {self.head}"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _schema(connection: Connection) -> Schema:
    script = ScriptDirectory.from_config(_config())
    known = {revision.revision for revision in script.walk_revisions()}
    revisions = tuple(sorted(MigrationContext.configure(connection).get_current_heads()))
    head = script.get_current_head() or ""
    return Schema(revisions, head, tuple(r for r in revisions if r not in known))


def upgrade(engine: Engine) -> Schema:
    """Brings the schema to head in one transaction; on PostgreSQL under `MIGRATION_LOCK`, held
    until that transaction ends (SQLite serves one node and needs none). A schema ahead of this
    release is left as it is. Returns the schema as found (before any upgrade)."""
    config = _config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        found = _schema(connection)
        if found.ahead:
            return found
        config.attributes["connection"] = connection
        try:
            command.upgrade(config, "head")
        except CommandError as error:
            raise SchemaUnusable(
                f"the schema ({found.describe()}) failed to migrate: {error}"
            ) from None
    return found


def inspect(engine: Engine) -> Schema:
    with engine.connect() as connection:
        return _schema(connection)


def is_current(engine: Engine) -> bool:
    return inspect(engine).current


def prepare(engine: Engine, auto_migrate: bool) -> Schema:
    """What `serve` does at start: migrate (`auto_migrate`), else check; SchemaUnusable when the
    schema is behind and may not be migrated here. A schema ahead is served, logged once."""
    found = upgrade(engine) if auto_migrate else inspect(engine)
    if found.ahead:
        log.warning(
            "the database schema is ahead of this release (%s): a newer release migrated it; "
            "serving on it as it is",
            found.describe(),
        )
    elif not auto_migrate and not found.current:
        raise SchemaUnusable(
            f"the schema is not current ({found.describe()}) and MEMORY_AUTO_MIGRATE=0: run "
            "`python -m memory_service migrate` first"
        )
    return found
