"""The review queue: what needs a person, most urgent first, and the action that resolves a
conflict. See docs/behaviour.md, "Review queue", for the order and what a conflict is.

Order (QUEUE_ORDER): conflicts (two truths served at once), then memories whose source document
changed (served, maybe wrong), then candidates awaiting confirmation, then imported items
pending review (neither is served yet), then memories nobody used for N days (housekeeping).
Within a reason, oldest first: ids sort by age.

Who sees what: a caller sees the items they can act on — their own user memory, the customers
they may use — and admins the whole tenant's. Organization memory is written by admins only, so
its items reach admins only. A conflict shows when the caller can write one side and read both.
Imported items reach their owner only, admins included, as everywhere in the import service.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import combinations

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Reason,
)
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Identity,
    ImportItem,
    Memory,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    ScopeType,
    Speaker,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.memories.public import MemoryUseCases

MAX_UNUSED_DAYS = 3650
# Memories read to find conflicts in one call: live memories whose key another scope shares.
MAX_CONFLICT_SCAN = 2000
SCAN_BATCH = 200


class ReviewReason(enum.StrEnum):
    CONFLICT = "CONFLICT"
    SOURCE_CHANGED = "SOURCE_CHANGED"
    CANDIDATE = "CANDIDATE"
    IMPORT_PENDING = "IMPORT_PENDING"
    UNUSED = "UNUSED"


QUEUE_ORDER = (
    ReviewReason.CONFLICT,
    ReviewReason.SOURCE_CHANGED,
    ReviewReason.CANDIDATE,
    ReviewReason.IMPORT_PENDING,
    ReviewReason.UNUSED,
)


@dataclass(frozen=True)
class ReviewItem:
    reason: ReviewReason
    position: str  # where it sorts within its reason (ascending)
    since: datetime
    detail: str
    memory: Memory | None = None
    other: Memory | None = None
    import_item: ImportItem | None = None


@dataclass(frozen=True)
class ReviewQuery:
    reasons: frozenset[ReviewReason]
    unused_days: int = 0

    @staticmethod
    def of(reasons: list[ReviewReason], unused_days: int) -> ReviewQuery:
        if not 0 <= unused_days <= MAX_UNUSED_DAYS:
            raise InvalidArgument("unused_days", f"must be between 0 and {MAX_UNUSED_DAYS}")
        if ReviewReason.UNUSED in reasons and not unused_days:
            raise InvalidArgument("unused_days", "is required to list unused memories")
        chosen = frozenset(reasons) or frozenset(QUEUE_ORDER)
        if not unused_days:
            chosen -= {ReviewReason.UNUSED}
        return ReviewQuery(chosen, unused_days)


Position = tuple[int, str]  # (rank of the reason in QUEUE_ORDER, position within it)


@dataclass(eq=False)
class ReviewUseCases:
    _policy: AccessPolicy
    _memories: MemoryUseCases

    def queue(
        self,
        uow: UnitOfWork,
        identity: Identity,
        query: ReviewQuery,
        after: Position | None,
        limit: int,
        now: datetime,
    ) -> tuple[list[ReviewItem], Position | None]:
        """A page in queue order, and where the next page starts (None when done)."""
        items: list[ReviewItem] = []
        for rank, reason in enumerate(QUEUE_ORDER):
            if reason not in query.reasons or (after is not None and rank < after[0]):
                continue
            cursor = after[1] if after is not None and rank == after[0] else ""
            items.extend(
                self._items(uow, identity, reason, query, cursor, limit + 1 - len(items), now)
            )
            if len(items) > limit:
                break
        page = items[:limit]
        if len(items) <= limit:
            return page, None
        last = page[-1]
        return page, (QUEUE_ORDER.index(last.reason), last.position)

    def _items(
        self,
        uow: UnitOfWork,
        identity: Identity,
        reason: ReviewReason,
        query: ReviewQuery,
        after: str,
        want: int,
        now: datetime,
    ) -> list[ReviewItem]:
        if reason is ReviewReason.CONFLICT:
            return [c for c in self._conflicts(uow, identity, now) if c.position > after][:want]
        if reason is ReviewReason.IMPORT_PENDING:
            # Only the owner reads or confirms an imported item, admins included (ImportService).
            owner = identity.user_id
            return [
                ReviewItem(
                    reason,
                    item.id,
                    item.source_time or now,
                    "an imported statement waits for its owner to confirm or reject it",
                    import_item=item,
                )
                for item in uow.review.pending_items(owner, after, want)
            ]
        visibility = self._policy.visibility(uow, identity)
        if not identity.is_admin:  # organization memory is the admins' to settle
            visibility = replace(visibility, organization=False)
        cutoff = now - timedelta(days=query.unused_days)
        out: list[ReviewItem] = []
        cursor = after
        while len(out) < want:
            if reason is ReviewReason.SOURCE_CHANGED:
                batch = uow.review.flagged(visibility, cursor, SCAN_BATCH)
            elif reason is ReviewReason.CANDIDATE:
                batch = uow.review.with_candidates(visibility, cursor, SCAN_BATCH)
            else:
                batch = uow.review.unused_since(visibility, cutoff, cursor, SCAN_BATCH)
            for memory in batch:
                cursor = memory.id
                item = self._memory_item(uow, identity, reason, memory, now)
                if item is not None:
                    out.append(item)
                    if len(out) == want:
                        break
            if len(batch) < SCAN_BATCH:
                break
        return out

    def _memory_item(
        self,
        uow: UnitOfWork,
        identity: Identity,
        reason: ReviewReason,
        memory: Memory,
        now: datetime,
    ) -> ReviewItem | None:
        if not self._acts_on(uow, identity, memory):
            return None
        applicable = rules.applicable_revision(memory, now)
        if reason is ReviewReason.SOURCE_CHANGED:
            if applicable is None or applicable.source_change_time is None:
                return None
            return ReviewItem(
                reason,
                memory.id,
                applicable.source_change_time,
                f"{applicable.provenance.evidence.ref} changed since version "
                f"{applicable.provenance.document_version} was read",
                memory=memory,
            )
        if reason is ReviewReason.CANDIDATE:
            waiting = [r for r in memory.revisions if r.status is RevisionStatus.CANDIDATE]
            if not waiting:
                return None
            newest = waiting[-1]
            why = newest.status_reason or "waiting for the subject's confirmation"
            return ReviewItem(
                reason, memory.id, newest.create_time, f"r{newest.number}: {why}", memory=memory
            )
        return ReviewItem(
            reason,
            memory.id,
            memory.create_time,
            "not used in a context or a recall recently",
            memory=memory,
        )

    def _acts_on(self, uow: UnitOfWork, identity: Identity, memory: Memory) -> bool:
        """Admins act on the whole tenant; others on what they may write."""
        return identity.is_admin or self._policy.can_write(uow, identity, memory.scope)

    def _conflicts(self, uow: UnitOfWork, identity: Identity, now: datetime) -> list[ReviewItem]:
        visibility = self._policy.visibility(uow, identity)
        groups: dict[tuple[str, str], list[Memory]] = {}
        for memory in uow.review.sharing_keys(visibility, MAX_CONFLICT_SCAN):
            groups.setdefault((memory.key, memory.key_context), []).append(memory)
        items = []
        for group in groups.values():
            for first, second in combinations(sorted(group, key=lambda m: m.id), 2):
                if not self.in_conflict(uow, first, second, now):
                    continue
                if not (
                    self._acts_on(uow, identity, first) or self._acts_on(uow, identity, second)
                ):
                    continue
                since = max(
                    r.create_time
                    for r in (
                        rules.applicable_revision(first, now),
                        rules.applicable_revision(second, now),
                    )
                    if r is not None
                )
                items.append(
                    ReviewItem(
                        ReviewReason.CONFLICT,
                        f"{first.id}:{second.id}",
                        since,
                        f"{first.key} differs between {_scope_label(first)} and "
                        f"{_scope_label(second)}; keep one",
                        memory=first,
                        other=second,
                    )
                )
        return sorted(items, key=lambda item: item.position)

    def in_conflict(self, uow: UnitOfWork, first: Memory, second: Memory, now: datetime) -> bool:
        """Two live memories that could apply to one context disagree now (I12): same key and
        key_context, different scopes, never two users' own memories, and a user's memory meets
        a customer's only if that user may use the customer."""
        if (first.key, first.key_context) != (second.key, second.key_context):
            return False
        if first.scope == second.scope or first.deleted or second.deleted:
            return False
        types = {first.scope.type, second.scope.type}
        if types == {ScopeType.USER}:
            return False
        if types == {ScopeType.USER, ScopeType.CUSTOMER}:
            user = first if first.scope.type is ScopeType.USER else second
            customer = second if user is first else first
            subject = Identity(uow.tenant_id, user.scope.id)
            if not self._policy.authorizer.is_allowed(uow, subject, customer.scope.id):
                return False
        return rules.disagree(first, second, now)

    def resolve_conflict(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_id: str,
        kept_id: str,
        expected_version: int | None,
        now: datetime,
    ) -> tuple[Memory, Revision]:
        """Keeps one memory and closes the other's authority now: a REJECTED revision records the
        resolver and the memory kept, and supersedes every active revision of the loser from now
        on, so exactly one of the two applies and the history keeps every revision."""
        if memory_id == kept_id:
            raise InvalidArgument("kept_memory", "must name the other memory of the conflict")
        loser = self._memories.get(uow, identity, memory_id)
        try:
            kept = self._memories.get(uow, identity, kept_id)
        except NotFound:
            raise NotFound(names.memory(kept_id)) from None
        self._policy.require_write(uow, identity, loser.scope)
        if expected_version is not None and loser.version != expected_version:
            raise self._memories.stale(loser)
        if not self.in_conflict(uow, loser, kept, now):
            raise FailedPrecondition(
                "these memories are not in conflict now", reason=Reason.NOT_IN_CONFLICT
            )
        replaced = rules.applicable_revision(loser, now)
        assert replaced is not None  # in_conflict says both apply
        # Both versions move, in id order (two resolvers never wait on each other crosswise): one
        # keeping the other side at the same moment loses the race instead of leaving neither
        # memory applicable.
        for memory in sorted((loser, kept), key=lambda m: m.id):
            self._memories.advance_version(uow, memory, now)
        closing = Revision(
            memory_id=loser.id,
            number=loser.revisions[-1].number + 1,
            value=replaced.value,
            valid_from=now,
            valid_until=None,
            status=RevisionStatus.REJECTED,
            provenance=Provenance(
                speaker=Speaker.USER,
                method=ProvenanceMethod.REVIEW_DECISION,
                evidence=EvidenceRef(EvidenceType.KEPT_MEMORY, names.memory(kept.id)),
                source_time=now,
            ),
            create_time=now,
            author_user_id=identity.user_id,
            replaces_number=replaced.number,
        )
        loser.revisions.append(closing)
        uow.memories.add_revision(closing)
        for changed in rules.supersede(loser, closing, now):
            uow.memories.update_revision(changed)
        self._memories.schedule_index(uow, loser, now)
        return loser, closing


def _scope_label(memory: Memory) -> str:
    scope = memory.scope
    return scope.type.value.lower() + (f" {scope.id}" if scope.id else "")
