"""MemoryService is served by two slices joined in the wiring: every one of its methods is
answered (none falls through to the generated UNIMPLEMENTED base), and every servicer whose
calls write memories shows the current memory on ABORTED."""

from __future__ import annotations

from datetime import UTC, datetime

from crmmem.memory.v1 import memory_pb2
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from crmmem.memory.v1 import memory_service_pb2_grpc as service_grpc

from memory_service.context.transport.context_servicer import ContextServicer
from memory_service.imports.transport.import_servicer import ImportServicer
from memory_service.kernel.domain.model import Memory, MemoryKind, Scope, ScopeType
from memory_service.kernel.transport.rpc import ServicerBase
from memory_service.memories.transport.memory_servicer import MemoryServicer
from memory_service.review.transport.review_servicer import ReviewServicer
from memory_service.server import MemoryService
from memory_service.tasks.transport.task_servicer import TaskServicer


def test_every_memory_service_method_is_served_by_a_slice() -> None:
    generated = service_grpc.MemoryServiceServicer
    for method in service_pb.DESCRIPTOR.services_by_name["MemoryService"].methods:
        handler = getattr(MemoryService, method.name)
        assert handler is not getattr(generated, method.name), method.name
        owner = next(c for c in MemoryService.__mro__ if method.name in vars(c))
        assert owner in (MemoryServicer, ReviewServicer), (method.name, owner)


def test_the_review_calls_are_the_review_slice_s() -> None:
    for name in ("ReportDocumentVersion", "ListReviewItems", "ResolveConflict"):
        assert name in vars(ReviewServicer), name
        assert name not in vars(MemoryServicer), name


def test_servicers_that_write_memories_show_the_current_one_on_aborted() -> None:
    now = datetime(2026, 1, 2, tzinfo=UTC)
    memory = Memory(
        id="m1",
        tenant_id="t",
        scope=Scope(ScopeType.CUSTOMER, "c1"),
        key="budget",
        key_context="",
        kind=MemoryKind.FACT,
        version=1,
        create_time=now,
        update_time=now,
    )
    for servicer in (
        MemoryService,
        MemoryServicer,
        ReviewServicer,
        ContextServicer,
        ImportServicer,
    ):
        shown = servicer.shown_current(object.__new__(servicer), memory)  # type: ignore[arg-type]
        assert isinstance(shown, memory_pb2.Memory), servicer
        assert shown.name == "memories/m1", servicer
        assert shown.key == "budget", servicer
    assert ServicerBase.shown_current(object.__new__(TaskServicer), memory) is None
