"""Writing memories: create (one or a batch), correct, confirm, reject, delete, reindex. Each
runs inside a unit of work the caller opened, so one transaction holds the change, its
supersessions, its index write (the outbox) and its idempotency record together. Who may see
the memory being changed is the same check the reads make (memory_reads.py); the evidence a
write cites is resolved and checked for staleness in evidence_resolution.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import AccessPolicy, require_admin
from memory_service.kernel.domain.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Reason,
    batch_item,
)
from memory_service.kernel.domain.etags import etag_of
from memory_service.kernel.domain.model import (
    Confirmation,
    EvidenceType,
    Identity,
    Memory,
    Message,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    new_id,
)
from memory_service.kernel.domain.ports import OutboxKind, UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.domain import authority, evidence, grounding
from memory_service.memories.domain.evidence_resolution import (
    EvidenceResolver,
    ResolvedEvidence,
    offer_of,
    refuse_stale,
    staleness,
)
from memory_service.memories.domain.memory_reads import MemoryReads
from memory_service.memories.domain.memory_requests import CreateMemory, RevisionDraft
from memory_service.memories.domain.receipts import DeletionReceipt, RetentionPolicy, memory_receipt


class MemoryUseCases(MemoryReads):
    """The memory writes, over the reads: a write finds the memory it changes as a read would,
    and one object serves both app entries (`MemoryCommands`, `MemoryQueries`)."""

    def __init__(
        self,
        policy: AccessPolicy,
        evidence: EvidenceResolver | None = None,
        retention: RetentionPolicy | None = None,
        secrets: SecretDetector | None = None,
    ) -> None:
        super().__init__(policy)
        self._secrets = secrets or SecretDetector()
        self._evidence = evidence or EvidenceResolver(self._secrets)
        self._retention = retention or RetentionPolicy()

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
        held = (scope, command.key, command.key_context)
        judged = self._judge(uow, held, scope, resolved, draft.value, now, review=review)
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
        revision = self._revision(
            memory, draft, resolved, judged, identity, now, valid_from=draft.valid_from
        )
        memory.revisions.append(revision)
        uow.memories.add(memory)
        self.schedule_index(uow, memory, now)
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
        judged = self._judge(uow, memory, memory.scope, resolved, draft.value, now, review=review)
        valid_from = draft.valid_from or now
        rules.check_interval(valid_from, draft.valid_until, "revision")
        self.advance_version(uow, memory, now)
        replaced = rules.newest_active(memory)
        revision = self._revision(
            memory,
            draft,
            resolved,
            judged,
            identity,
            now,
            valid_from=valid_from,
            replaces=replaced.number if replaced else 0,
        )
        memory.revisions.append(revision)
        uow.memories.add_revision(revision)
        if revision.status is RevisionStatus.ACTIVE:
            self._supersede(uow, memory, revision, valid_from)
        self.schedule_index(uow, memory, now)
        return memory, revision

    @staticmethod
    def _judge(
        uow: UnitOfWork,
        held: Memory | tuple[Scope, str, str],
        scope: Scope,
        resolved: ResolvedEvidence,
        value: str,
        now: datetime,
        *,
        review: bool,
    ) -> tuple[RevisionStatus, str]:
        """The stale-evidence rule for the evidence offered, then the status (and why) the
        authority rule gives the revision it writes: create and correct decide alike."""
        refuse_stale(staleness(uow, held, offer_of(resolved, scope, value), now))
        return authority.initial_status(
            scope,
            resolved.provenance,
            resolved.author_user_id,
            resolved.text,
            value,
            review=review,
        )

    @staticmethod
    def _revision(
        memory: Memory,
        draft: RevisionDraft,
        resolved: ResolvedEvidence,
        judged: tuple[RevisionStatus, str],
        identity: Identity,
        now: datetime,
        *,
        valid_from: datetime | None,
        replaces: int = 0,
    ) -> Revision:
        """The revision a create or correction writes: the next number of `memory`."""
        status, status_reason = judged
        return Revision(
            memory_id=memory.id,
            number=memory.revisions[-1].number + 1 if memory.revisions else 1,
            value=draft.value,
            valid_from=valid_from,
            valid_until=draft.valid_until,
            status=status,
            provenance=resolved.provenance,
            create_time=now,
            author_user_id=identity.user_id,
            replaces_number=replaces,
            status_reason=status_reason,
            source_change_time=now if resolved.source_changed else None,
        )

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
        refuse_stale(staleness(uow, memory, offered, now, exclude=revision))
        self.advance_version(uow, memory, now)
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
        self.schedule_index(uow, memory, now)
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
        self.advance_version(uow, memory, now)
        revision.status = RevisionStatus.REJECTED
        uow.memories.update_revision(revision)
        self.schedule_index(uow, memory, now)
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
        self.advance_version(uow, memory, now)
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
        self.schedule_index(uow, memory, now)
        receipt = memory_receipt(memory, now, self._retention, cancelled, len(blanked), redacted)
        return memory, receipt

    def reindex(self, uow: UnitOfWork, identity: Identity, now: datetime) -> int:
        """Queues a rebuild: the drain removes the tenant's points, then refills them from SQL.

        The wipe is queued work in this transaction, not a call made before it: a retried
        request (same request id) queues nothing twice and never leaves an emptied index with
        nothing to refill it. Returns how many live memories the refill will send.
        """
        require_admin(identity)
        uow.outbox.enqueue_tenant(OutboxKind.REBUILD, now)
        return uow.memories.count_live()

    def _refuse_secrets(self, draft: RevisionDraft) -> None:
        """The secret rule for every revision written (evidence is checked when resolved)."""
        self._secrets.refuse("revision.value", draft.value)
        self._secrets.refuse("revision.provenance.quote", draft.provenance.quote)

    @staticmethod
    def _supersede(uow: UnitOfWork, memory: Memory, newcomer: Revision, start: datetime) -> None:
        for changed in rules.supersede(memory, newcomer, start):
            uow.memories.update_revision(changed)

    @staticmethod
    def schedule_index(uow: UnitOfWork, memory: Memory, now: datetime) -> None:
        """The memory's index change, queued in the same transaction as the record's. Whenever
        the applicable revision will change by itself (a correction effective Monday), the
        drain, indexing this change, queues that instant (`indexing.boundaries_to_queue`)."""
        uow.outbox.enqueue(memory.id, now, now)

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

    def _check_version(self, uow: UnitOfWork, memory: Memory, expected_version: int) -> None:
        if memory.version != expected_version:
            raise self.stale(memory)

    def advance_version(self, uow: UnitOfWork, memory: Memory, now: datetime) -> None:
        """I3: the compare-and-swap that makes exactly one of two racing writers win."""
        if not uow.memories.advance_version(memory.id, memory.version, now):
            current = uow.memories.get(memory.id)
            raise self.stale(current or memory)
        memory.version += 1
        memory.update_time = now

    @staticmethod
    def stale(current: Memory) -> Aborted:
        """The answer to a writer that read an older version; public, with `advance_version`
        and `schedule_index`, because resolving a conflict (the review slice) writes memories
        by the same three steps."""
        latest = current.latest
        return Aborted(
            "the memory changed since it was read; re-read it and retry",
            current,
            {
                "current_etag": etag_of(current),
                "current_revision": names.revision(current.id, latest.number) if latest else "",
            },
        )


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
