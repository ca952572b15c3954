"""What every repository shares in reading rows back: how many ids go in one IN list, the
stored values of each enum back to its members, and one shared value per scope.

Kept apart from the repositories so that each of them (and `storage/archive.py`, which decodes
what they store) reads a stored value the same way."""

from __future__ import annotations

from memory_service.domain.model import (
    EvidenceType,
    MemoryKind,
    ParentType,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
)

IN_CLAUSE_CHUNK = 500
# Stored values to their enum members: a dict lookup where calling the enum costs a few times
# more, for every row of a context.
STATUSES = {member.value: member for member in RevisionStatus}
SPEAKERS = {member.value: member for member in Speaker}
METHODS = {member.value: member for member in ProvenanceMethod}
EVIDENCE_TYPES = {member.value: member for member in EvidenceType}
SCOPE_TYPES = {member.value: member for member in ScopeType}
KINDS = {member.value: member for member in MemoryKind}
TURN_STATUSES = {member.value: member for member in TurnStatus}
PARENT_TYPES = {member.value: member for member in ParentType}

# Scopes are frozen values: one object for each one read, not one per memory read (a context
# builds a few dozen, each a frozen dataclass's slow __init__). Bounded: cleared when full.
_scopes: dict[tuple[str, str], Scope] = {}
_MAX_SCOPES = 10_000


def scope_of(scope_type: str, scope_id: str) -> Scope:
    scope = _scopes.get((scope_type, scope_id))
    if scope is None:
        if len(_scopes) >= _MAX_SCOPES:
            _scopes.clear()
        scope = _scopes[(scope_type, scope_id)] = Scope(SCOPE_TYPES[scope_type], scope_id)
    return scope
