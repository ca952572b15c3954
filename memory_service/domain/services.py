"""Use cases. Each runs inside a unit of work the caller opened, so one transaction holds
the change, its supersessions and its idempotency record together."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memory_service.domain import authority, conversations, evidence, grounding, names, rules
from memory_service.domain.authorization import AccessPolicy, require_admin
from memory_service.domain.documents import refuse_secret_in_uri
from memory_service.domain.errors import (
    Aborted,
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Reason,
    batch_item,
)
from memory_service.domain.etags import etag_of
from memory_service.domain.model import (
    Confirmation,
    Customer,
    CustomerGrant,
    EvidenceRef,
    EvidenceType,
    Identity,
    ImportItem,
    Memory,
    MemoryKind,
    Message,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
    new_id,
)
from memory_service.domain.ports import MemoryQuery, OutboxKind, UnitOfWork
from memory_service.domain.secrets import SecretDetector


@dataclass(frozen=True)
class ProvenanceDraft:
    speaker: Speaker | None
    method: ProvenanceMethod
    evidence: EvidenceRef
    quote: str = ""
    source_time: datetime | None = None
    document_version: str = ""  # DOCUMENT evidence only
    excerpt: str = ""  # DOCUMENT evidence only


@dataclass(frozen=True)
class ResolvedEvidence:
    """Provenance as stored, plus what the write rules need to know about its evidence."""

    provenance: Provenance
    author_user_id: str  # who wrote the evidence
    text: str  # what the evidence says
    said: datetime | None  # when it was said, as far as the record shows; None when unknown
    # DOCUMENT evidence: when the service already knows the cited version is not current.
    source_changed: bool = False


@dataclass(frozen=True)
class RevisionDraft:
    value: str
    valid_from: datetime | None
    valid_until: datetime | None
    provenance: ProvenanceDraft


@dataclass(frozen=True)
class CreateMemory:
    scope: Scope
    key: str
    key_context: str
    kind: MemoryKind
    revision: RevisionDraft


@dataclass(frozen=True)
class DeletionReceipt:
    """What a deletion removed and what it cannot reach (I9), in words for the user."""

    removed: list[tuple[str, str]]
    not_reached: list[tuple[str, str]]
    marker_expire_time: datetime


@dataclass(frozen=True)
class RetentionPolicy:
    backup_days: int = 30
    marker_days: int = 365


@dataclass(frozen=True)
class MemoryFilter:
    scope_type: ScopeType | None = None
    scope_id: str = ""
    key: str = ""
    kind: MemoryKind | None = None
    revision_state: RevisionStatus | None = None
    value_contains: str = ""
    show_deleted: bool = False


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
            recorded = item.source_time  # what the archive claims; unknown stays unknown
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
        self.check_claims(draft, field, said_by, text)
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
    def check_claims(draft: ProvenanceDraft, field: str, said_by: Speaker, text: str) -> None:
        """What the request claims about its evidence must hold: who said it, and the quote."""
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
        self.check_claims(draft, field, Speaker.TOOL, draft.excerpt)  # a connector read it
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
            evidence.evidence_time(draft.source_time, now),  # read now, unless claimed earlier
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


class MemoryUseCases:
    def __init__(
        self,
        policy: AccessPolicy,
        evidence: EvidenceResolver | None = None,
        retention: RetentionPolicy | None = None,
        secrets: SecretDetector | None = None,
    ) -> None:
        self._policy = policy
        self._secrets = secrets or SecretDetector()
        self._evidence = evidence or EvidenceResolver(self._secrets)
        self._retention = retention or RetentionPolicy()

    # --- reads -------------------------------------------------------------------------------

    def get(self, uow: UnitOfWork, identity: Identity, memory_id: str) -> Memory:
        return self._visible(uow, identity, memory_id)

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_filter: MemoryFilter,
        after_id: str,
        limit: int,
        instant: datetime,
    ) -> list[Memory]:
        """Up to `limit` visible memories matching the filter, after `after_id` in id order."""
        query = MemoryQuery(
            visibility=self._policy.visibility(uow, identity),
            scope_type=memory_filter.scope_type,
            scope_id=memory_filter.scope_id,
            key=memory_filter.key,
            kind=memory_filter.kind,
            show_deleted=memory_filter.show_deleted,
        )
        page: list[Memory] = []
        cursor = after_id
        batch_size = max(limit, 100)
        while True:
            batch = uow.memories.list_after(query, cursor, batch_size)
            for memory in batch:
                cursor = memory.id
                if self._matches(memory, memory_filter, instant):
                    page.append(memory)
                    if len(page) == limit:
                        return page
            if len(batch) < batch_size:
                return page

    @staticmethod
    def _matches(memory: Memory, memory_filter: MemoryFilter, instant: datetime) -> bool:
        if memory_filter.revision_state is not None and not any(
            rules.state_at(r, instant) is memory_filter.revision_state for r in memory.revisions
        ):
            return False
        if memory_filter.value_contains:
            needle = memory_filter.value_contains.casefold()
            shown = (rules.applicable_revision(memory, instant), memory.latest)
            if not any(r is not None and needle in r.value.casefold() for r in shown):
                return False
        return True

    # --- writes ------------------------------------------------------------------------------

    def create(
        self,
        uow: UnitOfWork,
        identity: Identity,
        command: CreateMemory,
        now: datetime,
        *,
        review: bool = False,
    ) -> tuple[Memory, Revision]:
        """`review` keeps even the subject's own words a CANDIDATE (proposals from extractors)."""
        with self._secrets.remembering():  # the value is often the evidence's text
            return self._create(uow, identity, command, now, review=review)

    def _create(
        self,
        uow: UnitOfWork,
        identity: Identity,
        command: CreateMemory,
        now: datetime,
        *,
        review: bool,
    ) -> tuple[Memory, Revision]:
        self._refuse_secrets(command.revision)
        scope = authority.default_subject(command.scope, identity)
        self._policy.require_write(uow, identity, scope)
        draft = command.revision
        resolved = self._evidence.resolve(
            uow, identity, draft.provenance, "revision.provenance", now
        )
        existing = uow.memories.find_live(scope, command.key, command.key_context)
        if existing is not None:
            raise AlreadyExists(
                "a live memory with this scope, key and key_context exists; correct it instead",
                metadata={"memory": names.memory(existing.id)},
            )
        self.refuse_stale(
            uow,
            (scope, command.key, command.key_context),
            self.offered(resolved, scope, draft.value),
            now,
        )
        status, status_reason = authority.initial_status(
            scope,
            resolved.provenance,
            resolved.author_user_id,
            resolved.text,
            draft.value,
            review=review,
        )
        memory = Memory(
            id=new_id(),
            tenant_id=uow.tenant_id,
            scope=scope,
            key=command.key,
            key_context=command.key_context,
            kind=command.kind,
            version=1,
            create_time=now,
            update_time=now,
        )
        revision = Revision(
            memory_id=memory.id,
            number=1,
            value=draft.value,
            valid_from=draft.valid_from,
            valid_until=draft.valid_until,
            status=status,
            provenance=resolved.provenance,
            create_time=now,
            author_user_id=identity.user_id,
            status_reason=status_reason,
            source_change_time=now if resolved.source_changed else None,
        )
        memory.revisions.append(revision)
        uow.memories.add(memory)
        self._schedule_index(uow, memory, now)
        return memory, revision

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """The secret verdicts and groundings made within it are kept for the call: see
        `scan_ahead`."""
        with self._secrets.remembering(), grounding.remembering_groundings():
            yield

    def scan_ahead(
        self, uow: UnitOfWork, identity: Identity, commands: Sequence[CreateMemory]
    ) -> Sequence[Message]:
        """Asks the secret rule, in a read transaction before the write, about every text the
        creates will ask it about (values, quotes, cited messages), and the grounding rule
        about the values their cited messages support; inside `remembering` the write then
        finds the answers made. A message of 32,000
        characters of digit runs costs the card check about a second: checked inside the write,
        a batch citing a hundred held SQLite's one writer, every tenant's, for minutes.
        Returns the cited messages it read, for `create_many`."""
        _preload_cited(uow, commands)
        for command in commands:
            self._secrets.kind(command.revision.value)
            self._secrets.kind(command.revision.provenance.quote)
        return self._evidence.scan_ahead(uow, identity, [c.revision for c in commands])

    def create_many(
        self,
        uow: UnitOfWork,
        identity: Identity,
        commands: Sequence[CreateMemory],
        now: datetime,
        cited: Sequence[Message] = (),
    ) -> Sequence[tuple[Memory, Revision]]:
        """Each command through `create`, in order, in the caller's transaction; the first
        refusal names its item (`requests[i]`). What `create` reads about every item (its
        evidence message, the key's live memory and last deletion, whether its evidence was
        withdrawn) is read up front; `cited`: the messages `scan_ahead` read, not read again."""
        _preload_cited(uow, commands, cited)
        keys = [
            (authority.default_subject(c.scope, identity), c.key, c.key_context) for c in commands
        ]
        created = []
        lineages = [
            rules.lineage_of(c.revision.provenance.evidence, c.revision.provenance.document_version)
            for c in commands
        ]
        first: dict[tuple[Scope, str, str], int] = {}
        with uow.memories.preloaded(keys, lineages), self._secrets.remembering():
            for index, command in enumerate(commands):
                with batch_item("requests", index):
                    if keys[index] in first:
                        # The memory an earlier item would create is never stored: name the
                        # item, not that memory's id (a caller following it finds nothing).
                        raise AlreadyExists(
                            f"requests[{first[keys[index]]}] creates a memory with this scope, "
                            "key and key_context",
                            metadata={"duplicates": f"requests[{first[keys[index]]}]"},
                        )
                    first[keys[index]] = index
                    created.append(self.create(uow, identity, command, now))
        return created

    def correct(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        expected_version: int,
        draft: RevisionDraft,
        now: datetime,
        *,
        review: bool = False,
    ) -> tuple[Memory, Revision]:
        self._refuse_secrets(draft)
        memory = self._visible(uow, identity, memory_id)
        self._policy.require_write(uow, identity, memory.scope)
        self._check_version(uow, memory, expected_version)
        resolved = self._evidence.resolve(
            uow, identity, draft.provenance, "revision.provenance", now
        )
        self.refuse_stale(uow, memory, self.offered(resolved, memory.scope, draft.value), now)
        status, status_reason = authority.initial_status(
            memory.scope,
            resolved.provenance,
            resolved.author_user_id,
            resolved.text,
            draft.value,
            review=review,
        )
        valid_from = draft.valid_from or now
        rules.check_interval(valid_from, draft.valid_until, "revision")
        self._claim(uow, memory, now)
        replaced = rules.newest_active(memory)
        revision = Revision(
            memory_id=memory.id,
            number=memory.revisions[-1].number + 1,
            value=draft.value,
            valid_from=valid_from,
            valid_until=draft.valid_until,
            status=status,
            provenance=resolved.provenance,
            create_time=now,
            author_user_id=identity.user_id,
            replaces_number=replaced.number if replaced else 0,
            status_reason=status_reason,
            source_change_time=now if resolved.source_changed else None,
        )
        memory.revisions.append(revision)
        uow.memories.add_revision(revision)
        if revision.status is RevisionStatus.ACTIVE:
            self._supersede(uow, memory, revision, valid_from)
        self._schedule_index(uow, memory, now)
        return memory, revision

    def confirm(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        number: int,
        expected_version: int | None,
        confirming_message: str,
        now: datetime,
    ) -> tuple[Memory, Revision]:
        memory, revision = self._candidate(uow, identity, memory_id, number, expected_version)
        said = evidence.offered_time(revision)
        evidence_ref = rules.evidence_lineage(revision.provenance)
        if confirming_message:
            message = self._evidence.message(
                uow, identity, confirming_message, "transcript_message"
            )
            if message.speaker is not Speaker.USER or message.author_user_id != identity.user_id:
                raise InvalidArgument(
                    "transcript_message",
                    "a confirmation rests on the confirming user's own message",
                    reason=Reason.SPEAKER_MISMATCH,
                )
            said, evidence_ref = message.create_time, confirming_message  # said again, now
        # The subject confirming is the subject's own statement, whoever spoke first.
        offered = evidence.Offered(said, revision.value, True, evidence_ref)
        self.refuse_stale(uow, memory, offered, now, exclude=revision)
        self._claim(uow, memory, now)
        others_active = any(
            r.status is RevisionStatus.ACTIVE for r in memory.revisions if r is not revision
        )
        if revision.valid_from is None and others_active:
            revision.valid_from = now
        revision.status = RevisionStatus.ACTIVE
        revision.status_reason = ""
        revision.confirmation = Confirmation(identity.user_id, now)
        uow.memories.update_revision(revision)
        if revision.valid_from is not None:
            self._supersede(uow, memory, revision, revision.valid_from)
        self._schedule_index(uow, memory, now)
        return memory, revision

    def reject(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        number: int,
        expected_version: int | None,
        now: datetime,
    ) -> tuple[Memory, Revision]:
        memory, revision = self._candidate(uow, identity, memory_id, number, expected_version)
        self._claim(uow, memory, now)
        revision.status = RevisionStatus.REJECTED
        uow.memories.update_revision(revision)
        self._schedule_index(uow, memory, now)
        return memory, revision

    def delete(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        expected_version: int | None,
        now: datetime,
    ) -> tuple[Memory, DeletionReceipt]:
        """Leaves active use and purges text in one transaction, and says what that reached."""
        memory = self._visible(uow, identity, memory_id)
        if not self._policy.can_delete(uow, identity, memory.scope):
            raise PermissionDenied("caller may not delete this memory")
        if expected_version is not None:
            self._check_version(uow, memory, expected_version)
        self._claim(uow, memory, now)
        lineage = sorted({rules.lineage_hash(r.value) for r in memory.revisions})
        for revision in memory.revisions:
            revision.status = RevisionStatus.DELETED
            revision.value = ""
            ref = revision.provenance.evidence
            revision.provenance = replace(
                revision.provenance,
                quote="",
                excerpt="",
                evidence=replace(
                    ref, ref=rules.lineage_ref_hash(rules.evidence_lineage(revision.provenance))
                ),
            )
            uow.memories.update_revision(revision)
        memory.key_hash = rules.scoped_key_hash(
            memory.scope.type.value, memory.scope.id, memory.key, memory.key_context
        )
        uow.memories.mark_deleted(memory.id, now, memory.key_hash)
        memory.key, memory.key_context = "deleted", ""
        memory.delete_time = now
        subject = memory.scope.id if memory.scope.type is ScopeType.USER else ""
        cancelled = uow.imports.cancel_pending(subject, lineage)
        blanked = uow.imports.blank_text(subject, lineage, memory.id)
        redacted = uow.idempotency.redact_shown([memory.id, *blanked])
        self._schedule_index(uow, memory, now)
        return memory, self._receipt(memory, now, cancelled, len(blanked), redacted)

    def _receipt(
        self, memory: Memory, now: datetime, cancelled: int, blanked: int, redacted: int
    ) -> DeletionReceipt:
        count = len(memory.revisions)
        backups = now + timedelta(days=self._retention.backup_days)
        return DeletionReceipt(
            removed=[
                ("store", f"the text of {count} revision(s) and their quotes, in this transaction"),
                (
                    "search_index",
                    "removal queued in the same transaction; searches validate against the "
                    "records meanwhile, so the memory is never recalled again",
                ),
                (
                    "stored_responses",
                    f"{redacted} stored idempotency response(s) showing this memory redacted; "
                    "replaying those requests answers MEMORY_DELETED",
                ),
                (
                    "import_items",
                    f"the text of {blanked} import item(s) of this lineage erased; their hashes "
                    "stay so a re-import cannot bring it back",
                ),
                (
                    "pending_work",
                    f"{cancelled} import item(s) with this text withdrawn from review; late "
                    "proposals and index writes re-check the deletion when they commit",
                ),
                ("key", "replaced by a hash in the deletion marker"),
            ],
            not_reached=[
                (
                    "audit_transcript",
                    "the conversation messages the memory was taken from stay as evidence",
                ),
                (
                    "database_log",
                    "the database's write-ahead log keeps overwritten pages until its next "
                    "checkpoint (minutes on SQLite and PostgreSQL)",
                ),
                ("backups", f"database backups until they expire ({backups.date().isoformat()})"),
                ("logs", "operational logs carry ids, not memory text"),
                (
                    "model_providers",
                    "contexts already sent to a model provider cannot be withdrawn",
                ),
            ],
            marker_expire_time=now + timedelta(days=self._retention.marker_days),
        )

    def reindex(self, uow: UnitOfWork, identity: Identity, now: datetime) -> int:
        """Queues a rebuild: the drain removes the tenant's points, then refills them from SQL.

        The wipe is queued work in this transaction, not a call made before it: a retried
        request (same request id) queues nothing twice and never leaves an emptied index with
        nothing to refill it. Returns how many live memories the refill will send.
        """
        require_admin(identity)
        uow.outbox.enqueue_tenant(OutboxKind.REBUILD, now)
        return uow.memories.count_live()

    # --- helpers -----------------------------------------------------------------------------

    def _refuse_secrets(self, draft: RevisionDraft) -> None:
        """The secret rule for every revision written (evidence is checked when resolved)."""
        self._secrets.refuse("revision.value", draft.value)
        self._secrets.refuse("revision.provenance.quote", draft.provenance.quote)

    @staticmethod
    def _supersede(uow: UnitOfWork, memory: Memory, newcomer: Revision, start: datetime) -> None:
        for changed in rules.supersede(memory, newcomer, start):
            uow.memories.update_revision(changed)

    @staticmethod
    def _schedule_index(uow: UnitOfWork, memory: Memory, now: datetime) -> None:
        """The memory's index change, queued in the same transaction as the record's. Whenever
        the applicable revision will change by itself (a correction effective Monday), the
        drain, indexing this change, queues that instant (`indexing.boundaries_to_queue`)."""
        uow.outbox.enqueue(memory.id, now, now)

    def _visible(self, uow: UnitOfWork, identity: Identity, memory_id: str) -> Memory:
        """I7: a foreign, unauthorized or deleted memory answers exactly like a missing one."""
        memory = uow.memories.get(memory_id)
        if (
            memory is None
            or memory.deleted
            or not self._policy.can_read(uow, identity, memory.scope)
        ):
            raise NotFound(names.memory(memory_id))
        return memory

    def _candidate(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        number: int,
        expected_version: int | None,
    ) -> tuple[Memory, Revision]:
        memory = self._visible(uow, identity, memory_id)
        revision = memory.revision(number)
        if revision is None:
            raise NotFound(names.revision(memory_id, number))
        subject_ok = (
            memory.scope.id == identity.user_id
            if memory.scope.type is ScopeType.USER
            else self._policy.can_write(uow, identity, memory.scope)
        )
        if not subject_ok:
            raise FailedPrecondition(
                "only the memory's subject may confirm or reject its candidates",
                reason=Reason.SUBJECT_CONFIRMATION_REQUIRED,
            )
        if revision.status is not RevisionStatus.CANDIDATE:
            raise FailedPrecondition(f"revision {number} is {revision.status.value}, not CANDIDATE")
        if expected_version is not None:
            self._check_version(uow, memory, expected_version)
        return memory, revision

    def refuse_stale(
        self,
        uow: UnitOfWork,
        held: Memory | tuple[Scope, str, str],
        offered: evidence.Offered,
        now: datetime,
        *,
        exclude: Revision | None = None,
    ) -> None:
        """FAILED_PRECONDITION `STALE_EVIDENCE` when the stale-evidence rule refuses."""
        stale = self.staleness(uow, held, offered, now, exclude=exclude)
        if stale:
            raise FailedPrecondition(stale, reason=Reason.STALE_EVIDENCE)

    @staticmethod
    def staleness(
        uow: UnitOfWork,
        held: Memory | tuple[Scope, str, str],
        offered: evidence.Offered,
        now: datetime,
        *,
        exclude: Revision | None = None,
    ) -> str:
        """The stale-evidence rule (domain/evidence.py) against the key as stored now, for every
        path that writes: create, correct, confirm, propose, import confirmation and restore.
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

    @staticmethod
    def offered(resolved: ResolvedEvidence, scope: Scope, value: str) -> evidence.Offered:
        """Resolved evidence offered to write `value` to a key of `scope`."""
        provenance = resolved.provenance
        own_words = not authority.subjects_own_words(provenance, scope, resolved.author_user_id)
        return evidence.Offered(resolved.said, value, own_words, rules.evidence_lineage(provenance))

    def _check_version(self, uow: UnitOfWork, memory: Memory, expected_version: int) -> None:
        if memory.version != expected_version:
            raise self._stale(memory)

    def _claim(self, uow: UnitOfWork, memory: Memory, now: datetime) -> None:
        """I3: the compare-and-swap that makes exactly one of two racing writers win."""
        if not uow.memories.claim_version(memory.id, memory.version, now):
            current = uow.memories.get(memory.id)
            raise self._stale(current or memory)
        memory.version += 1
        memory.update_time = now

    @staticmethod
    def _stale(current: Memory) -> Aborted:
        latest = current.latest
        return Aborted(
            "the memory changed since it was read; re-read it and retry",
            current,
            {
                "current_etag": etag_of(current),
                "current_revision": names.revision(current.id, latest.number) if latest else "",
            },
        )


class TranscriptUseCases:
    """The audit transcript: append-only evidence, never memory."""

    def get(
        self, uow: UnitOfWork, identity: Identity, conversation_id: str, message_id: str
    ) -> Message:
        message = conversations.readable_message(uow, identity, conversation_id, message_id)
        if message is None:
            raise NotFound(names.message(conversation_id, message_id))
        return message

    def append(
        self,
        uow: UnitOfWork,
        identity: Identity,
        conversation_id: str,
        speaker: Speaker,
        text: str,
        status: TurnStatus,
        now: datetime,
    ) -> Message:
        """Appends to the caller's own conversation of that id (domain/conversations.py)."""
        return self.append_many(uow, identity, [(conversation_id, speaker, text, status)], now)[0]

    def append_many(
        self,
        uow: UnitOfWork,
        identity: Identity,
        messages: Sequence[tuple[str, Speaker, str, TurnStatus]],
        now: datetime,
    ) -> list[Message]:
        """(conversation id, speaker, text, status) appended in order, each to the caller's own
        conversation of that id; each conversation's sequences are claimed at once."""
        counts = Counter(conversation_id for conversation_id, *_ in messages)
        next_sequence = {}
        for conversation_id, count in counts.items():
            owner = conversations.open_for_append(uow, identity, conversation_id, now)
            next_sequence[conversation_id] = uow.transcript.claim_sequences(
                owner, conversation_id, count
            )
        appended = []
        for conversation_id, speaker, text, status in messages:
            sequence = next_sequence[conversation_id]
            next_sequence[conversation_id] = sequence + 1
            appended.append(
                Message(
                    id=new_id(),
                    tenant_id=uow.tenant_id,
                    conversation_id=conversation_id,
                    sequence=sequence,
                    speaker=speaker,
                    text=text,
                    status=status,
                    author_user_id=identity.user_id,
                    create_time=now,
                )
            )
        uow.transcript.add_messages(appended)
        return appended

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        conversation_id: str,
        after_sequence: int,
        limit: int,
    ) -> list[Message]:
        owner = conversations.owner_for_reading(uow, identity, conversation_id)
        return uow.transcript.list_messages(owner, conversation_id, after_sequence, limit)


class AccessUseCases:
    def __init__(self, policy: AccessPolicy) -> None:
        self._policy = policy

    def get_customer(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> Customer:
        """A registered customer the caller may use (admins: any); NOT_FOUND otherwise,
        exactly as for a customer that is not registered."""
        customer = uow.customers.get(customer_id)
        if customer is None or not self._policy.authorizer.is_allowed(uow, identity, customer_id):
            raise NotFound(names.customer(customer_id))
        return customer

    def list_customers(
        self, uow: UnitOfWork, identity: Identity, after_id: str, limit: int
    ) -> list[Customer]:
        among = self._policy.authorizer.allowed_customers(uow, identity)
        return uow.customers.list_after(after_id, limit, among)

    def delete_customer(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> Customer:
        """Removes the registration (the display name stops resolving); grants and the
        customer's memory stay. Admin only."""
        require_admin(identity)
        customer = self.get_customer(uow, identity, customer_id)
        if not uow.customers.remove(customer_id):
            raise NotFound(names.customer(customer_id))
        return customer

    def get_grant(
        self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str
    ) -> CustomerGrant:
        """A grant of the caller's own (admins: any); NOT_FOUND otherwise, as for a missing one."""
        grant = uow.grants.get(user_id, customer_id)
        if grant is None or not (identity.is_admin or user_id == identity.user_id):
            raise NotFound(names.grant(user_id, customer_id))
        return grant

    def grant(
        self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str, now: datetime
    ) -> CustomerGrant:
        require_admin(identity)
        existing = uow.grants.get(user_id, customer_id)
        if existing is not None:
            return existing
        grant = CustomerGrant(uow.tenant_id, user_id, customer_id, identity.user_id, now)
        uow.grants.add(grant)
        return grant

    def register_customer(
        self,
        uow: UnitOfWork,
        identity: Identity,
        customer_id: str,
        display_name: str,
        now: datetime,
    ) -> Customer:
        require_admin(identity)
        match_name = rules.customer_match_name(display_name, "customer.display_name")
        customer = Customer(uow.tenant_id, customer_id, display_name, now)
        return uow.customers.upsert(customer, match_name)

    def revoke(self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str) -> bool:
        require_admin(identity)
        return uow.grants.remove(user_id, customer_id)

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        user_id: str,
        after: tuple[str, str],
        limit: int,
    ) -> list[CustomerGrant]:
        if user_id and user_id != identity.user_id:
            require_admin(identity)
        if not user_id and not identity.is_admin:
            user_id = identity.user_id
        return uow.grants.list_after(user_id or None, after, limit)


def _preload_cited(
    uow: UnitOfWork, commands: Sequence[CreateMemory], known: Sequence[Message] = ()
) -> None:
    """The transcript messages the commands cite, read in one statement (but those `known`)."""
    cited = []
    for command in commands:
        ref = command.revision.provenance.evidence
        if ref.type is EvidenceType.TRANSCRIPT_MESSAGE:
            parsed = names.MESSAGE.match(ref.ref)
            if parsed is not None:
                cited.append(parsed[1])
    uow.transcript.preload_messages(cited, known)
