"""The sidecar client against stand-in sidecars: one answering more candidates than it was asked
for gets no more database work, and every call carries the shared secret."""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc

from crmmem_runtime.shared_secret import METADATA_KEY
from memory_service.memories.adapters.retrieval_client import CircuitBreaker, RetrievalClient
from memory_service.memories.domain.indexing import IndexDocument


class _FloodingSidecar(pb_grpc.RetrievalServiceServicer):  # type: ignore[misc]
    def Search(self, request: pb.SearchRequest, context: Any) -> pb.SearchResponse:
        return pb.SearchResponse(
            candidates=[
                pb.Candidate(id=f"{n:032x}", score=1.0, revision_number=1) for n in range(5000)
            ]
        )


def test_a_flooding_sidecar_is_cut_to_the_limit_asked_for() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_RetrievalServiceServicer_to_server(_FloodingSidecar(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    breaker = CircuitBreaker(
        min_calls=5, failure_rate=0.5, window_seconds=10, reset_seconds=2, window_calls=20
    )
    client = RetrievalClient(f"127.0.0.1:{port}", "s" * 32, 5.0, breaker)
    try:
        candidates = client.search("t-1", "meetings", 10, [], None)
        assert len(candidates) == 10
    finally:
        client.close()
        server.stop(0)


class _RecordingSidecar(pb_grpc.RetrievalServiceServicer):  # type: ignore[misc]
    """Notes the shared secret each call arrived with."""

    def __init__(self) -> None:
        self.secrets: dict[str, list[str | None]] = {}

    def _note(self, method: str, context: Any) -> None:
        metadata = dict(context.invocation_metadata())
        self.secrets.setdefault(method, []).append(metadata.get(METADATA_KEY))

    def Search(self, request: pb.SearchRequest, context: Any) -> pb.SearchResponse:
        self._note("Search", context)
        return pb.SearchResponse()

    def UpsertDocuments(self, request: Any, context: Any) -> pb.UpsertDocumentsResponse:
        self._note("UpsertDocuments", context)
        return pb.UpsertDocumentsResponse()

    def DeleteDocuments(self, request: Any, context: Any) -> pb.DeleteDocumentsResponse:
        self._note("DeleteDocuments", context)
        return pb.DeleteDocumentsResponse()

    def GetStats(self, request: Any, context: Any) -> pb.GetStatsResponse:
        self._note("GetStats", context)
        return pb.GetStatsResponse()


def test_every_call_to_the_sidecar_carries_the_shared_secret() -> None:
    sidecar = _RecordingSidecar()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_RetrievalServiceServicer_to_server(sidecar, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    secret = "s" * 32
    client = RetrievalClient(f"127.0.0.1:{port}", secret, 5.0, CircuitBreaker())
    try:
        client.search("t-1", "meetings", 10, [("USER", "mara")], None)
        client.upsert([IndexDocument("m1", "t-1", 1, 1, "text", "USER", "mara")])
        client.delete("t-1", ["m1"])
        client.delete_tenant("t-1")
        client.tenant_points("t-1")
    finally:
        client.close()
        server.stop(0)
    assert sidecar.secrets == {
        "Search": [secret],
        "UpsertDocuments": [secret],
        "DeleteDocuments": [secret, secret],
        "GetStats": [secret],
    }
