"""The migration that keys conversations by owner keeps every stored conversation and message,
and lets a second user then hold a conversation of the same id."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from memory_service.kernel.domain.model import Conversation
from memory_service.kernel.storage import migrate
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine
from tests.conftest import BACKENDS
from tests.support.servers import database_url

MIGRATION = "0006"


@pytest.mark.parametrize("backend", BACKENDS)
def test_existing_conversations_survive_and_ids_become_per_user(
    backend: str, tmp_path: Path
) -> None:
    with database_url(backend, tmp_path)() as url:
        engine = create_database_engine(url)
        config = migrate._config()
        before = migrate.ScriptDirectory.from_config(config).get_revision(MIGRATION).down_revision
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, str(before))
            stamp = datetime(2026, 1, 1)
            connection.execute(
                text(
                    "INSERT INTO conversations (tenant_id, id, owner_user_id, last_sequence,"
                    " create_time) VALUES ('t1', 'call-1', 'alice', 2, :t)"
                ),
                {"t": stamp},
            )
            for sequence in (1, 2):
                connection.execute(
                    text(
                        "INSERT INTO transcript_messages (id, tenant_id, conversation_id, sequence,"
                        " speaker, text, status, author_user_id, create_time) VALUES"
                        " (:id, 't1', 'call-1', :s, 'USER', 'hi', 'COMPLETED', 'alice', :t)"
                    ),
                    {"id": f"{sequence:032x}", "s": sequence, "t": stamp},
                )
        migrate.upgrade(engine)
        units = SqlUnitOfWorkFactory(engine, check_scope=True)
        with units("t1", write=True) as uow:
            conversation = uow.transcript.get_conversation("alice", "call-1")
            assert conversation is not None
            stamp_utc = stamp.replace(tzinfo=UTC)
            assert conversation.create_time == stamp_utc
            assert [m.sequence for m in uow.transcript.list_messages("alice", "call-1", 0, 10)] == [
                1,
                2,
            ]
            assert uow.transcript.allocate_sequences("alice", "call-1", 1) == 3
            assert uow.transcript.get_conversation("bob", "call-1") is None
            uow.transcript.add_conversation(Conversation("t1", "call-1", "bob", stamp_utc))
            assert uow.transcript.allocate_sequences("bob", "call-1", 1) == 1
            uow.commit()
        engine.dispose()
