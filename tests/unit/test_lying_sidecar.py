"""A sidecar that answers more candidates than it was asked for gets no more database work."""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc

from memory_service.adapters.retrieval_client import CircuitBreaker, RetrievalClient


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
