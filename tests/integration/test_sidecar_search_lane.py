"""The sidecar's model thread is shared by every tenant's queries and by the document lane: an
index search that hangs (a stalled Qdrant server, the embedded shard's lock held by a long
write) must hold up only its own caller, never another tenant's search or the embedding of
documents. Real servicer and model lane; the index and the model are stand-ins."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from crmmem.retrieval.v1 import retrieval_service_pb2 as pb

from retrieval_service.batching import EmbeddingLane
from retrieval_service.index import Hit, IndexPoint, ScopeSelector
from retrieval_service.lexical import Bm25Encoder, SparseTerms
from retrieval_service.service import RetrievalServicer, SearchMode

HUNG = "t-hung"
OTHER = "t-other"


class Model:
    model_name = "stand-in"
    dimensions = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class HangingIndex:
    """Searches of tenant HUNG wait until released; every other tenant's answer at once."""

    backend = "stand-in"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def _answer(self, tenant_id: str) -> list[Hit]:
        if tenant_id == HUNG:
            self.entered.set()
            self.release.wait(20)
        return []

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return self._answer(tenant_id)

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return self._answer(tenant_id)

    def search_both(
        self,
        tenant_id: str,
        vector: list[float],
        terms: SparseTerms,
        limit: int,
        scopes: Sequence[ScopeSelector],
    ) -> tuple[list[Hit], list[Hit]]:
        return self._answer(tenant_id), []

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        return len(points), 0

    def delete(self, tenant_id: str, ids: Sequence[str], versions: Sequence[int] = ()) -> None: ...

    def delete_tenant(self, tenant_id: str) -> None: ...

    def count(self, tenant_id: str = "") -> int:
        return 0

    def close(self) -> None: ...


class Context:
    async def abort(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"aborted: {args}")


def test_a_hung_index_search_holds_up_neither_other_tenants_nor_the_document_lane() -> None:
    """Fails on main at f409573 (the search ran on the model thread): the other tenant's
    search and the documents waited for the hung search."""
    model, index = Model(), HangingIndex()
    lane = EmbeddingLane(model.embed)
    lane.start()
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="index")
    servicer = RetrievalServicer(model, index, executor, lane, "c", Bm25Encoder(), SearchMode())

    async def scenario() -> tuple[pb.SearchResponse, list[list[float]]]:
        context: Any = Context()
        hung = asyncio.ensure_future(
            servicer.Search(pb.SearchRequest(tenant_id=HUNG, query="meetings", limit=5), context)
        )
        await asyncio.get_running_loop().run_in_executor(None, index.entered.wait, 5)
        assert index.entered.is_set()
        try:
            other = await asyncio.wait_for(
                servicer.Search(
                    pb.SearchRequest(tenant_id=OTHER, query="meetings", limit=5), context
                ),
                2.0,
            )
            documents = await asyncio.wait_for(lane.embed_documents(["a", "b"]), 2.0)
        finally:
            index.release.set()
            await hung
        return other, documents

    try:
        other, documents = asyncio.run(scenario())
    finally:
        index.release.set()
        lane.stop()
        executor.shutdown(wait=True)
    assert list(other.candidates) == []
    assert documents == [[1.0, 0.0], [1.0, 0.0]]


class RecordingIndex(HangingIndex):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        self.written += [p.id for p in points]
        return len(points), 0


class DeadlineContext(Context):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.aborted: tuple[Any, ...] = ()

    def time_remaining(self) -> float:
        return self.seconds

    async def abort(self, *args: Any, **kwargs: Any) -> None:
        self.aborted = args
        raise asyncio.CancelledError


def test_documents_embedded_after_the_callers_deadline_are_not_written() -> None:
    """The memory service gives up on an upsert at its deadline and, when the memory has been
    removed meanwhile, sends the removal next. A write landing after that would put the
    removed text back (an absent point is inserted whatever its version), so the sidecar
    writes nothing once the caller's deadline has passed. Fails on main at f5542d1."""
    slow = threading.Event()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        slow.wait(0.3)  # the model is busy past the caller's deadline
        return [[1.0, 0.0] for _ in texts]

    index = RecordingIndex()
    lane = EmbeddingLane(embed)
    lane.start()
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="index")
    servicer = RetrievalServicer(Model(), index, executor, lane, "c", Bm25Encoder(), SearchMode())
    request = pb.UpsertDocumentsRequest(
        documents=[pb.Document(id=f"{1:032x}", tenant_id=OTHER, text="net-30 terms", version=1)]
    )

    async def call(context: DeadlineContext) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await servicer.UpsertDocuments(request, context)  # type: ignore[arg-type]

    try:
        late = DeadlineContext(0.1)
        asyncio.run(call(late))
        assert index.written == []
        assert late.aborted
        assert late.aborted[0].name == "DEADLINE_EXCEEDED"
        in_time = DeadlineContext(5.0)
        asyncio.run(call(in_time))
        assert index.written == [f"{1:032x}"]
        assert not in_time.aborted
    finally:
        lane.stop()
        executor.shutdown(wait=True)


def test_a_search_wakes_the_event_loop_once_and_hears_a_failed_forward_pass() -> None:
    """The model thread hands the search to an index thread, whose answer alone wakes the
    event loop: on an idle machine each wake of a sleeping thread costs a few tenths of a
    millisecond of the caller's latency. Fails on previous main (two wakes: one when the
    model thread handed over, one for the answer). A forward pass that fails still reaches
    the caller as its error."""
    model, index = Model(), HangingIndex()
    failing = threading.Event()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if failing.is_set():
            raise RuntimeError("model broke")
        return model.embed(texts)

    lane = EmbeddingLane(embed)
    lane.start()
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="index")
    servicer = RetrievalServicer(model, index, executor, lane, "c", Bm25Encoder(), SearchMode())
    request = pb.SearchRequest(tenant_id=OTHER, query="meetings", limit=5)

    async def scenario() -> tuple[list[int], str]:
        loop = asyncio.get_running_loop()
        context: Any = Context()
        wakes: list[int] = []
        original = loop.call_soon_threadsafe

        def counted(*args: Any, **kwargs: Any) -> Any:
            wakes[-1] += 1
            return original(*args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign,assignment]
        for _ in range(5):
            wakes.append(0)
            await servicer.Search(request, context)
        failing.set()
        wakes.append(0)
        try:
            await servicer.Search(request, context)
        except RuntimeError as error:
            return wakes, str(error)
        return wakes, "no error"

    try:
        wakes, failure = asyncio.run(scenario())
    finally:
        lane.stop()
        executor.shutdown(wait=True)
    assert wakes == [1] * 6
    assert failure == "model broke"


class LexicalFirstIndex(HangingIndex):
    """Records which half of a hybrid search the index was asked for, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.sparse_started = threading.Event()

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        self.calls.append("dense")
        return [Hit("d" * 32, 0.9, 1, 1)]

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        self.calls.append("sparse")
        self.sparse_started.set()
        return [Hit("s" * 32, 2.0, 1, 1)]

    def search_both(
        self,
        tenant_id: str,
        vector: list[float],
        terms: SparseTerms,
        limit: int,
        scopes: Sequence[ScopeSelector],
    ) -> tuple[list[Hit], list[Hit]]:
        self.calls.append("both")
        return self.search(tenant_id, vector, limit, scopes), self.search_sparse(
            tenant_id, terms, limit, scopes
        )


def test_the_bm25_half_of_a_hybrid_search_runs_while_the_query_is_embedded() -> None:
    """The sparse search needs no vector, so it runs (the engine on the other core) while the
    model embeds the query; only the dense half waits for the forward pass. Here the forward
    pass finishes only once the sparse search has started: on previous main (one call for both
    halves after the forward pass) it never starts in time. Both halves are still fused."""
    index = LexicalFirstIndex()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        index.sparse_started.wait(30)  # long enough for a busy machine to start it
        return [[1.0 if index.sparse_started.is_set() else 0.0, 0.0] for _ in texts]

    lane = EmbeddingLane(embed)
    lane.start()
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="index")
    servicer = RetrievalServicer(Model(), index, executor, lane, "c", Bm25Encoder(), SearchMode())
    context: Any = Context()
    try:
        reply = asyncio.run(
            servicer.Search(pb.SearchRequest(tenant_id=OTHER, query="net-30 terms"), context)
        )
        stopwords = asyncio.run(  # no BM25 terms: no sparse search at all
            servicer.Search(pb.SearchRequest(tenant_id=OTHER, query="the of"), context)
        )
    finally:
        lane.stop()
        executor.shutdown(wait=True)
    assert index.calls[:2] == ["sparse", "dense"]
    assert index.calls[2:] == ["dense"]
    assert sorted(c.id for c in reply.candidates) == ["d" * 32, "s" * 32]
    assert [c.id for c in stopwords.candidates] == ["d" * 32]
