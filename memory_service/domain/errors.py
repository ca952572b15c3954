"""Domain failures. The transport maps each class to one gRPC code and its reason to ErrorInfo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_service.domain.model import Memory


class DomainError(Exception):
    """A failure the caller can act on. `reason` is an ErrorReason name without its prefix."""

    reason: str = "INTERNAL"

    def __init__(
        self, message: str, *, reason: str | None = None, metadata: dict[str, str] | None = None
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
    reason = "FIELD_INVALID"

    def __init__(
        self,
        field: str,
        description: str,
        *,
        reason: str | None = None,
        more: list[FieldViolation] | None = None,
    ) -> None:
        super().__init__(f"{field}: {description}", reason=reason, metadata={"field": field})
        self.violations = [FieldViolation(field, description), *(more or [])]


class NotFound(DomainError):
    """Missing, or invisible to the caller: both answer identically."""

    reason = "NOT_FOUND"

    def __init__(self, resource: str) -> None:
        super().__init__(f"{resource} not found", metadata={"resource": resource})


class AlreadyExists(DomainError):
    reason = "MEMORY_EXISTS"


class Aborted(DomainError):
    """A concurrency guard failed; `current` is what the caller should re-read."""

    reason = "ETAG_MISMATCH"

    def __init__(self, message: str, current: Memory | None, metadata: dict[str, str]) -> None:
        super().__init__(message, metadata=metadata)
        self.current = current


class PermissionDenied(DomainError):
    reason = "WRITE_NOT_ALLOWED"


class FailedPrecondition(DomainError):
    reason = "NOT_CANDIDATE"


class Unauthenticated(DomainError):
    reason = "TOKEN_INVALID"


class DeadlineExceeded(DomainError):
    reason = "DEADLINE_EXCEEDED"


class WriteConflict(Exception):
    """Storage saw a concurrent write (lost a compare-and-swap or a unique index race)."""


class Unavailable(DomainError):
    """A dependency (the search sidecar) cannot be reached; retrying later can succeed."""

    reason = "SEARCH_UNAVAILABLE"


class ResourceExhausted(DomainError):
    """A per-caller quota is used up; retrying after the quota frees can succeed."""

    reason = "TOO_MANY_PENDING_IMPORTS"


class DatabaseUnavailable(Unavailable):
    """The database did not answer before anything committed: nothing was changed."""

    reason = "DATABASE_UNAVAILABLE"

    def __init__(self) -> None:
        super().__init__("the database cannot be reached; nothing was changed; retry")


class OutcomeUnknown(Unavailable):
    """The connection failed while committing, so the write may or may not have been applied.
    A retry with the same request_id is safe: it replays the stored response or applies once."""

    reason = "OUTCOME_UNKNOWN"

    def __init__(self) -> None:
        super().__init__(
            "the database connection failed while the write was committing; it may or may not "
            "have been applied: retry with the same request_id"
        )
