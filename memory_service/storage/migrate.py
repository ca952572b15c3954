"""Schema migrations (Alembic), run as a step of their own or at start-up on a single node."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

MIGRATIONS = Path(__file__).parent / "migrations"
# The advisory lock every `migrate` of one PostgreSQL database takes first ("crmmem" in ASCII):
# in Kubernetes each starting pod runs the migration (k8s/base/memory-service.yaml), so replicas
# of a release queue here instead of racing on the same DDL, and the ones after the first find
# the schema at head and change nothing.
MIGRATION_LOCK = 0x63726D6D656D


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine) -> None:
    """Brings the schema to head in one transaction; on PostgreSQL under `MIGRATION_LOCK`, held
    until that transaction ends (SQLite serves one node and needs none)."""
    config = _config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def is_current(engine: Engine) -> bool:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head
