"""A stand-in retrieval sidecar in the test process: it answers health SERVING and every index
call, and its searches can be made late or hung while its health keeps answering, which the real
sidecar cannot be made to do from outside (SIGSTOP silences health too)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


class StandInSidecar(pb_grpc.RetrievalServiceServicer, health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    """Answers until told to go silent (`hung`: searches and health), to answer searches late
    (`search_delay`), or to hang searches alone (`searches_hung`, or one tenant's:
    `hung_tenants`); `released` ends every wait."""

    def __init__(self) -> None:
        self.hung = threading.Event()
        self.searches_hung = threading.Event()
        self.hung_tenants: set[str] = set()  # whose searches alone hang
        self.released = threading.Event()
        self.seen_serving = threading.Event()  # a client's health poll has seen SERVING
        self.search_delay = 0.0
        self.candidates: list[pb.Candidate] = []  # what every answered search returns
        self.searches = 0
        self.searched: list[tuple[str, str]] = []  # (tenant, query) of every search
        self.searched_at: list[float] = []  # when each arrived (`time.monotonic()`)
        self.address = ""

    def Search(self, request: pb.SearchRequest, context: Any) -> pb.SearchResponse:
        self.searches += 1
        self.searched.append((request.tenant_id, request.query))
        self.searched_at.append(time.monotonic())
        if (
            self.hung.is_set()
            or self.searches_hung.is_set()
            or request.tenant_id in self.hung_tenants
        ):
            # Until a second after the caller gave up (never answering in time): a server
            # thread held much longer would starve the health check of threads in a long run.
            self.released.wait((context.time_remaining() or 59) + 1)
        time.sleep(self.search_delay)
        return pb.SearchResponse(candidates=self.candidates)

    def UpsertDocuments(self, request: Any, context: Any) -> pb.UpsertDocumentsResponse:
        return pb.UpsertDocumentsResponse()

    def DeleteDocuments(self, request: Any, context: Any) -> pb.DeleteDocumentsResponse:
        return pb.DeleteDocumentsResponse()

    def GetStats(self, request: Any, context: Any) -> pb.GetStatsResponse:
        return pb.GetStatsResponse()

    def Check(self, request: Any, context: Any) -> health_pb2.HealthCheckResponse:
        if self.hung.is_set():
            self.released.wait(60)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


@contextlib.contextmanager
def serve_stand_in() -> Iterator[StandInSidecar]:
    """A stand-in listening on a free port (its `address`); every wait released at the end."""
    stand_in = StandInSidecar()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    pb_grpc.add_RetrievalServiceServicer_to_server(stand_in, server)
    health_pb2_grpc.add_HealthServicer_to_server(stand_in, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    stand_in.address = f"127.0.0.1:{port}"
    try:
        yield stand_in
    finally:
        stand_in.released.set()
        server.stop(0)
