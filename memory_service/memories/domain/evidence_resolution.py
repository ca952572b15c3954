"""Resolving the evidence a write cites (I5), and checking what it offers against the key as
stored now (the stale-evidence rule, memories/domain/evidence.py). Every path that writes a memory
asks here: create, correct, confirm, propose, import confirmation and restore."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_service.documents.public import refuse_secret_in_uri
from memory_service.kernel.domain import conversations, names, rules
from memory_service.kernel.domain.errors import (
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    Reason,
)
from memory_service.kernel.domain.model import (
    EvidenceType,
    Identity,
    ImportItem,
    Memory,
    Message,
    Provenance,
    Revision,
    Scope,
    Speaker,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.domain import authority, evidence, grounding
from memory_service.memories.domain.memory_requests import ProvenanceDraft, RevisionDraft


@dataclass(frozen=True)
class ResolvedEvidence:
    """Provenance as stored, plus what the write rules need to know about its evidence."""

    provenance: Provenance
    author_user_id: str  # who wrote the evidence
    text: str  # what the evidence says
    said: datetime | None  # when it was said, as far as the record shows; None when unknown
    # DOCUMENT evidence: when the service already knows the cited version is not current.
    source_changed: bool = False


class EvidenceResolver:
    """I5: provenance names stored evidence the caller may see, and the quote is in it."""

    def __init__(self, secrets: SecretDetector | None = None) -> None:
        self._secrets = secrets or SecretDetector()

    def resolve(
        self,
        uow: UnitOfWork,
        identity: Identity,
        draft: ProvenanceDraft,
        field: str,
        now: datetime,
    ) -> ResolvedEvidence:
        if draft.evidence.type is EvidenceType.DOCUMENT:
            return self._document(uow, identity, draft, field, now)
        if draft.evidence.type is EvidenceType.IMPORT_ITEM:
            item = self._import_item(uow, identity, draft.evidence.ref, f"{field}.import_item")
            said_by, text, author = item.speaker, item.text, item.user_id
            recorded = item.source_time  # what the archive asserts; unknown stays unknown
        elif draft.evidence.type is EvidenceType.TRANSCRIPT_MESSAGE:
            where = f"{field}.transcript_message"
            message = self.message(uow, identity, draft.evidence.ref, where)
            self._secrets.refuse(where, message.text, evidence=True)
            said_by, text, author = message.speaker, message.text, message.author_user_id
            recorded = message.create_time
        else:
            raise InvalidArgument(
                field, "needs evidence: transcript_message, import_item or document"
            )
        self.check_assertions(draft, field, said_by, text)
        provenance = Provenance(
            speaker=said_by,
            method=draft.method,
            evidence=draft.evidence,
            quote=draft.quote,
            source_time=draft.source_time or recorded,
        )
        said = evidence.evidence_time(draft.source_time, recorded)
        return ResolvedEvidence(provenance, author, text, said)

    @staticmethod
    def check_assertions(draft: ProvenanceDraft, field: str, said_by: Speaker, text: str) -> None:
        """What the request asserts about its evidence must hold: who said it, and the quote."""
        if draft.speaker is not None and draft.speaker is not said_by:
            raise InvalidArgument(
                f"{field}.speaker",
                f"the evidence was said by {said_by.value}, not {draft.speaker.value}",
                reason=Reason.SPEAKER_MISMATCH,
            )
        if draft.quote and not rules.quote_occurs(draft.quote, text):
            raise InvalidArgument(
                f"{field}.quote",
                "does not occur in the evidence",
                reason=Reason.QUOTE_NOT_IN_EVIDENCE,
            )

    def _document(
        self,
        uow: UnitOfWork,
        identity: Identity,
        draft: ProvenanceDraft,
        field: str,
        now: datetime,
    ) -> ResolvedEvidence:
        """The excerpt is the evidence: the document stays at its source, so the value is
        checked against the passage the writer cites, and the version read is kept."""
        refuse_secret_in_uri(self._secrets, f"{field}.document.uri", draft.evidence.ref)
        self._secrets.refuse(f"{field}.document.excerpt", draft.excerpt, evidence=True)
        self.check_assertions(draft, field, Speaker.TOOL, draft.excerpt)  # a connector read it
        current = uow.documents.get(draft.evidence.ref)
        provenance = Provenance(
            speaker=Speaker.TOOL,
            method=draft.method,
            evidence=draft.evidence,
            quote=draft.quote,
            source_time=draft.source_time,
            document_version=draft.document_version,
            excerpt=draft.excerpt,
        )
        return ResolvedEvidence(
            provenance,
            identity.user_id,
            draft.excerpt,
            evidence.evidence_time(draft.source_time, now),  # read now, unless asserted earlier
            source_changed=current is not None and current.version != draft.document_version,
        )

    @staticmethod
    def _import_item(uow: UnitOfWork, identity: Identity, name: str, field: str) -> ImportItem:
        """The caller's own import item that `name` names, with its text still kept."""
        ids = names.IMPORT_ITEM.match(name)
        item = uow.imports.get_item(ids[1]) if ids else None
        if (
            item is None
            or ids is None
            or item.batch_id != ids[0]
            or item.user_id != identity.user_id
            or not item.text
        ):
            raise InvalidArgument(
                field,
                f"{name!r} does not resolve to a stored import item",
                reason=Reason.EVIDENCE_NOT_FOUND,
            )
        return item

    def scan_ahead(
        self, uow: UnitOfWork, identity: Identity, drafts: Sequence[RevisionDraft]
    ) -> list[Message]:
        """Asks the secret rule about the transcript messages these drafts cite that the caller
        may read, and the grounding rule about the value when the user said it, for
        `MemoryUseCases.scan_ahead`; returns the messages read. A citation that does not
        resolve is left to the write, which refuses it naming its field."""
        read = []
        for draft in drafts:
            provenance = draft.provenance
            if provenance.evidence.type is not EvidenceType.TRANSCRIPT_MESSAGE:
                continue
            try:
                message = self.message(uow, identity, provenance.evidence.ref, "")
            except DomainError:
                continue
            read.append(message)
            self._secrets.kind(message.text)
            if authority.user_said_it(message.speaker, provenance.method):
                grounding.grounding(draft.value, provenance.quote, message.text)
        return read

    def message(self, uow: UnitOfWork, identity: Identity, name: str, field: str) -> Message:
        conversation_id, message_id = names.parse_message(name, field)
        message = conversations.readable_message(uow, identity, conversation_id, message_id)
        if message is None:
            raise InvalidArgument(
                field,
                f"{name!r} does not resolve to stored evidence",
                reason=Reason.EVIDENCE_NOT_FOUND,
            )
        return message


def refuse_stale(stale: str) -> None:
    """FAILED_PRECONDITION `STALE_EVIDENCE` when the stale-evidence rule refused (`stale`, from
    `staleness`, says why); the writes that answer with a refusal instead read `stale` itself."""
    if stale:
        raise FailedPrecondition(stale, reason=Reason.STALE_EVIDENCE)


def staleness(
    uow: UnitOfWork,
    held: Memory | tuple[Scope, str, str],
    offered: evidence.Offered,
    now: datetime,
    *,
    exclude: Revision | None = None,
) -> str:
    """The stale-evidence rule (memories/domain/evidence.py) against the key as stored now, for
    every path that writes: create, correct, confirm, propose, import confirmation and restore.
    `held` is the live memory holding the key, or the key (scope, key, key_context) when
    no live memory holds it."""
    if isinstance(held, Memory):
        existing: Memory | None = held
        scope, key, key_context = held.scope, held.key, held.key_context
    else:
        existing, (scope, key, key_context) = None, held
    deleted_at, withdrawn = uow.memories.deletions(scope, key, key_context, offered.ref)
    history = evidence.KeyHistory(
        deleted_at=deleted_at, memory=existing, evidence_withdrawn=withdrawn
    )
    return evidence.stale_evidence(
        offered.said,
        history,
        offered.value,
        subject_statement=offered.subject_statement,
        now=now,
        exclude=exclude,
    )


def offer_of(resolved: ResolvedEvidence, scope: Scope, value: str) -> evidence.Offered:
    """Resolved evidence offered to write `value` to a key of `scope`."""
    provenance = resolved.provenance
    own_words = not authority.subjects_own_words(provenance, scope, resolved.author_user_id)
    return evidence.Offered(resolved.said, value, own_words, rules.evidence_lineage(provenance))
