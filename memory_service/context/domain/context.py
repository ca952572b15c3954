"""The context for a new call (SPEC §4): the recent window, what durable memory applies and
why, overrides beside the defaults they shadow, conflicts surfaced (I12), and what was left
out and why. Customer memory is used only for references that resolve unambiguously (I7)."""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from memory_service.context.domain.overrides import OverrideUseCases
from memory_service.kernel.domain import conversations, names, rules
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.model import (
    Identity,
    Memory,
    Message,
    Override,
    ParentType,
    Revision,
    RevisionStatus,
    ScopeType,
    Task,
)
from memory_service.kernel.domain.ports import MemoryQuery, UnitOfWork, Visibility
from memory_service.memories.public import ShownMemory, show_memory
from memory_service.tasks.public import TaskUseCases

MAX_CONTEXT_MEMORIES = 500


class ReferenceStatus(enum.StrEnum):
    RESOLVED = "RESOLVED"
    AMBIGUOUS = "AMBIGUOUS"
    NOT_FOUND = "NOT_FOUND"
    UNAUTHORIZED = "UNAUTHORIZED"


class Applicability(enum.StrEnum):
    USER = "USER"
    CUSTOMER = "CUSTOMER"
    ORGANIZATION = "ORGANIZATION"


class ExclusionReason(enum.StrEnum):
    CANDIDATE = "CANDIDATE"
    SUPERSEDED = "SUPERSEDED"
    NOT_YET_EFFECTIVE = "NOT_YET_EFFECTIVE"
    EXPIRED = "EXPIRED"
    UNAUTHORIZED_CUSTOMER = "UNAUTHORIZED_CUSTOMER"
    AMBIGUOUS_REFERENCE = "AMBIGUOUS_REFERENCE"
    UNKNOWN_CUSTOMER = "UNKNOWN_CUSTOMER"
    SOURCE_CHANGED = "SOURCE_CHANGED"


@dataclass(frozen=True)
class CustomerRef:
    customer_id: str = ""
    name: str = ""

    def label(self) -> str:
        return f"customer id {self.customer_id}" if self.customer_id else f"customer {self.name!r}"


@dataclass(frozen=True)
class Resolution:
    reference: CustomerRef
    status: ReferenceStatus
    customer_id: str = ""
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContextRequest:
    conversation_id: str
    task_id: str
    instant: datetime
    customers: list[CustomerRef]
    window_size: int
    # Leave out memories whose cited document changed (default: include them, flagged).
    exclude_source_changed: bool = False


@dataclass(frozen=True)
class Applying:
    """A memory shown with the revision that applies at the context's instant, worked out
    once: conflicts, shadowed defaults and the reply all read this one."""

    shown: ShownMemory  # its applicable revision is never None
    reason: Applicability

    @property
    def memory(self) -> Memory:
        return self.shown.memory

    @property
    def revision(self) -> Revision:
        applicable = self.shown.applicable
        assert applicable is not None
        return applicable.revision


@dataclass(frozen=True)
class ShadowedOverride:
    override: Override
    shadowed: Applying | None


@dataclass(frozen=True)
class Conflict:
    key: str
    key_context: str
    memories: list[Applying]


@dataclass
class Context:
    instant: datetime
    window: list[Message] = field(default_factory=list)
    memories: list[Applying] = field(default_factory=list)
    overrides: list[ShadowedOverride] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    excluded: list[tuple[str, ExclusionReason]] = field(default_factory=list)
    customers: list[Resolution] = field(default_factory=list)
    allowed: Visibility = field(default_factory=lambda: Visibility(frozenset(), frozenset()))
    # Task state, a section of its own: never counted among memories, gone once the task ends.
    task: Task | None = None


@dataclass(eq=False)
class ContextBuilder:
    _policy: AccessPolicy
    _overrides: OverrideUseCases
    _tasks: TaskUseCases

    def build(self, uow: UnitOfWork, identity: Identity, request: ContextRequest) -> Context:
        context = Context(request.instant)
        if request.conversation_id:
            owner = conversations.require_own(uow, identity, request.conversation_id)
            context.window = uow.transcript.recent_messages(
                owner, request.conversation_id, request.window_size
            )
        context.customers = self._resolve_all(uow, identity, request.customers)
        customer_ids = frozenset(
            r.customer_id for r in context.customers if r.status is ReferenceStatus.RESOLVED
        )
        for resolution in context.customers:
            reason = {
                ReferenceStatus.AMBIGUOUS: ExclusionReason.AMBIGUOUS_REFERENCE,
                ReferenceStatus.NOT_FOUND: ExclusionReason.UNKNOWN_CUSTOMER,
                ReferenceStatus.UNAUTHORIZED: ExclusionReason.UNAUTHORIZED_CUSTOMER,
            }.get(resolution.status)
            if reason is not None:
                context.excluded.append((resolution.reference.label(), reason))
        context.allowed = Visibility(frozenset({identity.user_id}), customer_ids)
        memories = uow.memories.list_after(MemoryQuery(context.allowed), "", MAX_CONTEXT_MEMORIES)
        for memory in memories:
            revision = rules.applicable_revision(memory, request.instant)
            if (
                revision is not None
                and request.exclude_source_changed
                and (revision.source_change_time is not None)
            ):
                subject = f"memories/{memory.id}/revisions/{revision.number}"
                context.excluded.append((subject, ExclusionReason.SOURCE_CHANGED))
            elif revision is not None:
                applies = Applicability(memory.scope.type.value)
                shown = show_memory(memory, request.instant, revision)
                context.memories.append(Applying(shown, applies))
            context.excluded.extend(self._exclusions(memory, revision, request.instant))
        context.conflicts = self._conflicts(context.memories)
        context.overrides = self._active_overrides(uow, identity, request, context.memories)
        if request.task_id:
            context.task = self._tasks.for_context(uow, identity, request.task_id)
        return context

    def _resolve_all(
        self, uow: UnitOfWork, identity: Identity, refs: list[CustomerRef]
    ) -> list[Resolution]:
        """Names are matched first; then every id is checked against the grants in one go."""
        authorizer = self._policy.authorizer
        matches = {
            ref.name: authorizer.resolve_name(uow, identity, ref.name)
            for ref in refs
            if not ref.customer_id
        }
        ids = {ref.customer_id for ref in refs if ref.customer_id}
        ids.update(m for found in matches.values() for m in found)
        allowed = authorizer.allowed_among(uow, identity, ids)
        return [self._resolve(ref, matches.get(ref.name, []), allowed) for ref in refs]

    @staticmethod
    def _resolve(ref: CustomerRef, matches: list[str], may_use: frozenset[str]) -> Resolution:
        if ref.customer_id:
            if ref.customer_id in may_use:
                return Resolution(ref, ReferenceStatus.RESOLVED, ref.customer_id)
            return Resolution(ref, ReferenceStatus.UNAUTHORIZED)
        if not matches:
            return Resolution(ref, ReferenceStatus.NOT_FOUND)
        allowed = tuple(m for m in matches if m in may_use)
        if len(matches) > 1:
            # Partial understanding grants partial authority: none of them is used.
            return Resolution(ref, ReferenceStatus.AMBIGUOUS, candidates=allowed)
        if not allowed:
            return Resolution(ref, ReferenceStatus.UNAUTHORIZED)
        return Resolution(ref, ReferenceStatus.RESOLVED, matches[0])

    @staticmethod
    def _exclusions(
        memory: Memory, applicable: Revision | None, instant: datetime
    ) -> list[tuple[str, ExclusionReason]]:
        excluded = []
        for revision in memory.revisions:
            if revision is applicable:
                continue
            state = rules.state_at(revision, instant)
            reason = None
            if state is RevisionStatus.CANDIDATE:
                reason = ExclusionReason.CANDIDATE
            elif state is RevisionStatus.SUPERSEDED:
                reason = ExclusionReason.SUPERSEDED
            elif state is RevisionStatus.ACTIVE:
                if revision.valid_from is not None and instant < revision.valid_from:
                    reason = ExclusionReason.NOT_YET_EFFECTIVE
                else:
                    reason = ExclusionReason.EXPIRED
            if reason is not None:
                excluded.append((names.revision(memory.id, revision.number), reason))
        return excluded

    @staticmethod
    def _conflicts(applicable: list[Applying]) -> list[Conflict]:
        """Same key from different scopes with different values: reported, never resolved."""
        by_key: dict[tuple[str, str], list[Applying]] = defaultdict(list)
        for item in applicable:
            by_key[(item.memory.key, item.memory.key_context)].append(item)
        conflicts = []
        for (key, key_context), group in sorted(by_key.items()):
            if len(group) < 2:  # one memory of its key disagrees with nothing: not normalized
                continue
            values = {rules.normalize_for_match(item.revision.value) for item in group}
            if len(values) > 1:
                conflicts.append(Conflict(key, key_context, group))
        return conflicts

    def _active_overrides(
        self,
        uow: UnitOfWork,
        identity: Identity,
        request: ContextRequest,
        applicable: list[Applying],
    ) -> list[ShadowedOverride]:
        parents = []
        if request.conversation_id:
            parents.append((ParentType.CONVERSATION, request.conversation_id))
        if request.task_id:
            parents.append((ParentType.TASK, request.task_id))
        shadowed = []
        for parent in parents:
            for override in self._overrides.active(
                uow, identity, parent, request.instant, parent_checked=True
            ):
                default = next(
                    (
                        item
                        for item in applicable
                        if item.memory.key == override.key
                        and item.memory.key_context == override.key_context
                        and item.memory.scope == override.scope
                    ),
                    None,
                )
                shadowed.append(ShadowedOverride(override, default))
        return shadowed


def scope_selectors(allowed: Visibility) -> list[tuple[str, str]]:
    """The same scopes as search filters, for recall inside a context."""
    scopes = [(ScopeType.USER.value, u) for u in sorted(allowed.user_ids or ())]
    scopes += [(ScopeType.CUSTOMER.value, c) for c in sorted(allowed.customer_ids or ())]
    scopes.append((ScopeType.ORGANIZATION.value, ""))
    return scopes
