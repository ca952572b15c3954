"""I14: models propose, rules decide. Every check runs inside the transaction that would write,
so a proposal delivered late is judged against the records as they are at commit (I10)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from memory_service.context.domain import language
from memory_service.context.domain.overrides import Expiry, OverrideDraft, OverrideUseCases
from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    Memory,
    MemoryKind,
    Message,
    Override,
    ParentType,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.public import (
    CreateMemory,
    EvidenceResolver,
    MemoryUseCases,
    ProvenanceDraft,
    ResolvedEvidence,
    RevisionDraft,
    default_subject,
    is_ungrounded,
    offer_of,
    staleness,
    user_said_it,
)


class Decision(enum.StrEnum):
    CANDIDATE = "CANDIDATE"
    APPLIED = "APPLIED"
    OVERRIDE = "OVERRIDE"
    REFUSED_SECRET = "REFUSED_SECRET"
    REFUSED_SUBJECT = "REFUSED_SUBJECT"
    REFUSED_STALE = "REFUSED_STALE"
    UNCHANGED = "UNCHANGED"


@dataclass(frozen=True)
class Proposal:
    scope: Scope
    key: str
    key_context: str
    kind: MemoryKind
    value: str
    method: ProvenanceMethod
    evidence: list[str]
    valid_from: datetime | None


@dataclass
class Outcome:
    decision: Decision
    reason: str
    memory: Memory | None = None
    revision: Revision | None = None
    override: Override | None = None


class ProposalUseCases:
    def __init__(
        self,
        policy: AccessPolicy,
        memories: MemoryUseCases,
        overrides: OverrideUseCases,
        apply_user_corrections: bool,
        evidence: EvidenceResolver | None = None,
        secrets: SecretDetector | None = None,
    ) -> None:
        self._policy = policy
        self._secrets = secrets or SecretDetector()
        self._memories = memories
        self._overrides = overrides
        self._apply = apply_user_corrections
        self._evidence = evidence or EvidenceResolver(self._secrets)

    def propose(
        self, uow: UnitOfWork, identity: Identity, proposal: Proposal, now: datetime
    ) -> Outcome:
        messages = [
            self._evidence.message(uow, identity, name, f"evidence_messages[{index}]")
            for index, name in enumerate(proposal.evidence)
        ]
        primary = messages[0]
        secret = self._secrets.kind(proposal.value) or next(
            (kind for m in messages if (kind := self._secrets.kind(m.text))), ""
        )
        if secret:
            return Outcome(
                Decision.REFUSED_SECRET, f"contains a secret ({secret}); nothing was kept"
            )
        scope = default_subject(proposal.scope, identity)
        refusal = self._subject_refusal(uow, identity, scope, primary)
        if refusal:
            return Outcome(Decision.REFUSED_SUBJECT, refusal)
        if primary.speaker is Speaker.USER and language.is_one_off(primary.text):
            override = self._overrides.create(
                uow,
                identity,
                (ParentType.CONVERSATION, primary.conversation_id),
                OverrideDraft(
                    proposal.key,
                    proposal.key_context,
                    scope,
                    proposal.value,
                    names.message(primary.conversation_id, primary.id),
                ),
                Expiry(end_of_day_time_zone="UTC"),
                now,
            )
            return Outcome(
                Decision.OVERRIDE,
                "one-off phrasing: an override on this conversation until the end of the day; "
                "durable memory is unchanged",
                override=override,
            )
        existing = uow.memories.find_live(scope, proposal.key, proposal.key_context)
        offered = offer_of(self._resolved(primary, proposal.method), scope, proposal.value)
        held = existing or (scope, proposal.key, proposal.key_context)
        stale = staleness(uow, held, offered, now)
        if stale:
            return Outcome(Decision.REFUSED_STALE, stale)
        if existing is not None:
            current = rules.applicable_revision(existing, now)
            if current is not None and rules.normalize_for_match(
                current.value
            ) == rules.normalize_for_match(proposal.value):
                return Outcome(Decision.UNCHANGED, f"revision {current.number} already says so")
        return self._write(uow, identity, scope, proposal, primary, existing, now)

    def _subject_refusal(
        self, uow: UnitOfWork, identity: Identity, scope: Scope, primary: Message
    ) -> str:
        if scope.type is ScopeType.USER:
            if scope.id != identity.user_id:
                return "user memory is only proposed for the caller"
            if primary.author_user_id != identity.user_id:
                return "the evidence comes from another user's conversation"
        elif not self._policy.can_write(uow, identity, scope):
            return f"the caller may not write {scope.type.value.lower()} memory here"
        return ""

    def _write(
        self,
        uow: UnitOfWork,
        identity: Identity,
        scope: Scope,
        proposal: Proposal,
        primary: Message,
        existing: Memory | None,
        now: datetime,
    ) -> Outcome:
        draft = RevisionDraft(
            proposal.value,
            proposal.valid_from,
            None,
            ProvenanceDraft(
                None,
                proposal.method,
                EvidenceRef(
                    EvidenceType.TRANSCRIPT_MESSAGE,
                    names.message(primary.conversation_id, primary.id),
                ),
            ),
        )
        explicit_user_correction = existing is not None and user_said_it(
            primary.speaker, proposal.method
        )
        apply = explicit_user_correction and self._apply
        if existing is None:
            memory, revision = self._memories.create(
                uow,
                identity,
                CreateMemory(scope, proposal.key, proposal.key_context, proposal.kind, draft),
                now,
                review=True,
            )
        else:
            memory, revision = self._memories.correct(
                uow, identity, existing.id, existing.version, draft, now, review=not apply
            )
        if revision.status is RevisionStatus.ACTIVE:
            return Outcome(
                Decision.APPLIED,
                "an explicit correction by the user; the tenant applies those directly",
                memory,
                revision,
            )
        if is_ungrounded(revision.status_reason):
            reason = f"{revision.status_reason}: a candidate until the user confirms it"
        elif primary.speaker is not Speaker.USER:
            reason = (
                f"said by {primary.speaker.value.lower().replace('_', ' ')}, not the user: "
                "a candidate until the user confirms it"
            )
        elif explicit_user_correction:
            reason = "an explicit correction by the user: a correction candidate for review"
        else:
            reason = "a new memory: a candidate for review"
        return Outcome(Decision.CANDIDATE, reason, memory, revision)

    @classmethod
    def _resolved(cls, message: Message, method: ProvenanceMethod) -> ResolvedEvidence:
        ref = EvidenceRef(
            EvidenceType.TRANSCRIPT_MESSAGE, names.message(message.conversation_id, message.id)
        )
        provenance = Provenance(message.speaker, method, ref, "", message.create_time)
        return ResolvedEvidence(
            provenance, message.author_user_id, message.text, message.create_time
        )
