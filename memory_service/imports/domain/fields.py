"""Reading the fields of one line of this service's export (docs/export-format.md): each
reader returns the field checked for presence, JSON type and the API's rule for it (ids,
lengths, NUL, numbers, RFC 3339 times, enum members, content hashes, secrets), or raises an
ArchiveError naming the field's path. restore.py builds the records from them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from memory_service.exports.public import content_hash
from memory_service.imports.domain.parsers import ArchiveError, stored
from memory_service.kernel.domain import rules
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.secrets import SecretDetector

MEMORY_ID = re.compile(rules.MEMORY_ID)  # fullmatch only
SUBJECT_RULE = "must be 1-128 characters of [A-Za-z0-9._@:-]"


def get_typed(record: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str) -> Any:
    if key not in record:
        raise ArchiveError(f"{path}.{key}", "is missing")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ArchiveError(f"{path}.{key}", "has the wrong type")
    return value


def get_text(
    record: dict[str, Any], key: str, path: str, max_chars: int = rules.MAX_ID_CHARS
) -> str:
    value: str = get_typed(record, key, str, path)
    return stored(value, f"{path}.{key}", max_chars)


def get_subject(record: dict[str, Any], key: str, path: str) -> str:
    """User and customer ids follow the API's rule for them."""
    value: str = get_typed(record, key, str, path)
    if not rules.SUBJECT_ID_PATTERN.fullmatch(value):
        raise ArchiveError(f"{path}.{key}", SUBJECT_RULE)
    return value


def get_id(record: dict[str, Any], key: str, path: str, *, optional: bool = False) -> str:
    value: str = get_typed(record, key, str, path)
    if optional and not value:
        return ""
    if not MEMORY_ID.fullmatch(value):
        raise ArchiveError(f"{path}.{key}", "is not an id of this service (32 hex digits)")
    return value


def get_number(record: dict[str, Any], key: str, path: str, low: int, high: int) -> int:
    value: int = get_typed(record, key, int, path)
    if not low <= value <= high:
        raise ArchiveError(f"{path}.{key}", f"must be between {low} and {high}")
    return value


def get_optional_number(record: dict[str, Any], key: str, path: str, low: int, high: int) -> int:
    """Lineage numbers: null for none."""
    if record.get(key) is None:
        get_typed(record, key, (int, type(None)), path)
        return 0
    return get_number(record, key, path, low, high)


def get_time(record: dict[str, Any], key: str, path: str, *, optional: bool) -> datetime | None:
    value = get_typed(record, key, (str, type(None)), path)
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


def get_required_time(record: dict[str, Any], key: str, path: str) -> datetime:
    value = get_time(record, key, path, optional=False)
    assert value is not None
    return value


def get_enum(record: dict[str, Any], key: str, enum: type[Any], path: str) -> Any:
    value = get_typed(record, key, str, path)
    try:
        return enum(value)
    except ValueError:
        raise ArchiveError(f"{path}.{key}", f"unknown value {value!r}") from None


def get_object(record: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value: dict[str, Any] = get_typed(record, key, dict, path)
    return value


def check_content_hash(record: dict[str, Any], text: str, path: str) -> None:
    """The content hash is checked, so an edited text does not pass as the exported one."""
    given = get_typed(record, "content_hash", (str, type(None)), path)
    expected = content_hash(text) if text else None
    if given != expected:
        raise ArchiveError(f"{path}.content_hash", "does not match the content")


def archive_error(error: InvalidArgument) -> ArchiveError:
    violation = error.violations[0]
    return ArchiveError(violation.field, violation.description)


def refuse_secret(text: str, path: str, secrets: SecretDetector | None) -> None:
    """The one secret rule holds for restores too: the batch fails, naming where, not what.
    None: the archive was already checked (a later pass writing it)."""
    found = secrets.kind(text) if secrets is not None else ""
    if found:
        raise ArchiveError(path, f"contains a secret ({found}); nothing was restored")
