"""The memories slice's MemoryService calls: authenticate, convert, run the app entry, convert
back. Document facts and the review queue are MemoryService calls too, served by the review
slice; the wiring joins the two (`memory_service/server.py`, `MemoryService`)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import memory_service_pb2_grpc as service_grpc

from memory_service.exports.public import SCHEMA_ID
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import parse_etag
from memory_service.kernel.domain.model import Identity, utcnow
from memory_service.kernel.domain.ports import SearchUnavailable
from memory_service.kernel.transport.deadline import caller_deadline
from memory_service.kernel.transport.fields import batch, to_time
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ID, ORDINAL
from memory_service.kernel.transport.rpc import ServicerBase, as_of_instant, rpc
from memory_service.memories.app.memories import MemoryCommands, MemoryQueries
from memory_service.memories.app.recall import RecallMemories
from memory_service.memories.transport import convert
from memory_service.memories.transport.convert import ShowsCurrentMemory

log = logging.getLogger("memory_service.transport.memory_servicer")
# Memories read per transaction, and the text sent per message: a stream of small messages, so
# neither side holds a large tenant's export (and messages stay under the 4 MiB client default).
EXPORT_MESSAGE_CHARS = 1024 * 1024
# Longest one export chunk may wait for the client to read (gRPC flow control): a client that
# stops reading has its call cancelled, so it cannot hold an export thread for ever.
EXPORT_SEND_SECONDS = 30.0
T = TypeVar("T")


@dataclass(eq=False)
class MemoryServicer(ShowsCurrentMemory, ServicerBase, service_grpc.MemoryServiceServicer):
    commands: MemoryCommands
    queries: MemoryQueries
    recall: RecallMemories

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
        commands = batch(request.requests, convert.create_command)
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
        memory = self.queries.get(identity, memory_id, instant)
        return service_pb.GetMemoryResponse(memory=convert.shown_memory_proto(memory))

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
        shown, token = page.respond(memories, lambda m: (m.memory.id,))
        return service_pb.ListMemoriesResponse(
            memories=[convert.shown_memory_proto(m) for m in shown], next_page_token=token
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
        revisions = self.queries.revisions(identity, memory_id, after_number, page.fetch, utcnow())
        shown, token = page.respond(revisions, lambda r: (r.revision.number,))
        return service_pb.ListMemoryRevisionsResponse(
            revisions=[convert.shown_revision_proto(r) for r in shown], next_page_token=token
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
            lambda memory, receipt: service_pb.DeleteMemoryResponse(
                memory=convert.shown_memory_proto(memory),
                purged_revision_count=len(memory.memory.revisions),
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
        convert.add_recalled(response.memories, outcome)
        return response

    @rpc
    def ExportMemories(
        self,
        request: service_pb.ExportMemoriesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> Iterator[service_pb.ExportMemoriesResponse]:
        user_id = names.parse_export_parent(request.parent)
        since = to_time(request, "since", "since")
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
