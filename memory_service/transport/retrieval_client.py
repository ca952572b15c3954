"""Client of the retrieval sidecar: deadlines, a circuit breaker, and trace propagation.

Search failures never become errors for the caller: recall degrades to "no recall" instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from opentelemetry.instrumentation.grpc import client_interceptor, grpcext
from opentelemetry.sdk.trace import TracerProvider

from memory_service.domain.indexing import IndexDocument
from memory_service.domain.recall import Candidate

UPSERT_CHUNK = 256
INDEX_WRITE_TIMEOUT = 30.0


class SearchUnavailable(Exception):
    """Search could not answer in time; `reason` is for operators."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CircuitBreaker:
    """Stops calling a sidecar that keeps failing, so degraded recall costs nothing.

    After `failure_threshold` consecutive failures the breaker opens for `reset_seconds`; then
    one trial call is let through (half-open) and its outcome closes or re-opens it.
    """

    def __init__(
        self,
        failure_threshold: int = 3,
        reset_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._threshold = failure_threshold
        self._reset = reset_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_running = False

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    def allow(self) -> bool:
        with self._lock:
            if self._opened_at is None:
                return True
            if self._trial_running or self._clock() - self._opened_at < self._reset:
                return False
            self._trial_running = True
            return True

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_running = False

    def failure(self) -> None:
        with self._lock:
            self._failures += 1
            self._trial_running = False
            if self._opened_at is not None or self._failures >= self._threshold:
                self._opened_at = self._clock()


class RetrievalClient:
    def __init__(
        self,
        address: str,
        search_timeout: float,
        breaker: CircuitBreaker,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.address = address
        self._timeout = search_timeout
        self.breaker = breaker
        channel = grpc.insecure_channel(address)
        self._raw_channel = channel
        self._channel = grpcext.intercept_channel(
            channel, client_interceptor(tracer_provider=tracer_provider)
        )
        self._stub = pb_grpc.RetrievalServiceStub(self._channel)

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        time_remaining: float | None,
    ) -> list[Candidate]:
        """Candidates within the caller's deadline (less a margin for validation) or ours."""
        timeout = self._timeout
        if time_remaining is not None:
            timeout = min(timeout, time_remaining - 0.005)
        if timeout <= 0:
            raise SearchUnavailable("no time left before the caller's deadline")
        if not self.breaker.allow():
            raise SearchUnavailable("circuit breaker open: the sidecar failed repeatedly")
        request = pb.SearchRequest(
            tenant_id=tenant_id,
            query=query,
            limit=limit,
            scopes=[pb.ScopeFilter(scope_type=t, scope_id=i) for t, i in scopes],
        )
        try:
            reply = self._stub.Search(request, timeout=timeout)
        except grpc.RpcError as error:
            self.breaker.failure()
            code = error.code() if isinstance(error, grpc.Call) else None
            raise SearchUnavailable(f"search failed: {code.name if code else error}") from error
        self.breaker.success()
        return [Candidate(c.id, c.score, c.revision_number) for c in reply.candidates]

    # --- index writes (the outbox worker) ------------------------------------------------------

    def upsert(self, documents: Sequence[IndexDocument]) -> None:
        for start in range(0, len(documents), UPSERT_CHUNK):
            chunk = documents[start : start + UPSERT_CHUNK]
            self._stub.UpsertDocuments(
                pb.UpsertDocumentsRequest(
                    documents=[
                        pb.Document(
                            id=d.memory_id,
                            tenant_id=d.tenant_id,
                            version=d.version,
                            revision_number=d.revision_number,
                            text=d.text,
                            scope_type=d.scope_type,
                            scope_id=d.scope_id,
                        )
                        for d in chunk
                    ]
                ),
                timeout=INDEX_WRITE_TIMEOUT,
            )

    def delete(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            self._stub.DeleteDocuments(
                pb.DeleteDocumentsRequest(tenant_id=tenant_id, ids=list(memory_ids)),
                timeout=INDEX_WRITE_TIMEOUT,
            )

    def delete_tenant(self, tenant_id: str) -> None:
        self._stub.DeleteDocuments(
            pb.DeleteDocumentsRequest(tenant_id=tenant_id, all_of_tenant=True),
            timeout=INDEX_WRITE_TIMEOUT,
        )

    def close(self) -> None:
        self._raw_channel.close()
