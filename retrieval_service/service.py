"""The sidecar's gRPC servicer. Embedding and index calls run on worker threads, so the event
loop that answers health checks and reflection never waits on the model."""

from __future__ import annotations

import asyncio
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry import trace

from retrieval_service import fusion
from retrieval_service.batching import EmbeddingLane
from retrieval_service.embedding import Embedder
from retrieval_service.index import Hit, IndexPoint, ScopeSelector, VectorIndex
from retrieval_service.lexical import SparseEncoder

MEMORY_ID = re.compile(r"[0-9a-f]{32}")  # fullmatch only: `$` also matches before a newline
MAX_DOCUMENTS = 256
MAX_TEXT = 8000
MAX_QUERY = 2000
MAX_LIMIT = 100
MAX_DELETE_IDS = 1000  # the memory service's outbox drains at most 512 ids at a time
MAX_SCOPES = 256  # the memory service sends at most 200 customers, the user and the organization
# The records keep versions in a 32-bit column: a larger one was never sent by the memory
# service. Only a sanity bound: the shared secret is what keeps forged versions out.
MAX_VERSION = 2**31 - 1
tracer = trace.get_tracer("retrieval_service")


class BadField(Exception):
    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


def _invalid(error: BadField) -> grpc.Status:
    status = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=str(error))
    for detail in (
        error_details_pb2.ErrorInfo(reason="FIELD_INVALID", domain="crmmem.retrieval.v1"),
        error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=error.field, description=error.description
                )
            ]
        ),
    ):
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    return rpc_status.to_status(status)


async def _abort(context: Any, error: BadField) -> None:
    """aio contexts accept a rich status; the type stubs do not know it yet."""
    await context.abort_with_status(_invalid(error))


def _tenant(value: str, field: str = "tenant_id") -> str:
    if not value or len(value) > 128:
        raise BadField(field, "is required (1-128 characters)")
    return value


@dataclass(frozen=True)
class SearchMode:
    """Which signals a search uses and how `hybrid` fuses them (RetrievalSettings)."""

    mode: str = "hybrid"  # hybrid, dense or sparse
    fusion: str = "weighted"  # weighted or rrf
    sparse_weight: float = 0.3


class RetrievalServicer(pb_grpc.RetrievalServiceServicer):
    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        executor: ThreadPoolExecutor,
        lane: EmbeddingLane,
        collection: str,
        sparse: SparseEncoder,
        search_mode: SearchMode,
    ) -> None:
        self._embedder = embedder
        self._sparse = sparse
        self._mode = search_mode
        self._index = index
        self._executor = executor
        self._lane = lane
        self._upserted_total = 0
        self._stale_total = 0
        self._collection = collection

    async def _run(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    async def UpsertDocuments(
        self, request: pb.UpsertDocumentsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.UpsertDocumentsResponse:
        try:
            documents = list(request.documents)
            if len(documents) > MAX_DOCUMENTS:
                raise BadField("documents", f"at most {MAX_DOCUMENTS} per call")
            for index, document in enumerate(documents):
                field = f"documents[{index}]"
                if not MEMORY_ID.fullmatch(document.id):
                    raise BadField(f"{field}.id", "must be 32 hex characters")
                _tenant(document.tenant_id, f"{field}.tenant_id")
                if not document.text.strip() or len(document.text) > MAX_TEXT:
                    raise BadField(f"{field}.text", f"is required, at most {MAX_TEXT} characters")
                if not 0 < document.version <= MAX_VERSION:
                    raise BadField(f"{field}.version", f"must be between 1 and {MAX_VERSION}")
        except BadField as error:
            await _abort(context, error)
        if not documents:
            return pb.UpsertDocumentsResponse()
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        with tracer.start_as_current_span("embed.documents") as span:
            span.set_attribute("crmmem.documents", len(documents))
            vectors = await self._lane.embed_documents([d.text for d in documents])

        def upsert() -> tuple[int, int] | None:
            """BM25 weights on the worker thread too: 256 texts of 8,000 characters take
            tens of milliseconds, too long for the event loop. Nothing is written once the
            caller's deadline has passed: the caller has given up and will send the memory's
            current state again, perhaps after a removal this late write would undo (an
            absent point is inserted whatever its version)."""
            points = [
                IndexPoint(
                    d.id,
                    d.tenant_id,
                    d.version,
                    d.revision_number,
                    d.scope_type,
                    d.scope_id,
                    vector,
                    self._sparse.document(d.text),
                )
                for d, vector in zip(documents, vectors, strict=True)
            ]
            if deadline is not None and time.monotonic() >= deadline:
                return None
            return self._index.upsert(points)

        with tracer.start_as_current_span("vector.upsert"):
            outcome = await self._run(upsert)
        if outcome is None:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the caller's deadline passed before the write"
            )
            raise AssertionError("abort returned")  # pragma: no cover - abort raises
        written, stale = outcome
        self._upserted_total += written
        self._stale_total += stale
        return pb.UpsertDocumentsResponse(upserted_count=written, stale_count=stale)

    async def DeleteDocuments(
        self, request: pb.DeleteDocumentsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.DeleteDocumentsResponse:
        try:
            tenant = _tenant(request.tenant_id)
            if len(request.ids) > MAX_DELETE_IDS:
                raise BadField("ids", f"at most {MAX_DELETE_IDS} per call")
            for index, memory_id in enumerate(request.ids):
                if not MEMORY_ID.fullmatch(memory_id):
                    raise BadField(f"ids[{index}]", "must be 32 hex characters")
            if request.all_of_tenant and request.ids:
                raise BadField("ids", "must be empty with all_of_tenant")
            if request.versions and len(request.versions) != len(request.ids):
                raise BadField("versions", "must be empty or one per id")
            for index, version in enumerate(request.versions):
                if not 0 <= version <= MAX_VERSION:
                    raise BadField(f"versions[{index}]", f"must be between 0 and {MAX_VERSION}")
        except BadField as error:
            await _abort(context, error)
        with tracer.start_as_current_span("vector.delete"):
            if request.all_of_tenant:
                await self._run(self._index.delete_tenant, tenant)
            else:
                await self._run(
                    self._index.delete, tenant, list(request.ids), list(request.versions)
                )
        return pb.DeleteDocumentsResponse(requested_count=len(request.ids))

    async def Search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SearchResponse:
        try:
            tenant = _tenant(request.tenant_id)
            if not request.query.strip() or len(request.query) > MAX_QUERY:
                raise BadField("query", f"is required, at most {MAX_QUERY} characters")
            if request.limit < 0 or request.limit > MAX_LIMIT:
                raise BadField("limit", f"must be between 0 and {MAX_LIMIT}")
            if len(request.scopes) > MAX_SCOPES:
                raise BadField("scopes", f"at most {MAX_SCOPES}")
        except BadField as error:
            await _abort(context, error)
        scopes = [ScopeSelector(s.scope_type, s.scope_id) for s in request.scopes]
        hits = await self._search(tenant, request.query, request.limit or 10, scopes)
        return pb.SearchResponse(
            candidates=[
                pb.Candidate(
                    id=h.id, score=h.score, version=h.version, revision_number=h.revision_number
                )
                for h in hits
            ]
        )

    async def _search(
        self, tenant: str, query: str, limit: int, scopes: list[ScopeSelector]
    ) -> list[Hit]:
        mode = self._mode
        terms = self._sparse.query(query) if mode.mode != "dense" else None
        if terms is not None and mode.mode == "sparse":
            with tracer.start_as_current_span("vector.search") as span:
                span.set_attribute("crmmem.search_mode", mode.mode)
                matched: list[Hit] = await self._run(
                    self._index.search_sparse, tenant, terms, limit, scopes
                )
                span.set_attribute("crmmem.candidates", len(matched))
            return matched
        marks: list[int] = []
        # The BM25 half needs no vector: it runs on an index thread (the engine on the other
        # core) while the model embeds the query, so only the dense half follows the forward
        # pass. Submitted before the dense half can be, so an index thread never waits for a
        # sparse search still queued behind it.
        lexical = (
            self._executor.submit(self._index.search_sparse, tenant, terms, limit, scopes)
            if terms
            else None
        )

        def search(vector: list[float]) -> list[Hit]:
            """On an index thread, handed over by the model thread right after the forward pass."""
            marks.append(time.time_ns())
            if terms is None:
                found: list[Hit] = self._index.search(tenant, vector, limit, scopes)
            else:
                dense = self._index.search(tenant, vector, limit, scopes)
                sparse = lexical.result() if lexical is not None else []
                if mode.fusion == "weighted":
                    found = fusion.weighted(dense, sparse, limit, mode.sparse_weight)
                else:
                    found = fusion.rrf([dense, sparse], limit)
            marks.append(time.time_ns())
            return found

        answer: Future[list[Hit]] = Future()

        def search_into(vector: list[float]) -> None:
            if not answer.set_running_or_notify_cancel():
                return  # the caller gave up during the forward pass
            try:
                answer.set_result(search(vector))
            except Exception as error:
                answer.set_exception(error)

        def hand_over(vector: list[float]) -> None:
            """The model thread starts the search on the index executor itself (no hop through
            the event loop in between) and goes back to the model: a search that hangs holds an
            index thread, never the thread every tenant's queries and documents wait for."""
            self._executor.submit(search_into, vector)

        def embedded(lane: Future[None]) -> None:
            """The forward pass failed or was skipped: the search never starts, and the caller
            hears why."""
            if lane.cancelled():
                answer.cancel()
            elif (error := lane.exception()) is not None and answer.set_running_or_notify_cancel():
                answer.set_exception(error)

        started = time.time_ns()
        hits: list[Hit] = []
        lane = self._lane.submit_query(query, hand_over)
        lane.add_done_callback(embedded)
        # Cancelling the search (the caller gave up) skips a forward pass not yet started, and
        # the BM25 search if no index thread has taken it yet.
        answer.add_done_callback(lambda f: _cancelled(f, lane, lexical))
        try:
            hits = await asyncio.wrap_future(answer)
        finally:
            _spans(started, marks, mode.mode, len(hits))
        return hits

    async def GetStats(
        self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetStatsResponse:
        try:
            tenant = _tenant(request.tenant_id) if request.tenant_id else ""
        except BadField as error:
            await _abort(context, error)
        points = await self._run(self._index.count)
        tenant_points = await self._run(self._index.count, tenant) if tenant else 0
        return pb.GetStatsResponse(
            tenant_points=tenant_points,
            points=points,
            model=self._embedder.model_name,
            backend=self._index.backend,
            dimensions=self._embedder.dimensions,
            collection=self._collection,
            upserted_total=self._upserted_total,
            stale_total=self._stale_total,
        )


def _cancelled(answer: Future[list[Hit]], *parts: Future[Any] | None) -> None:
    if answer.cancelled():
        for part in parts:
            if part is not None:
                part.cancel()


def _spans(started: int, marks: list[int], mode: str, candidates: int) -> None:
    """`embed.query` and `vector.search` as they happened on the model thread, recorded
    afterwards under the call's span (the model thread has no trace context of its own);
    without a recording call span (traces not exported) there is nothing to record them under."""
    if not trace.get_current_span().is_recording():
        return
    embedded = marks[0] if marks else time.time_ns()
    tracer.start_span("embed.query", start_time=started).end(end_time=embedded)
    if marks:
        span = tracer.start_span("vector.search", start_time=embedded)
        span.set_attribute("crmmem.search_mode", mode)
        span.set_attribute("crmmem.candidates", candidates)
        span.end(end_time=marks[-1] if len(marks) > 1 else time.time_ns())


class _Undecodable:
    """Stands in for request bytes that are not a valid encoding of the request message."""


def _lenient(deserializer: Any) -> Any:
    def parse(data: bytes) -> Any:
        try:
            return deserializer(data) if deserializer is not None else data
        except Exception:
            return _Undecodable()

    return parse


class DecodeInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Undecodable bytes are INVALID_ARGUMENT; gRPC's own answer would be UNKNOWN."""

    async def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        behavior = handler.unary_unary

        async def checked(request: Any, context: Any) -> Any:
            if isinstance(request, _Undecodable):
                await _abort(context, BadField("request", "is not a valid protobuf encoding"))
            return await behavior(request, context)

        return grpc.unary_unary_rpc_method_handler(
            checked,
            request_deserializer=_lenient(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
