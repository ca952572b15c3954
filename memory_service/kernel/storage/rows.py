"""What every repository shares in reading rows back: how many ids go in one IN list, the
stored values of each enum back to its members, one shared value per scope, and the copy
between a record and a row whose columns are named after its fields.

Kept apart from the repositories so that each of them (and `imports/storage/archive.py`, which
decodes what they store) reads a stored value the same way."""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Any, TypeVar

from memory_service.kernel.domain.model import (
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

R = TypeVar("R")
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


_FIELDS: dict[type, tuple[tuple[str, type[enum.Enum] | None], ...]] = {}


def _fields(record_type: type) -> tuple[tuple[str, type[enum.Enum] | None], ...]:
    """Each field of a record type, with its enum type where it holds one (stored as its value)."""
    known = _FIELDS.get(record_type)
    if known is None:
        hints = typing.get_type_hints(record_type)
        known = _FIELDS[record_type] = tuple(
            (
                field.name,
                hint
                if isinstance(hint := hints[field.name], type) and issubclass(hint, enum.Enum)
                else None,
            )
            for field in dataclasses.fields(record_type)
        )
    return known


def stored(record: Any, *leave_out: str) -> dict[str, Any]:
    """The columns of a record whose table names them after its fields (imports, tasks): one
    copy, so a field added to the record cannot be left out of one direction only."""
    return {
        name: value if enum_type is None else value.value
        for name, enum_type in _fields(type(record))
        if name not in leave_out
        for value in (getattr(record, name),)
    }


def loaded(record_type: type[R], row: Any, **given: Any) -> R:
    """The record read back from such a row; `given` holds the fields that are not columns."""
    values = dict(given)
    for name, enum_type in _fields(record_type):
        if name not in given:
            value = getattr(row, name)
            values[name] = value if enum_type is None else enum_type(value)
    return record_type(**values)
