"""The domain use cases wired to a unit-of-work factory (the dict-backed fake by default), with
short verbs for the decision tables: who says what, when, and what the rules then decide."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from memory_service.access.domain.access import AccessUseCases
from memory_service.context.domain.overrides import OverrideUseCases
from memory_service.context.domain.proposals import Outcome, Proposal, ProposalUseCases
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import (
    ADMIN_ROLE,
    EvidenceRef,
    EvidenceType,
    Identity,
    Memory,
    MemoryKind,
    Message,
    ProvenanceMethod,
    Revision,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
)
from memory_service.kernel.domain.ports import UnitOfWork, UnitOfWorkFactory
from memory_service.memories.domain.memory_requests import (
    CreateMemory,
    ProvenanceDraft,
    RevisionDraft,
)
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.memories.domain.recall import RecallUseCases
from memory_service.testing.fake_storage import FakeUnitOfWorkFactory
from memory_service.transcripts.domain.transcripts import TranscriptUseCases

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KEY = "meeting_time"
R = TypeVar("R")


def at(hours: float) -> datetime:
    """An instant `hours` after T0 (negative: before)."""
    return T0 + timedelta(hours=hours)


def message_name(message: Message) -> str:
    return f"conversations/{message.conversation_id}/messages/{message.id}"


class World:
    def __init__(
        self, units: UnitOfWorkFactory | None = None, *, apply_user_corrections: bool = False
    ) -> None:
        self.units = units or FakeUnitOfWorkFactory()
        self.policy = AccessPolicy(GrantTableAuthorizer())
        self.memories = MemoryUseCases(self.policy)
        self.overrides = OverrideUseCases(self.policy)
        self.proposals = ProposalUseCases(
            self.policy, self.memories, self.overrides, apply_user_corrections
        )
        self.recall = RecallUseCases(self.policy)
        self.transcript = TranscriptUseCases()
        self.access = AccessUseCases(self.policy)

    @staticmethod
    def who(user: str, *, admin: bool = False, tenant: str = "acme") -> Identity:
        return Identity(tenant, user, frozenset({ADMIN_ROLE}) if admin else frozenset())

    def write(self, identity: Identity, work: Callable[[UnitOfWork], R]) -> R:
        """One transaction, committed only when `work` returns (as the application does)."""
        with self.units(identity.tenant_id, write=True) as uow:
            result = work(uow)
            uow.commit()
            return result

    def read(self, identity: Identity, work: Callable[[UnitOfWork], R]) -> R:
        with self.units(identity.tenant_id, write=False) as uow:
            return work(uow)

    def say(
        self,
        identity: Identity,
        text: str,
        *,
        speaker: Speaker = Speaker.USER,
        conversation: str = "c1",
        when: datetime = T0,
    ) -> Message:
        return self.write(
            identity,
            lambda uow: self.transcript.append(
                uow, identity, conversation, speaker, text, TurnStatus.COMPLETED, when
            ),
        )

    def grant(self, user: str, customer: str, tenant: str = "acme") -> None:
        admin = self.who("root", admin=True, tenant=tenant)
        self.write(admin, lambda uow: self.access.grant(uow, admin, user, customer, T0))

    def create(
        self,
        identity: Identity,
        evidence: Message,
        value: str,
        *,
        scope: Scope | None = None,
        method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT,
        quote: str = "",
        review: bool = False,
        valid_from: datetime | None = None,
        now: datetime | None = None,
        key: str = KEY,
    ) -> tuple[Memory, Revision]:
        command = CreateMemory(
            scope or Scope(ScopeType.USER, identity.user_id),
            key,
            "",
            MemoryKind.PREFERENCE,
            self.draft(evidence, value, method=method, quote=quote, valid_from=valid_from),
        )
        when = now or evidence.create_time
        return self.write(
            identity,
            lambda uow: self.memories.create(uow, identity, command, when, review=review),
        )

    def correct(
        self,
        identity: Identity,
        memory: Memory,
        evidence: Message,
        value: str,
        *,
        version: int | None = None,
        method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT,
        valid_from: datetime | None = None,
        valid_until: datetime | None = None,
        now: datetime | None = None,
    ) -> tuple[Memory, Revision]:
        draft = self.draft(
            evidence, value, method=method, valid_from=valid_from, valid_until=valid_until
        )
        expected = memory.version if version is None else version
        when = now or evidence.create_time
        return self.write(
            identity,
            lambda uow: self.memories.correct(uow, identity, memory.id, expected, draft, when),
        )

    def propose(
        self,
        identity: Identity,
        evidence: Message,
        value: str,
        *,
        scope: Scope | None = None,
        method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT,
        now: datetime | None = None,
    ) -> Outcome:
        proposal = Proposal(
            scope or Scope(ScopeType.USER, ""),
            KEY,
            "",
            MemoryKind.PREFERENCE,
            value,
            method,
            [message_name(evidence)],
            None,
        )
        when = now or evidence.create_time
        return self.write(
            identity, lambda uow: self.proposals.propose(uow, identity, proposal, when)
        )

    @staticmethod
    def draft(
        evidence: Message,
        value: str,
        *,
        method: ProvenanceMethod = ProvenanceMethod.USER_STATEMENT,
        quote: str = "",
        valid_from: datetime | None = None,
        valid_until: datetime | None = None,
    ) -> RevisionDraft:
        return RevisionDraft(
            value,
            valid_from,
            valid_until,
            ProvenanceDraft(
                None,
                method,
                EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, message_name(evidence)),
                quote,
            ),
        )
