"""The gRPC server itself: interceptors, message limits, servicers, health and reflection.
What the servicers run is built by `memory_service.bootstrap`, the composition root."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import grpc
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import access_service_pb2_grpc as access_grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import context_service_pb2_grpc as ctx_grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import import_service_pb2_grpc as imp_grpc
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import memory_service_pb2_grpc as service_grpc
from crmmem.memory.v1 import task_service_pb2 as task_pb
from crmmem.memory.v1 import task_service_pb2_grpc as task_grpc
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb
from crmmem.memory.v1 import transcript_service_pb2_grpc as transcript_grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.grpc import server_interceptor
from opentelemetry.sdk.trace import TracerProvider

from crmmem_runtime.listen import SERVER_OPTIONS
from memory_service.access.transport.access_servicer import AccessServicer
from memory_service.context.transport.context_servicer import ContextServicer
from memory_service.imports.domain.parsers import MAX_ARCHIVE_BYTES
from memory_service.imports.transport.import_servicer import ImportServicer
from memory_service.kernel.transport.edge import LenientServices
from memory_service.kernel.transport.worker_pool import LastIdleFirstPool
from memory_service.memories.transport.memory_servicer import MemoryServicer
from memory_service.review.transport.review_servicer import ReviewServicer
from memory_service.tasks.transport.task_servicer import TaskServicer
from memory_service.transcripts.transport.transcript_servicer import TranscriptServicer

MAX_RECEIVE_BYTES = MAX_ARCHIVE_BYTES + 64 * 1024
REFLECTION_WORKERS = 4  # reflection's own threads (grpcurl, tooling): see grpc_server
EXPORT_WORKERS = 4  # ExportMemories' own threads: see grpc_server

# The health service name the container's liveness probe asks for (k8s/base): SERVING for as
# long as the process runs and answers, whatever the database does. The other names, which the
# readiness probe and balancers ask for, follow the database (`readiness.DatabaseWatch`): a
# liveness probe on them restarted every replica during a database outage.
LIVENESS_SERVICE = "liveness"

SERVICE_NAMES = (
    service_pb.DESCRIPTOR.services_by_name["MemoryService"].full_name,
    imp_pb.DESCRIPTOR.services_by_name["ImportService"].full_name,
    ctx_pb.DESCRIPTOR.services_by_name["ContextService"].full_name,
    transcript_pb.DESCRIPTOR.services_by_name["TranscriptService"].full_name,
    access_pb.DESCRIPTOR.services_by_name["AccessService"].full_name,
    task_pb.DESCRIPTOR.services_by_name["TaskService"].full_name,
)


@dataclass(eq=False)
class MemoryService(ReviewServicer, MemoryServicer):
    """MemoryService, one gRPC service served by two slices: the memories slice's calls and the
    review slice's (document facts and the review queue). Joined here, in the wiring, so neither
    slice imports the other's transport. Constructed as MemoryServicer is, with the review
    queue's app entries after the memories slice's."""


@dataclass(frozen=True)
class Servicers:
    memory: MemoryService
    transcript: TranscriptServicer
    access: AccessServicer
    context: ContextServicer
    imports: ImportServicer
    tasks: TaskServicer


def grpc_server(
    servicers: Servicers, max_workers: int, tracer_provider: TracerProvider | None
) -> tuple[grpc.Server, health.HealthServicer]:
    """A server (not yet listening) with every service registered and reported SERVING.

    A server span per call only with a `tracer_provider` (traces exported): unexported, the
    span's bookkeeping still cost each call a few hundred microseconds of the handler's CPU."""
    tracing = [] if tracer_provider is None else [server_interceptor(tracer_provider)]
    server = grpc.server(
        LastIdleFirstPool(max_workers=max_workers, thread_name_prefix="rpc"),
        interceptors=tracing,
        # gRPC decompresses before a handler runs, so this limit is what bounds a compressed
        # archive: the largest archive plus room for the rest of the request.
        options=[("grpc.max_receive_message_length", MAX_RECEIVE_BYTES), *SERVER_OPTIONS],
    )
    services: Any = LenientServices(server)  # what add_*_to_server calls on a server
    # An export streams until the client has read it all, so a client that stops reading
    # holds its thread (until the send watchdog ends the call): exports wait on each other at
    # worst, never on the handler threads every other call needs.
    memory = service_pb.DESCRIPTOR.services_by_name["MemoryService"].full_name
    service_grpc.add_MemoryServiceServicer_to_server(
        servicers.memory,
        cast(
            grpc.Server,
            LenientServices(
                server,
                LastIdleFirstPool(EXPORT_WORKERS, "export"),
                frozenset({f"/{memory}/ExportMemories"}),
            ),
        ),
    )
    transcript_grpc.add_TranscriptServiceServicer_to_server(servicers.transcript, services)
    access_grpc.add_AccessServiceServicer_to_server(servicers.access, services)
    ctx_grpc.add_ContextServiceServicer_to_server(servicers.context, services)
    imp_grpc.add_ImportServiceServicer_to_server(servicers.imports, services)
    task_grpc.add_TaskServiceServicer_to_server(servicers.tasks, services)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, services)
    for name in ("", *SERVICE_NAMES, LIVENESS_SERVICE):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    # Reflection needs no credentials and reads its requests as a stream, so each open call
    # holds a thread until the client ends it: its own few threads, never the handlers'.
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME),
        cast(
            grpc.Server,
            LenientServices(server, LastIdleFirstPool(REFLECTION_WORKERS, "reflection")),
        ),
    )
    return server, health_servicer
