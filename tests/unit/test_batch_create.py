"""BatchCreateMemories' use case: what it works out before its write transaction (SQLite's one
writer lock, shared by every tenant, is held only for the write itself)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain import names
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    Memory,
    MemoryKind,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
    utcnow,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.memories.app.memories import MemoryCommands
from memory_service.memories.domain import grounding
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.testing.fake_storage import FakeUnitOfWork, FakeUnitOfWorkFactory
from memory_service.transcripts.domain.transcripts import TranscriptUseCases

OLGA = Identity("t", "olga")


class WatchedUnits(FakeUnitOfWorkFactory):
    """Says whether a write unit of work is open (the writer lock, on SQLite)."""

    writing = False

    @contextmanager
    def __call__(self, tenant_id: str, *, write: bool) -> Iterator[FakeUnitOfWork]:
        with super().__call__(tenant_id, write=write) as uow:
            self.writing = write
            try:
                yield uow
            finally:
                self.writing = False


def key() -> RequestKey[list[tuple[Memory, Revision]]]:
    return RequestKey("BatchCreateMemories", "", "", lambda _: b"", lambda _: [])


def no_request_id() -> RequestKey[list[str]]:
    return RequestKey("BatchAppendMessages", "", "", lambda _: b"", lambda _: [])


def test_the_grounding_rule_answers_before_the_write_and_the_write_asks_it_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    units = WatchedUnits()
    transactions = Transactions(units, timedelta(hours=1))
    said = ["prefers green shirts", "budget is 140 thousand euros"]

    def append(uow: UnitOfWork) -> Answer[list[str]]:
        appended = TranscriptUseCases().append_many(
            uow, OLGA, [("c", Speaker.USER, text, TurnStatus.COMPLETED) for text in said], utcnow()
        )
        return Answer([names.message("c", message.id) for message in appended])

    cited = transactions.write(OLGA, no_request_id(), append)
    asked: list[tuple[str, bool]] = []
    rule = grounding._grounding

    def counted(value: str, quote: str, evidence_text: str) -> str:
        asked.append((value, units.writing))
        return rule(value, quote, evidence_text)

    monkeypatch.setattr(grounding, "_grounding", counted)
    values = ["prefers green shirts", "budget is 150 thousand euros"]  # the second: ungrounded
    commands = [
        CreateMemory(
            Scope(ScopeType.USER, ""),
            f"fact_{index}",
            "",
            MemoryKind.PREFERENCE,
            RevisionDraft(
                value,
                None,
                None,
                ProvenanceDraft(
                    None,
                    ProvenanceMethod.USER_STATEMENT,
                    EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, message),
                ),
            ),
        )
        for index, (value, message) in enumerate(zip(values, cited, strict=True))
    ]
    created = MemoryCommands(
        transactions, MemoryUseCases(AccessPolicy(GrantTableAuthorizer()))
    ).batch_create(OLGA, key(), commands, lambda made: [(m.memory, r.revision) for m, r in made])

    assert asked == [(value, False) for value in values]
    assert [revision.status for _, revision in created] == [
        RevisionStatus.ACTIVE,
        RevisionStatus.CANDIDATE,
    ]
    assert grounding.is_ungrounded(created[1][1].status_reason)
    assert grounding.grounding(values[0], "", said[0]) == ""  # outside a call: asked again
    assert len(asked) == 3
