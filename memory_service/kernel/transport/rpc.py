"""What every servicer shares: the `rpc` decorator (authentication, deadline check, span
attributes, metrics and error mapping for unary and streaming calls) and `ServicerBase`.

Every servicer (memory, transcript, access, context, import, task) goes through this one path,
so each slice's servicer module holds only its own calls."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf.message import Message as ProtoMessage
from opentelemetry import metrics, trace

from crmmem_runtime.telemetry import failure_summary
from memory_service.kernel.domain.errors import DeadlineExceeded, DomainError
from memory_service.kernel.domain.model import Identity, Memory, utcnow
from memory_service.kernel.transport.auth import TokenAuthenticator
from memory_service.kernel.transport.edge import check_request
from memory_service.kernel.transport.errors import CurrentDetail, internal_status, to_status
from memory_service.kernel.transport.fields import to_time
from memory_service.kernel.transport.paging import KEY_PURPOSE, PageTokens

log = logging.getLogger("memory_service.transport.rpc")
rpc_duration = metrics.get_meter("memory_service").create_histogram(
    "crmmem.rpc.duration", unit="s", description="server-side duration of each RPC"
)
Req = TypeVar("Req")
Resp = TypeVar("Resp")
T = TypeVar("T")
Handler = Callable[[Any, Req, grpc.ServicerContext, Identity], Resp]


class _Call:
    """One RPC as the metrics and error path see it, from the handler's start to its last
    streamed message: unary and streaming calls end in the same place."""

    def __init__(
        self, name: str, context: grpc.ServicerContext, current_detail: CurrentDetail
    ) -> None:
        self.name = name
        self.context = context
        self.current_detail = current_detail
        self.span = trace.get_current_span()
        self.span.set_attribute("crmmem.rpc", name)
        self.started = time.perf_counter()

    def done(self, outcome: str = "OK") -> None:
        rpc_duration.record(
            time.perf_counter() - self.started, {"rpc": self.name, "outcome": outcome}
        )

    def fail(self, error: Exception) -> NoReturn:
        """Maps the failure to its status (INTERNAL, with the trace id, for anything that is
        not a DomainError), records the outcome and aborts the call."""
        if isinstance(error, DomainError):
            self.span.set_attribute("crmmem.error_reason", error.reason.name)
            status = to_status(error, self.current_detail)
            outcome = error.reason.name
        else:
            trace_id = failure_id(self.span)
            log.error(
                "unexpected failure in %s (trace %s): %s",
                self.name,
                trace_id,
                failure_summary(error),
            )
            status = internal_status(trace_id)
            outcome = "INTERNAL"
        self.done(outcome)
        self.context.set_code(status.code)  # lets the tracing interceptor record the status
        self.context.set_details(status.details)
        self.context.abort_with_status(status)
        raise AssertionError("abort_with_status returns only by raising")

    def stream(self, messages: Iterator[T]) -> Iterator[T]:
        """A server stream whose failures while streaming take the same path as a unary
        call's; a caller that goes away mid-stream is counted as CANCELLED."""
        try:
            yield from messages
        except GeneratorExit:
            self.done("CANCELLED")
            raise
        except Exception as error:
            self.fail(error)
        self.done()


def failure_id(span: trace.Span) -> str:
    """What an INTERNAL answer and its log line both quote: the call's trace id, or, with no
    server span (traces not exported), a random id of the same form, so the caller's report
    still finds the log line."""
    context = span.get_span_context()
    return format(context.trace_id if context.is_valid else random.getrandbits(128), "032x")


def rpc(handler: Handler[Req, Resp]) -> Callable[[Any, Req, grpc.ServicerContext], Resp]:
    """Authentication, deadline check, span attributes, metrics and error mapping for every
    method, streaming ones included (a handler that returns an iterator streams)."""

    @functools.wraps(handler)
    def wrapper(self: Any, request: Req, context: grpc.ServicerContext) -> Resp:
        call = _Call(handler.__name__, context, self.shown_current)
        try:
            remaining = context.time_remaining()
            if remaining is not None and remaining <= 0:
                raise DeadlineExceeded("the deadline passed before the call was handled")
            identity = self.authenticator.authenticate(context)
            call.span.set_attribute("crmmem.tenant_id", identity.tenant_id)
            check_request(request)  # type: ignore[arg-type]
            response = handler(self, request, context, identity)
        except Exception as error:
            call.fail(error)
        if isinstance(response, Iterator):
            return call.stream(response)  # type: ignore[return-value]
        call.done()
        return response

    return wrapper


@dataclass(eq=False)
class ServicerBase:
    """What every servicer shares: one authenticator and one page-token signer. A servicer
    is a dataclass of its app entries (`memory_service/<slice>/app/`), which follow the
    authenticator in its constructor; never a unit of work or a domain use case."""

    authenticator: TokenAuthenticator
    pages: PageTokens = field(init=False)

    def __post_init__(self) -> None:
        self.pages = PageTokens(self.authenticator.derived_key(KEY_PURPOSE))

    def shown_current(self, memory: Memory) -> ProtoMessage | None:
        """The current memory an ABORTED answer carries, as this service shows it: nothing
        here; the services whose calls write memories show it as the memories slice does
        (`memories.public.ShowsCurrentMemory`)."""
        return None


def as_of_instant(request: Any) -> datetime:
    return to_time(request, "as_of", "as_of") or utcnow()
