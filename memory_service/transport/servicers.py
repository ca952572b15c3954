"""gRPC servicers: authenticate, convert, run the use case, convert back. Nothing else."""

from __future__ import annotations

import functools
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, NoReturn, TypeVar

import grpc
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import access_service_pb2_grpc as access_grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import memory_service_pb2_grpc as service_grpc
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb
from crmmem.memory.v1 import transcript_service_pb2_grpc as transcript_grpc
from opentelemetry import metrics, trace

from crmmem_runtime.telemetry import failure_summary
from memory_service.app.access import (
    AccessCommands,
    AccessQueries,
    TranscriptCommands,
    TranscriptQueries,
)
from memory_service.app.memories import MemoryCommands, MemoryQueries
from memory_service.app.recall import RecallMemories
from memory_service.app.review import ReviewCommands, ReviewQueries
from memory_service.domain import names
from memory_service.domain.errors import DeadlineExceeded, DomainError, InvalidArgument
from memory_service.domain.etags import parse_etag
from memory_service.domain.export import SCHEMA_ID
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import SearchUnavailable
from memory_service.transport import convert
from memory_service.transport import review_servicer as review_rpcs
from memory_service.transport.auth import TokenAuthenticator
from memory_service.transport.deadline import caller_deadline
from memory_service.transport.edge import check_request
from memory_service.transport.errors import internal_status, to_status
from memory_service.transport.idempotency import request_key
from memory_service.transport.paging import ID, KEY_PURPOSE, ORDINAL, PageTokens

log = logging.getLogger(__name__)
rpc_duration = metrics.get_meter("memory_service").create_histogram(
    "crmmem.rpc.duration", unit="s", description="server-side duration of each RPC"
)
# Memories read per transaction, and the text sent per message: a stream of small messages, so
# neither side holds a large tenant's export (and messages stay under the 4 MiB client default).
EXPORT_MESSAGE_CHARS = 1024 * 1024
# Longest one export chunk may wait for the client to read (gRPC flow control): a client that
# stops reading has its call cancelled, so it cannot hold an export thread for ever.
EXPORT_SEND_SECONDS = 30.0
Req = TypeVar("Req")
Resp = TypeVar("Resp")
T = TypeVar("T")
Handler = Callable[[Any, Req, grpc.ServicerContext, Identity], Resp]


class _Call:
    """One RPC as the metrics and error path see it, from the handler's start to its last
    streamed message: unary and streaming calls end in the same place."""

    def __init__(self, name: str, context: grpc.ServicerContext) -> None:
        self.name = name
        self.context = context
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
            status = to_status(error)
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
        call = _Call(handler.__name__, context)
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


class ServicerBase:
    """What every servicer shares: one authenticator and one page-token signer. A servicer
    holds app entries (`memory_service/app/`), never a unit of work or a domain use case."""

    def __init__(self, authenticator: TokenAuthenticator) -> None:
        self.authenticator = authenticator
        self.pages = PageTokens(authenticator.derived_key(KEY_PURPOSE))


def as_of_instant(request: Any) -> datetime:
    return convert.to_time(request, "as_of", "as_of") or utcnow()


class MemoryServicer(ServicerBase, service_grpc.MemoryServiceServicer):
    def __init__(
        self,
        authenticator: TokenAuthenticator,
        commands: MemoryCommands,
        queries: MemoryQueries,
        recall: RecallMemories,
        review_commands: ReviewCommands,
        review_queries: ReviewQueries,
    ) -> None:
        super().__init__(authenticator)
        self.commands = commands
        self.queries = queries
        self.recall = recall
        self.review_commands = review_commands
        self.review_queries = review_queries

    # Document facts and the review queue: transport/review_servicer.py.
    @rpc
    def ReportDocumentVersion(
        self,
        request: service_pb.ReportDocumentVersionRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ReportDocumentVersionResponse:
        return review_rpcs.report_document_version(self, request, identity)

    @rpc
    def ListReviewItems(
        self,
        request: service_pb.ListReviewItemsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ListReviewItemsResponse:
        return review_rpcs.list_review_items(self, request, identity)

    @rpc
    def ResolveConflict(
        self,
        request: service_pb.ResolveConflictRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ResolveConflictResponse:
        return review_rpcs.resolve_conflict(self, request, identity)

    @rpc
    def CreateMemory(
        self,
        request: service_pb.CreateMemoryRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.CreateMemoryResponse:
        command = convert.create_command(request)
        return self.commands.create(
            identity,
            request_key("CreateMemory", request, service_pb.CreateMemoryResponse),
            command,
            convert.changed(service_pb.CreateMemoryResponse),
        )

    @rpc
    def BatchCreateMemories(
        self,
        request: service_pb.BatchCreateMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.BatchCreateMemoriesResponse:
        commands = convert.batch(request.requests, convert.create_command)
        return self.commands.batch_create(
            identity,
            request_key("BatchCreateMemories", request, service_pb.BatchCreateMemoriesResponse),
            commands,
            convert.batch_created,
        )

    @rpc
    def GetMemory(
        self,
        request: service_pb.GetMemoryRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.GetMemoryResponse:
        memory_id = names.parse_memory(request.name)
        instant = as_of_instant(request)
        memory = self.queries.get(identity, memory_id)
        return service_pb.GetMemoryResponse(memory=convert.memory_proto(memory, instant))

    @rpc
    def ListMemories(
        self,
        request: service_pb.ListMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ListMemoriesResponse:
        page = self.pages.page(request, identity, [ID])
        memory_filter = convert.memory_filter(request)
        instant = as_of_instant(request)
        after = page.cursor("")
        memories = self.queries.memories(identity, memory_filter, after, page.fetch, instant)
        shown, token = page.respond(memories, lambda m: (m.id,))
        return service_pb.ListMemoriesResponse(
            memories=[convert.memory_proto(m, instant) for m in shown], next_page_token=token
        )

    @rpc
    def CorrectMemory(
        self,
        request: service_pb.CorrectMemoryRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.CorrectMemoryResponse:
        memory_id = names.parse_memory(request.name)
        expected = parse_etag(request.etag, required=True)
        if not request.HasField("revision"):
            raise InvalidArgument("revision", "is required")
        draft = convert.revision_draft(request.revision)
        assert expected is not None
        return self.commands.correct(
            identity,
            request_key("CorrectMemory", request, service_pb.CorrectMemoryResponse),
            memory_id,
            expected,
            draft,
            convert.changed(service_pb.CorrectMemoryResponse),
        )

    @rpc
    def ConfirmMemoryRevision(
        self,
        request: service_pb.ConfirmMemoryRevisionRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ConfirmMemoryRevisionResponse:
        memory_id, number = names.parse_revision(request.name)
        expected = parse_etag(request.etag, required=False)
        return self.commands.confirm(
            identity,
            request_key("ConfirmMemoryRevision", request, service_pb.ConfirmMemoryRevisionResponse),
            memory_id,
            number,
            expected,
            request.transcript_message,
            convert.changed(service_pb.ConfirmMemoryRevisionResponse),
        )

    @rpc
    def RejectMemoryRevision(
        self,
        request: service_pb.RejectMemoryRevisionRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.RejectMemoryRevisionResponse:
        memory_id, number = names.parse_revision(request.name)
        expected = parse_etag(request.etag, required=False)
        return self.commands.reject(
            identity,
            request_key("RejectMemoryRevision", request, service_pb.RejectMemoryRevisionResponse),
            memory_id,
            number,
            expected,
            convert.changed(service_pb.RejectMemoryRevisionResponse),
        )

    @rpc
    def ListMemoryRevisions(
        self,
        request: service_pb.ListMemoryRevisionsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ListMemoryRevisionsResponse:
        memory_id = names.parse_memory(request.parent, "parent")
        page = self.pages.page(request, identity, [ORDINAL])
        after_number = page.cursor(0)
        revisions = self.queries.revisions(identity, memory_id, after_number, page.fetch)
        now = utcnow()
        shown, token = page.respond(revisions, lambda r: (r.number,))
        return service_pb.ListMemoryRevisionsResponse(
            revisions=[convert.revision_proto(r, now) for r in shown], next_page_token=token
        )

    @rpc
    def DeleteMemory(
        self,
        request: service_pb.DeleteMemoryRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.DeleteMemoryResponse:
        memory_id = names.parse_memory(request.name)
        expected = parse_etag(request.etag, required=False)
        return self.commands.delete(
            identity,
            request_key("DeleteMemory", request, service_pb.DeleteMemoryResponse),
            memory_id,
            expected,
            lambda memory, receipt, now: service_pb.DeleteMemoryResponse(
                memory=convert.memory_proto(memory, now),
                purged_revision_count=len(memory.revisions),
                receipt=convert.receipt_proto(receipt),
            ),
        )

    @rpc
    def RecallMemories(
        self,
        request: service_pb.RecallMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.RecallMemoriesResponse:
        query = convert.recall_query(request.query)
        limit = convert.recall_limit(request.limit)
        hint = convert.scope_hint(request.scope_type, request.scope_id)
        instant = as_of_instant(request)
        outcome = self.recall(identity, query, limit, instant, caller_deadline(context), hint)
        if isinstance(outcome, SearchUnavailable):
            return service_pb.RecallMemoriesResponse(degraded=True, degraded_reason=outcome.reason)
        response = service_pb.RecallMemoriesResponse(dropped=convert.dropped_protos(outcome))
        convert.add_recalled(response.memories, outcome, instant)
        return response

    @rpc
    def ExportMemories(
        self,
        request: service_pb.ExportMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> Iterator[service_pb.ExportMemoriesResponse]:
        user_id = names.parse_export_parent(request.parent)
        since = convert.to_time(request, "since", "since")
        records = self.queries.export(identity, user_id, request.include_deleted, since)

        def chunks() -> Iterator[service_pb.ExportMemoriesResponse]:
            lines: list[str] = []
            size = 0
            for record in records:
                line = json.dumps(record, ensure_ascii=False, sort_keys=True)
                if lines and size + len(line) > EXPORT_MESSAGE_CHARS:
                    yield service_pb.ExportMemoriesResponse(schema=SCHEMA_ID, lines=lines)
                    lines, size = [], 0
                lines.append(line)
                size += len(line)
            yield service_pb.ExportMemoriesResponse(schema=SCHEMA_ID, lines=lines)

        return sent_within(EXPORT_SEND_SECONDS, context, chunks())

    @rpc
    def ReindexMemories(
        self,
        request: service_pb.ReindexMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ReindexMemoriesResponse:
        return self.commands.reindex(
            identity,
            request_key("ReindexMemories", request, service_pb.ReindexMemoriesResponse),
            lambda queued: service_pb.ReindexMemoriesResponse(queued_count=queued),
        )


def sent_within(
    seconds: float, context: grpc.ServicerContext, responses: Iterator[T]
) -> Iterator[T]:
    """`responses`, cancelling the call when gRPC takes longer than `seconds` to send one.

    gRPC asks for the next response only once the last is sent, and sending waits while the
    client reads nothing, with no deadline of its own: without this a client that stops
    reading holds the call's thread for as long as it keeps the connection open."""
    for response in responses:
        timer = threading.Timer(seconds, _cancel_stalled, (context,))
        timer.daemon = True
        timer.start()
        try:
            yield response
        finally:
            timer.cancel()


def _cancel_stalled(context: grpc.ServicerContext) -> None:
    log.warning("cancelling a stream whose client stopped reading")
    context.cancel()  # type: ignore[no-untyped-call]


class TranscriptServicer(ServicerBase, transcript_grpc.TranscriptServiceServicer):
    def __init__(
        self,
        authenticator: TokenAuthenticator,
        commands: TranscriptCommands,
        queries: TranscriptQueries,
    ) -> None:
        super().__init__(authenticator)
        self.commands = commands
        self.queries = queries

    @rpc
    def AppendMessage(
        self,
        request: transcript_pb.AppendMessageRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.AppendMessageResponse:
        conversation_id, message = convert.append_input(request)
        return self.commands.append(
            identity,
            request_key("AppendMessage", request, transcript_pb.AppendMessageResponse),
            conversation_id,
            message,
            lambda message: transcript_pb.AppendMessageResponse(
                message=convert.message_proto(message)
            ),
        )

    @rpc
    def BatchAppendMessages(
        self,
        request: transcript_pb.BatchAppendMessagesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.BatchAppendMessagesResponse:
        messages = convert.batch(request.requests, convert.append_input)
        return self.commands.batch_append(
            identity,
            request_key("BatchAppendMessages", request, transcript_pb.BatchAppendMessagesResponse),
            messages,
            lambda appended: transcript_pb.BatchAppendMessagesResponse(
                messages=[convert.message_proto(m) for m in appended]
            ),
        )

    @rpc
    def ListMessages(
        self,
        request: transcript_pb.ListMessagesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.ListMessagesResponse:
        conversation_id = names.parse_conversation(request.parent)
        page = self.pages.page(request, identity, [ORDINAL])
        after = page.cursor(0)
        messages = self.queries.messages(identity, conversation_id, after, page.fetch)
        shown, token = page.respond(messages, lambda m: (m.sequence,))
        return transcript_pb.ListMessagesResponse(
            messages=[convert.message_proto(m) for m in shown], next_page_token=token
        )

    @rpc
    def GetMessage(
        self,
        request: transcript_pb.GetMessageRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.GetMessageResponse:
        conversation_id, message_id = names.parse_message(request.name, "name")
        message = self.queries.get(identity, conversation_id, message_id)
        return transcript_pb.GetMessageResponse(message=convert.message_proto(message))


class AccessServicer(ServicerBase, access_grpc.AccessServiceServicer):
    def __init__(
        self, authenticator: TokenAuthenticator, commands: AccessCommands, queries: AccessQueries
    ) -> None:
        super().__init__(authenticator)
        self.commands = commands
        self.queries = queries

    @rpc
    def GetCaller(
        self, request: access_pb.GetCallerRequest, context: grpc.ServicerContext, identity: Identity
    ) -> access_pb.GetCallerResponse:
        return access_pb.GetCallerResponse(
            tenant_id=identity.tenant_id, user_id=identity.user_id, roles=sorted(identity.roles)
        )

    @rpc
    def GrantCustomerAccess(
        self,
        request: access_pb.GrantCustomerAccessRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GrantCustomerAccessResponse:
        user_id = convert.subject_id(request.user_id, "user_id", required=True)
        customer_id = convert.subject_id(request.customer_id, "customer_id", required=True)

        return self.commands.grant(
            identity,
            request_key("GrantCustomerAccess", request, access_pb.GrantCustomerAccessResponse),
            user_id,
            customer_id,
            lambda grant: access_pb.GrantCustomerAccessResponse(grant=convert.grant_proto(grant)),
        )

    @rpc
    def RevokeCustomerAccess(
        self,
        request: access_pb.RevokeCustomerAccessRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.RevokeCustomerAccessResponse:
        user_id, customer_id = names.parse_grant(request.name)

        return self.commands.revoke(
            identity,
            request_key("RevokeCustomerAccess", request, access_pb.RevokeCustomerAccessResponse),
            user_id,
            customer_id,
            lambda revoked: access_pb.RevokeCustomerAccessResponse(revoked=revoked),
        )

    @rpc
    def RegisterCustomer(
        self,
        request: access_pb.RegisterCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.RegisterCustomerResponse:
        customer_id = convert.subject_id(
            request.customer.customer_id, "customer.customer_id", required=True
        )
        display_name = request.customer.display_name.strip()
        if not display_name:
            raise InvalidArgument("customer.display_name", "is required")

        return self.commands.register_customer(
            identity,
            request_key("RegisterCustomer", request, access_pb.RegisterCustomerResponse),
            customer_id,
            display_name,
            lambda customer: access_pb.RegisterCustomerResponse(
                customer=convert.customer_proto(customer)
            ),
        )

    @rpc
    def ListCustomerGrants(
        self,
        request: access_pb.ListCustomerGrantsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.ListCustomerGrantsResponse:
        user_id = convert.subject_id(request.user_id, "user_id", required=False)
        page = self.pages.page(request, identity, [ID, ID])
        cursor = (page.after[0], page.after[1]) if page.after else ("", "")
        grants = self.queries.grants(identity, user_id, cursor, page.fetch)
        shown, token = page.respond(grants, lambda g: (g.user_id, g.customer_id))
        return access_pb.ListCustomerGrantsResponse(
            grants=[convert.grant_proto(g) for g in shown], next_page_token=token
        )

    @rpc
    def GetCustomerGrant(
        self,
        request: access_pb.GetCustomerGrantRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GetCustomerGrantResponse:
        user_id, customer_id = names.parse_grant(request.name)
        grant = self.queries.grant(identity, user_id, customer_id)
        return access_pb.GetCustomerGrantResponse(grant=convert.grant_proto(grant))

    @rpc
    def GetCustomer(
        self,
        request: access_pb.GetCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GetCustomerResponse:
        customer_id = names.parse_customer(request.name)
        customer = self.queries.customer(identity, customer_id)
        return access_pb.GetCustomerResponse(customer=convert.customer_proto(customer))

    @rpc
    def ListCustomers(
        self,
        request: access_pb.ListCustomersRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.ListCustomersResponse:
        page = self.pages.page(request, identity, [ID])
        after = page.cursor("")
        customers = self.queries.customers(identity, after, page.fetch)
        shown, token = page.respond(customers, lambda c: (c.customer_id,))
        return access_pb.ListCustomersResponse(
            customers=[convert.customer_proto(c) for c in shown], next_page_token=token
        )

    @rpc
    def DeleteCustomer(
        self,
        request: access_pb.DeleteCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.DeleteCustomerResponse:
        customer_id = names.parse_customer(request.name)

        return self.commands.delete_customer(
            identity,
            request_key("DeleteCustomer", request, access_pb.DeleteCustomerResponse),
            customer_id,
            lambda customer: access_pb.DeleteCustomerResponse(
                customer=convert.customer_proto(customer)
            ),
        )
