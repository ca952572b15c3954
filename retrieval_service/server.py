"""Assembles the sidecar: model, index, gRPC aio server with health, reflection and tracing."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]
from grpc_reflection.v1alpha import reflection
from opentelemetry import metrics
from opentelemetry.instrumentation.grpc import aio_server_interceptor
from opentelemetry.metrics import Observation
from opentelemetry.sdk.trace import TracerProvider

from crmmem_runtime.listen import SERVER_OPTIONS, listen
from crmmem_runtime.telemetry import exporting_traces
from retrieval_service.auth import SharedSecretInterceptor
from retrieval_service.batching import EmbeddingLane
from retrieval_service.config import RetrievalSettings
from retrieval_service.embedding import Embedder, open_embedder
from retrieval_service.index import VectorIndex
from retrieval_service.lexical import Bm25Encoder
from retrieval_service.service import DecodeInterceptor, RetrievalServicer, SearchMode

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RetrievalService"].full_name


def collection_name(embedder: Embedder, sparse_idf: bool = False) -> str:
    """One collection per embedding model: vectors of two models never share a space. The
    suffix names the layout: `t` tenant-scoped point ids, `h` a named dense vector plus BM25
    sparse vectors (hybrid search), `i` the engine's IDF on those. An index of an older layout
    is left alone (delete it once the new one is complete) and the memory service, finding the
    new one incomplete, queues its rebuild from the records."""
    slug = re.sub(r"[^a-z0-9]+", "-", embedder.model_name.lower()).strip("-")
    return f"memories-{slug}-{embedder.dimensions}-th{'i' if sparse_idf else ''}"


def open_index(settings: RetrievalSettings, embedder: Embedder) -> VectorIndex:
    collection = collection_name(embedder, settings.sparse_idf)
    if settings.qdrant_url:
        from retrieval_service.index.qdrant_server import QdrantClientIndex

        return QdrantClientIndex.connect(
            settings.qdrant_url,
            collection,
            embedder.dimensions,
            settings.qdrant_api_key,
            settings.qdrant_shards,
            settings.qdrant_replication_factor,
            settings.qdrant_https,
            settings.sparse_idf,
        )
    from retrieval_service.index.embedded_process import EmbeddedProcessIndex

    # The folder keeps the engine package's name (qdrant-edge): indexes already stored there
    # stay where the sidecar looks for them.
    return EmbeddedProcessIndex(
        settings.data_dir / "edge" / collection,
        embedder.dimensions,
        settings.sparse_idf,
        settings.index_optimize_points,
    )


@dataclass
class RunningSidecar:
    server: grpc.aio.Server
    port: int
    health: health_aio.HealthServicer
    index: VectorIndex
    lane: EmbeddingLane
    executor: ThreadPoolExecutor

    async def stop(self, grace: float, drain: float = 0.0) -> None:
        """NOT_SERVING for `drain` seconds while still answering, then refuse new calls."""
        await self.health.enter_graceful_shutdown()
        await asyncio.sleep(drain)
        await self.server.stop(grace)
        self.lane.stop()
        self.executor.shutdown(wait=True)
        self.index.close()


async def start_sidecar(
    settings: RetrievalSettings, tracer_provider: TracerProvider | None = None
) -> RunningSidecar:
    # The port first: a second instance fails before it loads a model or opens the index.
    # A server span only when spans are exported: unexported, its bookkeeping still costs every
    # Search about a quarter of a millisecond on the event loop.
    tracing = [aio_server_interceptor(tracer_provider=tracer_provider)]
    server = grpc.aio.server(
        interceptors=[
            SharedSecretInterceptor(settings.shared_secret),
            *(tracing if exporting_traces(settings) else []),
            DecodeInterceptor(),
        ],
        options=SERVER_OPTIONS,
    )
    port = listen(server, settings.listen)
    embedder = open_embedder(settings)
    index = open_index(settings, embedder)
    lane = embedding_lane(embedder, settings)
    lane.start()
    warm_up(lane, embedder, index)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="index")

    pb_grpc.add_RetrievalServiceServicer_to_server(
        RetrievalServicer(
            embedder,
            index,
            executor,
            lane,
            collection_name(embedder, settings.sparse_idf),
            Bm25Encoder(),
            SearchMode(settings.search_mode, settings.fusion, settings.sparse_weight),
        ),
        server,
    )
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    await server.start()
    metrics.get_meter("retrieval_service").create_observable_gauge(
        "crmmem.index.points",
        [lambda _options: [Observation(index.count(), {"backend": index.backend})]],
        description="points in the vector index",
    )
    for name in ("", SERVICE_NAME):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningSidecar(server, port, health, index, lane, executor)


# Memory-sized texts of a CRM, short and long, for the lane's first estimate of model time.
CALIBRATION_DOCUMENTS = [
    "Prefers email over calls; never before 10am CET.",
    "ACME renewal: net-30 terms agreed with Priya (CFO) on the Q3 call.",
    "Order PO-2024-118 shipped to the Lisbon warehouse, invoice #A-99812 due in 30 days.",
    "Decision maker at Globex is Jonas; legal redlines on the SLA take about two weeks.",
] * 4


def embedding_lane(embedder: Embedder, settings: RetrievalSettings) -> EmbeddingLane:
    """Queries through `embed`, documents through `embed_documents` (more threads), in chunks
    cut by the model's own token counts."""
    return EmbeddingLane(
        embedder.embed,
        settings.query_batch_wait_ms / 1000,
        settings.document_chunk_ms / 1000,
        embed_documents=embedder.embed_documents,
        count_tokens=embedder.token_counts,
    )


def warm_up(lane: EmbeddingLane, embedder: Embedder, index: VectorIndex) -> None:
    """One embedding and one search before the server starts answering: the first forward pass
    (thread pool, lazy kernels) and the index's first read cost seconds, and the memory
    service takes SERVING as "recall works now"."""
    vector = lane.call(lambda: embedder.embed(["warm up"])[0])
    lane.calibrate(CALIBRATION_DOCUMENTS)
    index.search_both("warm-up", vector, Bm25Encoder().query("warm up"), 1, [])
