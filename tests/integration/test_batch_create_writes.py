"""BatchCreateMemories' write transaction on real SQLite and PostgreSQL: what it reads again of
what its scan ahead (a read transaction before it) already read. On SQLite every statement of
the write runs inside the database's one writer lock."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import event

from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    MemoryKind,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
    utcnow,
)
from memory_service.kernel.domain.names import message as message_name
from memory_service.memories.app.memories import MemoryCommands
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.transcripts.domain.transcripts import TranscriptUseCases
from memory_service.unit_of_work import SqlUnitOfWorkFactory

MARA = Identity("t1", "mara")
SAID = ["I prefer mornings", "we ship on fridays", "my budget is 140 thousand euros"]


@contextmanager
def written(units: SqlUnitOfWorkFactory) -> Iterator[list[str]]:
    """The statements sent inside write transactions meanwhile."""
    sent: list[str] = []
    writing = [False]
    opened = units._writing

    @contextmanager
    def watched() -> Iterator[None]:
        with opened():
            writing[0] = True
            try:
                yield
            finally:
                writing[0] = False

    def record(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if writing[0]:
            sent.append(" ".join(statement.split()))

    units._writing = watched  # type: ignore[method-assign]
    event.listen(units.engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(units.engine, "before_cursor_execute", record)
        units._writing = opened  # type: ignore[method-assign]


def test_the_write_does_not_read_again_the_messages_its_scan_ahead_read(
    units: SqlUnitOfWorkFactory,
) -> None:
    tx = Transactions(units, timedelta(hours=24))
    quiet: RequestKey[Any] = RequestKey("x", "", "", lambda _: b"", lambda _: None)

    def append(uow: Any) -> Answer[Any]:
        return Answer(
            TranscriptUseCases().append_many(
                uow,
                MARA,
                [("c1", Speaker.USER, text, TurnStatus.COMPLETED) for text in SAID],
                utcnow(),
            )
        )

    messages = tx.write(MARA, quiet, append)
    commands = [
        CreateMemory(
            Scope(ScopeType.USER, ""),
            f"fact_{index}",
            "",
            MemoryKind.PREFERENCE,
            RevisionDraft(
                text,
                None,
                None,
                ProvenanceDraft(
                    None,
                    ProvenanceMethod.USER_STATEMENT,
                    EvidenceRef(
                        EvidenceType.TRANSCRIPT_MESSAGE,
                        message_name(message.conversation_id, message.id),
                    ),
                ),
            ),
        )
        for index, (text, message) in enumerate(zip(SAID, messages, strict=True))
    ]
    commands_of = MemoryCommands(tx, MemoryUseCases(AccessPolicy(GrantTableAuthorizer())))
    with written(units) as sent:
        created = [
            (memory.memory, revision.revision)
            for memory, revision in commands_of.batch_create(MARA, quiet, commands, list)
        ]
    assert sent, "the batch wrote nothing"
    assert not [s for s in sent if s.startswith("SELECT") and "transcript_messages" in s]
    assert [revision.status for _, revision in created] == [RevisionStatus.ACTIVE] * len(SAID)
    assert [revision.provenance.speaker for _, revision in created] == [Speaker.USER] * len(SAID)
