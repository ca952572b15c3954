"""Conversation access: acting in a conversation is owner-only, reading evidence owner-or-admin."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from memory_service.kernel.domain import conversations
from memory_service.kernel.domain.errors import InvalidArgument, NotFound
from memory_service.kernel.domain.model import Conversation, Identity, Message, Speaker, TurnStatus
from memory_service.kernel.domain.ports import UnitOfWork

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
ALICE = Identity("t", "alice")
BOB = Identity("t", "bob")
ADMIN = Identity("t", "ada", frozenset({"admin"}))


@dataclass
class Transcript:
    """Only what conversation access asks of the transcript repository."""

    owned: set[tuple[str, str]] = field(default_factory=set)

    def get_conversation(self, owner: str, conversation_id: str) -> Conversation | None:
        if (owner, conversation_id) in self.owned:
            return Conversation("t", conversation_id, owner, NOW)
        return None

    def add_conversation(self, conversation: Conversation) -> None:
        self.owned.add((conversation.owner_user_id, conversation.id))

    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        return sorted(o for o, c in self.owned if c == conversation_id)[:limit]


def uow(*owned: tuple[str, str]) -> UnitOfWork:
    fake: Any = type("FakeUnitOfWork", (), {})()
    fake.tenant_id, fake.transcript = "t", Transcript(set(owned))
    return cast(UnitOfWork, fake)


def message(author: str) -> Message:
    return Message("m", "t", "c", 1, Speaker.USER, "hi", TurnStatus.COMPLETED, author, NOW)


def test_appending_opens_the_callers_own_conversation_whoever_else_has_the_id() -> None:
    work = uow(("alice", "c"))
    assert conversations.open_for_append(work, ADMIN, "c", NOW) == "ada"
    assert conversations.open_for_append(work, BOB, "c", NOW) == "bob"
    assert conversations.open_for_append(work, ALICE, "c", NOW) == "alice"
    owned = cast(Transcript, work.transcript).owned
    assert owned == {("alice", "c"), ("ada", "c"), ("bob", "c")}


@pytest.mark.parametrize("identity", [BOB, ADMIN])
def test_acting_in_somebody_elses_conversation_is_not_found(identity: Identity) -> None:
    with pytest.raises(NotFound):
        conversations.require_own(uow(("alice", "c")), identity, "c")
    assert conversations.require_own(uow(("alice", "c")), ALICE, "c") == "alice"


def test_reading_is_for_the_owner_and_for_admins() -> None:
    work = uow(("alice", "c"))
    assert conversations.owner_for_reading(work, ALICE, "c") == "alice"
    assert conversations.owner_for_reading(work, ADMIN, "c") == "alice"
    with pytest.raises(NotFound):
        conversations.owner_for_reading(work, BOB, "c")
    with pytest.raises(NotFound):
        conversations.owner_for_reading(work, ADMIN, "other")


def test_an_admin_must_choose_when_several_users_share_an_id() -> None:
    work = uow(("alice", "c"), ("bob", "c"))
    with pytest.raises(InvalidArgument):
        conversations.owner_for_reading(work, ADMIN, "c")
    assert conversations.owner_for_reading(uow(("alice", "c"), ("ada", "c")), ADMIN, "c") == "ada"


def test_evidence_is_read_by_its_author_and_admins_only() -> None:
    assert conversations.may_read_evidence(ALICE, message("alice"))
    assert conversations.may_read_evidence(ADMIN, message("alice"))
    assert not conversations.may_read_evidence(BOB, message("alice"))
