"""I8: search proposes, the records decide. Every candidate is re-checked against SQL."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.model import Identity, Memory, Revision, ScopeType
from memory_service.kernel.domain.ports import Candidate, UnitOfWork, Visibility
from memory_service.memories.domain.shown import ShownMemory, show_memory

MAX_SCOPE_FILTERS = 200


class DropReason(enum.StrEnum):
    NOT_FOUND = "NOT_FOUND"
    DELETED = "DELETED"
    NOT_VISIBLE = "NOT_VISIBLE"
    NOT_APPLICABLE = "NOT_APPLICABLE"
    STALE_REVISION = "STALE_REVISION"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"


@dataclass(frozen=True)
class ScopeHint:
    scope_type: ScopeType | None = None
    scope_id: str = ""

    def admits(self, memory: Memory) -> bool:
        if self.scope_type is None:
            return True
        if memory.scope.type is not self.scope_type:
            return False
        return not self.scope_id or memory.scope.id == self.scope_id


@dataclass
class RecallResult:
    candidate_count: int = 0
    # Each kept memory shown at the revision validation found applicable, with its score.
    recalled: list[tuple[ShownMemory, float]] = field(default_factory=list)
    dropped: Counter[DropReason] = field(default_factory=Counter)
    # What the caller could see when the candidates were validated, when validation read it
    # (`RecallUseCases.validate`'s `searched`): whoever built the search's filter compares.
    visibility: Visibility | None = None

    @property
    def dropped_count(self) -> int:
        return sum(self.dropped.values())

    @property
    def memories(self) -> list[tuple[Memory, float]]:
        """The kept memories with their scores, in order."""
        return [(shown.memory, score) for shown, score in self.recalled]


class RecallUseCases:
    def __init__(self, policy: AccessPolicy) -> None:
        self._policy = policy

    def visibility(self, uow: UnitOfWork, identity: Identity) -> Visibility:
        """What the caller may see now: the search's filter is built from it."""
        return self._policy.visibility(uow, identity)

    @staticmethod
    def search_scopes(visibility: Visibility, hint: ScopeHint) -> list[tuple[str, str]] | None:
        """The requested scope intersected with what the caller may see, as sidecar filters.

        None: the intersection is empty, so nothing is searched and nothing is counted; asking
        for another user's or an unauthorized customer's scope then answers exactly like asking
        for an empty one of your own (I7). An empty list means the whole tenant (admins, or more
        customers than a filter should carry). Validation below still decides every candidate.
        """
        users, customers = visibility.user_ids, visibility.customer_ids
        if hint.scope_type is ScopeType.ORGANIZATION:
            return [(ScopeType.ORGANIZATION.value, "")]
        if hint.scope_type is ScopeType.USER:
            return _within(ScopeType.USER, hint.scope_id, users)
        if hint.scope_type is ScopeType.CUSTOMER:
            return _within(ScopeType.CUSTOMER, hint.scope_id, customers)
        if users is None or customers is None or len(customers) > MAX_SCOPE_FILTERS:
            return []
        scopes = [(ScopeType.USER.value, user) for user in sorted(users)]
        scopes += [(ScopeType.CUSTOMER.value, c) for c in sorted(customers)]
        scopes.append((ScopeType.ORGANIZATION.value, ""))
        return scopes

    def validate(
        self,
        uow: UnitOfWork,
        identity: Identity,
        candidates: list[Candidate],
        instant: datetime,
        hint: ScopeHint,
        limit: int,
        within: Visibility | None = None,
        searched: Visibility | None = None,
    ) -> RecallResult:
        """`within` narrows recall to a context's scopes (e.g. only unambiguous customers).

        `searched`: what the caller could see when the search's filter was built from it. The
        caller's visibility is then read again here, decides which candidates are readable, and
        is returned in the result (`visibility`): when it differs, the filter was not the
        caller's as it now is, and the search should be asked again.

        A candidate the caller may not read is dropped without a trace: counting it, under any
        reason, would tell the caller that somebody else's memory matched the query (I7).
        """
        result = RecallResult()
        memories = uow.memories.get_many([c.memory_id for c in candidates])
        scopes = {m.scope for m in memories.values()}
        if searched is None:
            readable = self._policy.readable(uow, identity, scopes)
        else:
            result.visibility = self._policy.visibility(uow, identity)
            readable = self._policy.readable_within(identity, scopes, result.visibility)
        seen: set[str] = set()
        for candidate in candidates:
            memory = memories.get(candidate.memory_id)
            if memory is not None and memory.scope not in readable:
                continue
            result.candidate_count += 1
            reason, applicable = self._reject_reason(memory, candidate, instant, hint)
            if reason is None and within is not None and memory is not None:
                reason = None if _inside(memory, within) else DropReason.OUT_OF_SCOPE
            if reason is not None:
                result.dropped[reason] += 1
                continue
            assert memory is not None
            if memory.id in seen or len(result.recalled) >= limit:
                continue
            seen.add(memory.id)
            result.recalled.append((show_memory(memory, instant, applicable), candidate.score))
        return result

    @staticmethod
    def _reject_reason(
        memory: Memory | None, candidate: Candidate, instant: datetime, hint: ScopeHint
    ) -> tuple[DropReason | None, Revision | None]:
        """Why the candidate is dropped (None: kept), and the revision that applies."""
        if memory is None:
            return DropReason.NOT_FOUND, None  # includes ids of other tenants: the query is scoped
        if memory.deleted:
            return DropReason.DELETED, None
        if not hint.admits(memory):
            return DropReason.OUT_OF_SCOPE, None
        applicable = rules.applicable_revision(memory, instant)
        if applicable is None:
            return DropReason.NOT_APPLICABLE, None
        if applicable.number != candidate.revision_number:
            # the index matched text that no longer applies
            return DropReason.STALE_REVISION, applicable
        return None, applicable


def _within(
    scope_type: ScopeType, scope_id: str, visible: frozenset[str] | None
) -> list[tuple[str, str]] | None:
    """One requested scope type (and maybe id) narrowed to the visible ids of that type."""
    if visible is None:
        return [(scope_type.value, scope_id)]
    ids = sorted(visible & {scope_id}) if scope_id else sorted(visible)
    if not ids:
        return None
    if len(ids) > MAX_SCOPE_FILTERS:
        return [(scope_type.value, "")]  # validation still drops what the caller may not read
    return [(scope_type.value, i) for i in ids]


def _inside(memory: Memory, within: Visibility) -> bool:
    if memory.scope.type is ScopeType.USER:
        return within.user_ids is None or memory.scope.id in within.user_ids
    if memory.scope.type is ScopeType.CUSTOMER:
        return within.customer_ids is None or memory.scope.id in within.customer_ids
    return within.organization
