"""The sidecar's model lane: documents go in large, length-sorted chunks while no query comes,
answers keep the caller's order, and a waiting query runs before the next chunk."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

from retrieval_service.batching import MAX_CHUNK, QUIET_CHUNK_SECONDS, EmbeddingLane
from retrieval_service.config import RetrievalSettings
from retrieval_service.server import embedding_lane


async def embed_query(lane: EmbeddingLane, text: str) -> list[float]:
    """A query's vector alone (the service passes a search as `then`)."""
    return await lane.query(text, lambda vector: vector)


class Recorder:
    """A model whose vector is the text's length; it can be held mid-call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        self.entered.set()
        self.release.wait(5)
        time.sleep(0.001)
        return [[float(len(text))] for text in texts]


def texts(count: int) -> list[str]:
    return ["x" * (1 + (index * 37) % 101) for index in range(count)]


def test_documents_go_in_large_chunks_shortest_first_and_come_back_in_order() -> None:
    model = Recorder()
    lane = EmbeddingLane(model, chunk_seconds=0.0001)
    lane.start()
    try:
        sent = texts(200)
        vectors = asyncio.run(lane.embed_documents(sent))
    finally:
        lane.stop()
    assert vectors == [[float(len(text))] for text in sent]
    assert [len(call) for call in model.calls] == [MAX_CHUNK, MAX_CHUNK, MAX_CHUNK, 8]
    lengths = [len(text) for call in model.calls for text in call]
    assert lengths == sorted(lengths)


def test_a_query_runs_before_the_next_chunk_and_chunks_shrink_while_queries_come() -> None:
    model = Recorder()
    lane = EmbeddingLane(model, chunk_seconds=0.0001, quiet_seconds=60)
    lane.start()

    async def scenario() -> tuple[list[list[float]], list[float]]:
        model.release.clear()
        documents = asyncio.ensure_future(lane.embed_documents(texts(200)))
        await asyncio.get_running_loop().run_in_executor(None, model.entered.wait, 5)
        query = asyncio.ensure_future(embed_query(lane, "q" * 7))
        await asyncio.sleep(0.05)
        model.release.set()
        return await documents, await query

    try:
        vectors, vector = asyncio.run(scenario())
    finally:
        lane.stop()
    assert vector == [7.0]
    sizes = [len(call) for call in model.calls]
    assert model.calls[1] == ["q" * 7], sizes  # the query, right after the chunk in hand
    assert max(sizes[2:]) < MAX_CHUNK, sizes  # a query came lately: small chunks
    assert vectors == [[float(len(text))] for text in texts(200)]


def test_a_querys_follow_up_runs_on_the_model_thread_and_its_failure_reaches_the_caller() -> None:
    """The search after a query's forward pass runs where the vector was made (no second hop
    between threads); a failing one fails only its own caller."""
    lane = EmbeddingLane(Recorder())
    lane.start()
    threads: list[str] = []

    def search(vector: list[float]) -> float:
        threads.append(threading.current_thread().name)
        if vector == [3.0]:
            raise LookupError("the index refused")
        return vector[0] * 2

    async def both() -> list[object]:
        return await asyncio.gather(
            lane.query("q" * 4, search), lane.query("q" * 3, search), return_exceptions=True
        )

    try:
        found, failed = asyncio.run(both())
    finally:
        lane.stop()
    assert found == 8.0
    assert isinstance(failed, LookupError)
    assert threads == ["embed", "embed"]


class TwoCallModel:
    model_name = "recorder"
    dimensions = 1

    def __init__(self) -> None:
        self.embed = Recorder()
        self.embed_documents = Recorder()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(text) for text in texts]


def test_the_sidecars_lane_sends_documents_and_queries_to_their_own_model_calls() -> None:
    """The sidecar gives documents a session on more threads than queries (`embed_documents`):
    the lane it builds sends each kind of text to its own call, on the one model thread."""
    model = TwoCallModel()
    queries, documents = model.embed, model.embed_documents
    lane = embedding_lane(model, RetrievalSettings(document_chunk_ms=0.1))
    lane.start()

    async def both() -> tuple[list[float], list[list[float]]]:
        return await embed_query(lane, "q" * 5), await lane.embed_documents(texts(10))

    try:
        vector, vectors = asyncio.run(both())
    finally:
        lane.stop()
    assert vector == [5.0]
    assert vectors == [[float(len(text))] for text in texts(10)]
    assert queries.calls == [["q" * 5]]
    assert sorted(text for call in documents.calls for text in call) == sorted(texts(10))


def test_chunks_of_long_texts_are_cut_by_model_time_not_by_count() -> None:
    """A memory of the longest kind costs the model tens of short ones: after a quiet spell a
    chunk holds about QUIET_CHUNK_SECONDS of tokens, so a query never waits for 64 of them."""
    per_token = 0.00005  # 12.8 ms for a text of the model's 256 tokens

    def model(texts: Sequence[str]) -> list[list[float]]:
        time.sleep(per_token * sum(len(text) for text in texts))
        return [[float(len(text))] for text in texts]

    sizes: list[int] = []

    def documents(texts: Sequence[str]) -> list[list[float]]:
        sizes.append(len(texts))
        return model(texts)

    lane = EmbeddingLane(
        model, embed_documents=documents, count_tokens=lambda texts: [len(t) for t in texts]
    )
    lane.start()
    try:
        longest = ["x" * 256] * 128
        vectors = asyncio.run(lane.embed_documents(longest))
        short = ["x"] * 128
        asyncio.run(lane.embed_documents(short))
    finally:
        lane.stop()
    assert vectors == [[256.0]] * 128
    long_sizes, short_sizes = sizes[: len(sizes) - 2], sizes[len(sizes) - 2 :]
    assert sum(long_sizes) == 128
    most = QUIET_CHUNK_SECONDS / (per_token * 256)  # about 20 texts of 256 tokens
    assert max(long_sizes) <= most * 1.5, long_sizes
    assert short_sizes == [MAX_CHUNK, MAX_CHUNK]  # short texts still go in large chunks


def test_counting_a_jobs_tokens_holds_up_no_query() -> None:
    """Counting reads every character of every text (seconds for a large job of the longest
    texts): it happens before the job reaches the model thread, so queries pass meanwhile."""
    counting, release = threading.Event(), threading.Event()

    def slow_count(texts: Sequence[str]) -> list[int]:
        counting.set()
        release.wait(5)
        return [len(text) for text in texts]

    lane = EmbeddingLane(Recorder(), count_tokens=slow_count)
    lane.start()

    async def scenario() -> tuple[list[float], bool, list[list[float]]]:
        documents = asyncio.ensure_future(lane.embed_documents(texts(10)))
        await asyncio.get_running_loop().run_in_executor(None, counting.wait, 5)
        vector = await asyncio.wait_for(embed_query(lane, "q" * 3), 2)
        still_counting = not release.is_set()
        release.set()
        return vector, still_counting, await documents

    try:
        vector, still_counting, vectors = asyncio.run(scenario())
    finally:
        release.set()
        lane.stop()
    assert vector == [3.0]
    assert still_counting
    assert vectors == [[float(len(text))] for text in texts(10)]


def test_a_calibrated_lane_cuts_its_first_chunk_by_the_models_measured_time() -> None:
    """The sidecar calibrates at start: its first chunk after a quiet spell fits
    QUIET_CHUNK_SECONDS on the model it has, not on a guess (three times over on a busy one)."""
    per_token = 0.0005  # a slow model: 128 ms for a text of 256 tokens
    sizes: list[int] = []

    def documents(texts: Sequence[str]) -> list[list[float]]:
        sizes.append(len(texts))
        time.sleep(per_token * sum(len(text) for text in texts))
        return [[float(len(text))] for text in texts]

    lane = EmbeddingLane(
        Recorder(), embed_documents=documents, count_tokens=lambda t: [len(x) for x in t]
    )
    lane.start()
    try:
        lane.calibrate(["x" * 64] * 4)
        asyncio.run(lane.embed_documents(["x" * 256] * 8))
    finally:
        lane.stop()
    assert sizes[:2] == [4, 4]  # the calibration's two passes
    assert sizes[2] <= QUIET_CHUNK_SECONDS / (per_token * 256) + 1, sizes
