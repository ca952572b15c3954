"""The MemoryService RPCs of document facts and the review queue: ReportDocumentVersion,
ListReviewItems and ResolveConflict. MemoryService is one gRPC service served by two slices:
the wiring (`memory_service/server.py`, `MemoryService`) joins this servicer with the memories
slice's, so neither slice imports the other's transport."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb

from memory_service.documents.public import MAX_NAMED_MEMORIES, DocumentReport
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import parse_etag
from memory_service.kernel.domain.model import Identity, Memory, Revision, utcnow
from memory_service.kernel.transport.fields import EnumMap, check_request_id, set_time
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ORDINAL, Cursor
from memory_service.kernel.transport.rpc import ServicerBase, rpc
from memory_service.memories.public import (
    ShowsCurrentMemory,
    document_ref,
    memory_proto,
    revision_proto,
)
from memory_service.review.app.review import ReviewCommands, ReviewQueries
from memory_service.review.domain.review import QUEUE_ORDER, ReviewItem, ReviewQuery, ReviewReason

REVIEW_REASONS = EnumMap.named(ReviewReason, service_pb.ReviewReason)
# A conflict's position is two memory ids; anything else one id.
POSITION = Cursor(str, 2 * 32 + 1)


def review_query(request: service_pb.ListReviewItemsRequest) -> ReviewQuery:
    if len(request.reasons) > len(QUEUE_ORDER):
        raise InvalidArgument("reasons", f"takes at most {len(QUEUE_ORDER)} items")
    reasons = [
        REVIEW_REASONS.required(value, f"reasons[{index}]")
        for index, value in enumerate(request.reasons)
    ]
    return ReviewQuery.of(reasons, request.unused_days)


def item_proto(item: ReviewItem, instant: Any) -> service_pb.ReviewItem:
    out = service_pb.ReviewItem(reason=REVIEW_REASONS.proto(item.reason), detail=item.detail)
    if item.memory is not None:
        out.memory.CopyFrom(memory_proto(item.memory, instant))
    if item.other is not None:
        out.other_memory.CopyFrom(memory_proto(item.other, instant))
    if item.import_item is not None:
        out.import_item = names.import_item(item.import_item.batch_id, item.import_item.id)
        out.import_text = item.import_item.text
    set_time(out.since, item.since)
    return out


@dataclass(eq=False)
class ReviewServicer(ShowsCurrentMemory, ServicerBase):
    """ResolveConflict writes a memory, so an ABORTED answer carries it as it stands now."""

    review_commands: ReviewCommands
    review_queries: ReviewQueries

    @rpc
    def ReportDocumentVersion(
        self,
        request: service_pb.ReportDocumentVersionRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ReportDocumentVersionResponse:
        check_request_id(request.request_id)
        if not request.HasField("document"):
            raise InvalidArgument("document", "is required")
        uri, version = document_ref(request.document, "document")

        def present(report: DocumentReport) -> service_pb.ReportDocumentVersionResponse:
            return service_pb.ReportDocumentVersionResponse(
                flagged_count=len(report.flagged),
                flagged_memories=[names.memory(m) for m in report.flagged[:MAX_NAMED_MEMORIES]],
                previous_version=report.previous_version,
            )

        key = request_key(
            "ReportDocumentVersion", request, service_pb.ReportDocumentVersionResponse
        )
        return self.review_commands.report_version(identity, key, uri, version, present)

    @rpc
    def ListReviewItems(
        self,
        request: service_pb.ListReviewItemsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ListReviewItemsResponse:
        query = review_query(request)
        page = self.pages.page(request, identity, [ORDINAL, POSITION])
        after = (int(page.after[0]), str(page.after[1])) if page.after else None
        if after is not None and after[0] >= len(QUEUE_ORDER):
            raise InvalidArgument("page_token", "is not a token this service issued")
        now = utcnow()
        items, next_after = self.review_queries.queue(identity, query, after, page.size, now)
        return service_pb.ListReviewItemsResponse(
            items=[item_proto(item, now) for item in items],
            next_page_token=page.next_token(*next_after) if next_after else "",
        )

    @rpc
    def ResolveConflict(
        self,
        request: service_pb.ResolveConflictRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> service_pb.ResolveConflictResponse:
        memory_id = names.parse_memory(request.memory, "memory")
        kept_id = names.parse_memory(request.kept_memory, "kept_memory")
        expected = parse_etag(request.etag, required=False)
        check_request_id(request.request_id)

        def present(
            memory: Memory, closing: Revision, now: datetime
        ) -> service_pb.ResolveConflictResponse:
            return service_pb.ResolveConflictResponse(
                memory=memory_proto(memory, now),
                revision=revision_proto(closing, now),
                kept_memory=names.memory(kept_id),
            )

        key = request_key("ResolveConflict", request, service_pb.ResolveConflictResponse)
        return self.review_commands.resolve_conflict(
            identity, key, memory_id, kept_id, expected, present
        )
