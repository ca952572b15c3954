"""Restoring this service's own export into a store (A13): the same ids, revisions, statuses,
provenance and lineage. A restore is a migration between stores of this product, so records
keep their confirmed state; foreign archives go through review instead."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from memory_service.domain import evidence, rules
from memory_service.domain.importing.parsers import MAX_ITEM_CHARS, ArchiveError, stored
from memory_service.domain.model import (
    Confirmation,
    EvidenceRef,
    EvidenceType,
    Memory,
    MemoryKind,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)
from memory_service.domain.rules import KEY_PATTERN, MAX_ID_CHARS
from memory_service.domain.secrets import SecretDetector

MEMORY_ID = re.compile(rules.MEMORY_ID)  # fullmatch only


def _get(record: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str) -> Any:
    if key not in record:
        raise ArchiveError(f"{path}.{key}", "is missing")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ArchiveError(f"{path}.{key}", "has the wrong type")
    return value


def _text(record: dict[str, Any], key: str, path: str, max_chars: int = MAX_ID_CHARS) -> str:
    value: str = _get(record, key, str, path)
    return stored(value, f"{path}.{key}", max_chars)


def _number(record: dict[str, Any], key: str, path: str, low: int) -> int:
    """Revision numbers fit the INTEGER columns and the revision names that show them."""
    value: int = _get(record, key, int, path)
    if not low <= value <= rules.MAX_REVISION_NUMBER:
        raise ArchiveError(
            f"{path}.{key}", f"must be between {low} and {rules.MAX_REVISION_NUMBER}"
        )
    return value


def _time(record: dict[str, Any], key: str, path: str, *, optional: bool) -> datetime | None:
    value = _get(record, key, (str, type(None)), path)
    if value is None:
        if optional:
            return None
        raise ArchiveError(f"{path}.{key}", "is required")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ArchiveError(f"{path}.{key}", "is not an RFC 3339 time") from None
    if parsed.tzinfo is None:
        raise ArchiveError(f"{path}.{key}", "has no time zone")
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before year 1 in UTC
        raise ArchiveError(f"{path}.{key}", "is outside the years 0001 to 9999 in UTC") from None


def _required_time(record: dict[str, Any], key: str, path: str) -> datetime:
    value = _time(record, key, path, optional=False)
    if value is None:
        raise ArchiveError(f"{path}.{key}", "is required")
    return value


def _enum(record: dict[str, Any], key: str, enum: type[Any], path: str) -> Any:
    value = _get(record, key, str, path)
    try:
        return enum(value)
    except ValueError:
        raise ArchiveError(f"{path}.{key}", f"unknown value {value!r}") from None


def to_memory(record: dict[str, Any], tenant_id: str, path: str, secrets: SecretDetector) -> Memory:
    memory_id = _get(record, "id", str, path)
    if not MEMORY_ID.fullmatch(memory_id):
        raise ArchiveError(f"{path}.id", "is not a memory id")
    scope = _get(record, "scope", dict, path)
    key = _get(record, "key", str, path)
    if not KEY_PATTERN.fullmatch(key):
        raise ArchiveError(f"{path}.key", "is not a valid key")
    created = _required_time(record, "create_time", path)
    updated = _required_time(record, "update_time", path)
    memory = Memory(
        id=memory_id,
        tenant_id=tenant_id,
        scope=Scope(
            _enum(scope, "type", ScopeType, f"{path}.scope"),
            _text(scope, "id", f"{path}.scope"),
        ),
        key=key,
        key_context=_text(record, "key_context", path),
        kind=_enum(record, "kind", MemoryKind, path),
        version=1,
        create_time=created,
        update_time=updated,
        delete_time=_time(record, "delete_time", path, optional=True),
        key_hash=stored(str(record.get("key_hash") or ""), f"{path}.key_hash", 64),
    )
    revisions = _get(record, "revisions", list, path)
    if not revisions:
        raise ArchiveError(f"{path}.revisions", "is empty")
    for index, raw in enumerate(revisions):
        revision = _revision(raw, memory.id, f"{path}.revisions[{index}]")
        _refuse_secrets(revision, f"{path}.revisions[{index}]", secrets)
        memory.revisions.append(revision)
    memory.version = len(memory.revisions)
    return memory


def _refuse_secrets(revision: Revision, path: str, secrets: SecretDetector) -> None:
    """The one secret rule holds for restores too: the batch fails, naming where, not what."""
    for field, text in (("value", revision.value), ("provenance.quote", revision.provenance.quote)):
        found = secrets.kind(text)
        if found:
            raise ArchiveError(
                f"{path}.{field}", f"contains a secret ({found}); nothing was restored"
            )


def _revision(raw: Any, memory_id: str, path: str) -> Revision:
    if not isinstance(raw, dict):
        raise ArchiveError(path, "is not an object")
    value = _text(raw, "value", path, MAX_ITEM_CHARS)
    provenance = _get(raw, "provenance", dict, path)
    confirmation = raw.get("confirmation")
    confirmed = None
    if confirmation is not None:
        if not isinstance(confirmation, dict):
            raise ArchiveError(f"{path}.confirmation", "is not an object")
        when = _required_time(confirmation, "confirm_time", f"{path}.confirmation")
        confirmed = Confirmation(_text(confirmation, "user_id", f"{path}.confirmation"), when)
    created = _required_time(raw, "create_time", path)
    return Revision(
        memory_id=memory_id,
        number=_number(raw, "number", path, 1),
        value=value,
        valid_from=_time(raw, "valid_from", path, optional=True),
        valid_until=_time(raw, "valid_until", path, optional=True),
        status=_enum(raw, "status", RevisionStatus, path),
        provenance=Provenance(
            speaker=_enum(provenance, "speaker", Speaker, f"{path}.provenance"),
            method=_enum(provenance, "method", ProvenanceMethod, f"{path}.provenance"),
            evidence=EvidenceRef(
                _enum(provenance, "evidence_type", EvidenceType, f"{path}.provenance"),
                _text(provenance, "evidence", f"{path}.provenance", rules.MAX_EVIDENCE_REF_CHARS),
            ),
            quote=_text(provenance, "quote", f"{path}.provenance", MAX_ITEM_CHARS),
            source_time=_time(provenance, "source_time", f"{path}.provenance", optional=True),
        ),
        create_time=created,
        author_user_id=_text(raw, "author_user_id", path),
        replaces_number=_number(raw, "replaces", path, 0),
        superseded_from=_time(raw, "superseded_from", path, optional=True),
        superseded_by_number=_number(raw, "superseded_by", path, 0),
        confirmation=confirmed,
    )


def restore_staleness(memory: Memory, history: evidence.KeyHistory, now: datetime) -> str:
    """The stale-evidence rule for a restored memory: its newest active revision is the
    evidence. A key deleted here after that was said, or held here by a newer revision,
    keeps what this store has. A restored memory with nothing active brings nothing back."""
    if memory.deleted:
        return ""
    active = [r for r in memory.revisions if r.status is RevisionStatus.ACTIVE]
    if not active:
        return ""
    newest = max(active, key=evidence.said_time)
    return evidence.stale_evidence(
        evidence.said_time(newest), history, newest.value, subject_statement=True, now=now
    )
