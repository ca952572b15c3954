"""Domain failures. The transport maps each class to one gRPC code and its reason to ErrorInfo.

`Reason` is the `crmmem.memory.v1.ErrorReason` enum of `error_reason.proto`, member for member
and number for number (a unit test compares them both ways); docs/errors.md says what a client
does with each.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_service.kernel.domain.model import Memory


class Reason(enum.IntEnum):
    """Values of `google.rpc.ErrorInfo.reason`: the proto's names without the `ERROR_REASON_`
    prefix, with the proto's numbers."""

    FIELD_INVALID = 1
    EVIDENCE_NOT_FOUND = 2
    QUOTE_NOT_IN_EVIDENCE = 3
    SPEAKER_MISMATCH = 4
    REQUEST_ID_REUSED = 5
    ETAG_MISMATCH = 6
    NOT_FOUND = 7
    MEMORY_EXISTS = 8
    TOKEN_INVALID = 9
    ROLE_REQUIRED = 10
    WRITE_NOT_ALLOWED = 11
    NOT_CANDIDATE = 12
    SUBJECT_CONFIRMATION_REQUIRED = 13
    MEMORY_DELETED = 14
    DEADLINE_EXCEEDED = 15
    INTERNAL = 16
    SEARCH_UNAVAILABLE = 17
    STALE_EVIDENCE = 18
    UNGROUNDED = 19
    SECRET_DETECTED = 20
    TOO_MANY_PENDING_IMPORTS = 21
    DATABASE_UNAVAILABLE = 22
    OUTCOME_UNKNOWN = 23
    TENANT_NOT_EMPTY = 24
    NOT_IN_CONFLICT = 25
    TASK_ENDED = 26


class DomainError(Exception):
    """A failure the caller can act on, with the reason a client switches on."""

    reason: Reason = Reason.INTERNAL

    def __init__(
        self,
        message: str,
        *,
        reason: Reason | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.metadata = dict(metadata or {})


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


class InvalidArgument(DomainError):
    reason = Reason.FIELD_INVALID

    def __init__(
        self,
        field: str,
        description: str,
        *,
        reason: Reason | None = None,
        more: list[FieldViolation] | None = None,
    ) -> None:
        super().__init__(f"{field}: {description}", reason=reason, metadata={"field": field})
        self.violations = [FieldViolation(field, description), *(more or [])]


@contextmanager
def batch_item(field: str, index: int) -> Iterator[str]:
    """Runs one item of a batch (AIP-233): a refusal names the item, `requests[3]`, in
    `metadata["request"]` and in front of every field path, so `revision.value` becomes
    `requests[3].revision.value`. Yields the item's path."""
    path = f"{field}[{index}]"
    try:
        yield path
    except DomainError as error:
        error.metadata["request"] = path
        if isinstance(error, InvalidArgument):
            error.violations = [
                FieldViolation(f"{path}.{v.field}", v.description) for v in error.violations
            ]
            error.metadata["field"] = error.violations[0].field
            error.message = f"{path}.{error.message}"
        else:
            error.message = f"{path}: {error.message}"
        raise


class NotFound(DomainError):
    """Missing, or invisible to the caller: both answer identically."""

    reason = Reason.NOT_FOUND

    def __init__(self, resource: str) -> None:
        super().__init__(f"{resource} not found", metadata={"resource": resource})


class AlreadyExists(DomainError):
    reason = Reason.MEMORY_EXISTS


class Aborted(DomainError):
    """A concurrency guard failed; `current` is what the caller should re-read."""

    reason = Reason.ETAG_MISMATCH

    def __init__(self, message: str, current: Memory | None, metadata: dict[str, str]) -> None:
        super().__init__(message, metadata=metadata)
        self.current = current


class PermissionDenied(DomainError):
    reason = Reason.WRITE_NOT_ALLOWED


class FailedPrecondition(DomainError):
    reason = Reason.NOT_CANDIDATE


class Unauthenticated(DomainError):
    reason = Reason.TOKEN_INVALID


class DeadlineExceeded(DomainError):
    reason = Reason.DEADLINE_EXCEEDED


class WriteConflict(Exception):
    """Storage saw a concurrent write (lost a compare-and-swap or a unique index race)."""


class Unavailable(DomainError):
    """A dependency (the search sidecar) cannot be reached; retrying later can succeed."""

    reason = Reason.SEARCH_UNAVAILABLE


class ResourceExhausted(DomainError):
    """A per-caller quota is used up; retrying after the quota frees can succeed."""

    reason = Reason.TOO_MANY_PENDING_IMPORTS


class DatabaseUnavailable(Unavailable):
    """The database did not answer before anything committed: nothing was changed."""

    reason = Reason.DATABASE_UNAVAILABLE

    def __init__(self) -> None:
        super().__init__("the database cannot be reached; nothing was changed; retry")


class OutcomeUnknown(Unavailable):
    """The connection failed while committing, so the write may or may not have been applied.
    A retry with the same request_id is safe: it replays the stored response or applies once."""

    reason = Reason.OUTCOME_UNKNOWN

    def __init__(self) -> None:
        super().__init__(
            "the database connection failed while the write was committing; it may or may not "
            "have been applied: retry with the same request_id"
        )
