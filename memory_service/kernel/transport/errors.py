"""The one place where failures become gRPC statuses (AIP-193): a code, an ErrorInfo reason a
client can switch on, field violations for bad requests, and never a stack trace."""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message as ProtoMessage
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from memory_service.kernel.domain.errors import (
    Aborted,
    AlreadyExists,
    DeadlineExceeded,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Reason,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from memory_service.kernel.domain.model import Memory

ERROR_DOMAIN = "crmmem.memory.v1"
log = logging.getLogger("memory_service.transport.errors")

_CODES: list[tuple[type[DomainError], int]] = [
    (InvalidArgument, code_pb2.INVALID_ARGUMENT),
    (NotFound, code_pb2.NOT_FOUND),
    (AlreadyExists, code_pb2.ALREADY_EXISTS),
    (Aborted, code_pb2.ABORTED),
    (PermissionDenied, code_pb2.PERMISSION_DENIED),
    (FailedPrecondition, code_pb2.FAILED_PRECONDITION),
    (Unauthenticated, code_pb2.UNAUTHENTICATED),
    (DeadlineExceeded, code_pb2.DEADLINE_EXCEEDED),
    (Unavailable, code_pb2.UNAVAILABLE),
    (ResourceExhausted, code_pb2.RESOURCE_EXHAUSTED),
]


def _code_for(error: DomainError) -> int:
    for error_type, code in _CODES:
        if isinstance(error, error_type):
            return code
    return int(code_pb2.INTERNAL)


def _packed(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


# How a servicer shows the memory an ABORTED answer carries (the memories slice presents it).
CurrentDetail = Callable[[Memory], ProtoMessage | None]


def to_status(error: DomainError, current_detail: CurrentDetail | None = None) -> grpc.Status:
    """The error's status; an ABORTED one carries the current memory, as `current_detail`
    shows it, so the caller can retry without another read."""
    status = status_pb2.Status(code=_code_for(error), message=error.message)
    info = error_details_pb2.ErrorInfo(
        reason=error.reason.name, domain=ERROR_DOMAIN, metadata=error.metadata
    )
    status.details.append(_packed(info))
    if isinstance(error, InvalidArgument):
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=violation.field, description=violation.description
                )
                for violation in error.violations
            ]
        )
        status.details.append(_packed(bad_request))
    if isinstance(error, Aborted) and error.current is not None and current_detail is not None:
        detail = current_detail(error.current)
        if detail is not None:
            status.details.append(_packed(detail))
    return rpc_status.to_status(status)


def internal_status(trace_id: str) -> grpc.Status:
    status = status_pb2.Status(
        code=code_pb2.INTERNAL,
        message=f"internal error; nothing was changed (trace {trace_id or 'unknown'})",
    )
    status.details.append(
        _packed(error_details_pb2.ErrorInfo(reason=Reason.INTERNAL.name, domain=ERROR_DOMAIN))
    )
    return rpc_status.to_status(status)
