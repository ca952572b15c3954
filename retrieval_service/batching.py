"""The model's lane: every model call starts from one thread, queries first, documents in chunks.

A search is on a caller's deadline; a document upsert is background indexing. If both queued
behind one another on a plain executor, a query could wait behind a whole batch of documents and
recall would degrade exactly when writes are busiest. Here the thread always takes every waiting
query (one batched forward pass) before the next chunk of documents, so a query waits at most for
one chunk. Chunks are sized by model time, counted in tokens (a memory of the longest kind costs
the model some thirty times one of a few words): as many tokens as the model embedded in about
`chunk_seconds` lately, so on a busy machine chunks shrink and a query's wait stays bounded.
When no query has come for `quiet_seconds`, chunks may take `QUIET_CHUNK_SECONDS` and up to
`MAX_CHUNK` documents (the model batches well): the first query after a quiet spell waits for at
most that, and chunks shrink again while queries keep coming. A job's texts are embedded fewest
tokens first, so a chunk pads its texts to similar lengths; the vectors are handed back in the
caller's order. Documents may go through a model call of their own (`embed_documents`: the ONNX
embedder runs a chunk as several one-thread passes side by side).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TypeVar

MAX_QUERY_BATCH = 32
MAX_CHUNK = 64
# A chunk holds at least this many tokens (about four memory-sized texts), so that indexing
# moves on while queries keep coming on a busy machine; and always at least one document.
MIN_CHUNK_TOKENS = 64
QUIET_SECONDS = 1.0
QUIET_CHUNK_SECONDS = 0.25
T = TypeVar("T")


@dataclass(frozen=True)
class _Query:
    text: str
    then: Callable[[list[float]], object]
    future: Future[object]


@dataclass
class _DocumentJob:
    texts: Sequence[str]
    future: Future[list[list[float]]]
    tokens: list[int]  # of each text, as the model will see it
    vectors: list[list[float]] = field(default_factory=list)
    # Positions of `texts`, fewest tokens first: `vectors[i]` belongs to `texts[order[i]]`.
    order: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.order = sorted(range(len(self.texts)), key=self.tokens.__getitem__)

    def result(self) -> list[list[float]]:
        """The vectors in the caller's order."""
        ordered: list[list[float]] = [[] for _ in self.texts]
        for position, vector in zip(self.order, self.vectors, strict=True):
            ordered[position] = vector
        return ordered


class EmbeddingLane:
    """Runs every model call on one thread: torch's intra-op pool is bound to its calling
    thread, and hopping between threads costs more than the forward pass of a short query."""

    def __init__(
        self,
        embed: Callable[[Sequence[str]], list[list[float]]],
        query_wait_seconds: float = 0.0,
        chunk_seconds: float = 0.025,
        quiet_seconds: float = QUIET_SECONDS,
        embed_documents: Callable[[Sequence[str]], list[list[float]]] | None = None,
        count_tokens: Callable[[Sequence[str]], list[int]] | None = None,
    ) -> None:
        """`count_tokens` is the model's tokenizer (characters stand in for model stand-ins)."""
        self._embed = embed
        self._embed_documents = embed_documents or embed
        self._count_tokens = count_tokens or _characters
        self._wait = query_wait_seconds
        self._chunk_seconds = chunk_seconds
        self._quiet = quiet_seconds
        self._last_query = -float("inf")  # monotonic time the last query was queued
        self._per_token = chunk_seconds / 256  # a guess until the first chunk is measured
        self._queries: deque[_Query] = deque()
        self._documents: deque[_DocumentJob] = deque()
        self._calls: deque[tuple[Callable[[], object], Future[object]]] = deque()
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="embed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._ready:
            self._stopping = True
            self._ready.notify_all()
        self._thread.join(timeout=10)

    async def query(self, text: str, then: Callable[[list[float]], T]) -> T:
        """`then(vector)` of the query's vector, run on the model thread right after the
        forward pass: a search that follows (about a millisecond) costs no second hop between
        threads, which on busy cores can each take longer than the search itself."""
        return await asyncio.wrap_future(self.submit_query(text, then))

    def submit_query(self, text: str, then: Callable[[list[float]], T]) -> Future[T]:
        """`query` without awaiting it: a caller whose `then` hands the work on to another
        thread waits for that thread's answer alone, and the event loop is woken once, not
        also when `then` returns. Cancelling the future before the forward pass skips it."""
        future: Future[T] = Future()
        with self._ready:
            self._queries.append(_Query(text, then, future))  # type: ignore[arg-type]
            self._last_query = time.monotonic()
            self._ready.notify()
        return future

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:  # nothing to measure: an empty chunk would teach the estimate nonsense
            return []
        # Counting reads every character (most of a second for 256 texts of the longest kind):
        # on a worker thread, with the interpreter released, never on the model thread.
        loop = asyncio.get_running_loop()
        tokens = await loop.run_in_executor(None, self._count_tokens, texts)
        future: Future[list[list[float]]] = Future()
        with self._ready:
            self._documents.append(_DocumentJob(texts, future, tokens))
            self._ready.notify()
        return await asyncio.wrap_future(future)

    def calibrate(self, texts: Sequence[str]) -> None:
        """Embeds `texts` as documents twice on the model thread and starts the estimate of
        model time per token from the second pass: on a guess, the first chunk after a start ran
        three times its budget on a busy machine. At start, before any job."""
        tokens = max(1, sum(self._count_tokens(texts)))

        def measure() -> None:
            self._embed_documents(texts)  # the session's first pass pays for lazy set-up
            began = time.monotonic()
            self._embed_documents(texts)
            self._per_token = (time.monotonic() - began) / tokens

        self.call(measure)

    def call(self, function: Callable[[], T]) -> T:
        """Runs `function` on the model thread and waits for it (warm-up at start)."""
        future: Future[object] = Future()
        with self._ready:
            self._calls.append((function, future))
            self._ready.notify()
        return future.result()  # type: ignore[return-value]

    def _run(self) -> None:
        while True:
            with self._ready:
                while not (self._queries or self._documents or self._calls or self._stopping):
                    self._ready.wait()
                if self._stopping:
                    self._fail_pending(RuntimeError("the embedding lane stopped"))
                    return
                if self._calls:
                    self._run_call(*self._calls.popleft())
                    continue
                if self._queries:
                    queries = self._take_queries()
                    job = None
                else:
                    queries = []
                    job = self._documents[0]
            if queries:
                self._run_queries(queries)
            elif job is not None:
                self._run_document_chunk(job)

    def _take_queries(self) -> list[_Query]:
        """Called with the lock held; optionally lingers for more queries to batch with."""
        if self._wait > 0:
            deadline = time.monotonic() + self._wait
            while len(self._queries) < MAX_QUERY_BATCH and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._ready.wait(left)
        batch: list[_Query] = []
        while self._queries and len(batch) < MAX_QUERY_BATCH:
            query = self._queries.popleft()
            if query.future.set_running_or_notify_cancel():  # the caller may have given up
                batch.append(query)
        return batch

    def _run_call(self, function: Callable[[], object], future: Future[object]) -> None:
        try:
            future.set_result(function())
        except Exception as error:
            future.set_exception(error)

    def _run_queries(self, batch: list[_Query]) -> None:
        try:
            vectors = self._embed([query.text for query in batch])
        except Exception as error:  # each waiting search gets the failure
            for query in batch:
                query.future.set_exception(error)
            return
        for query, vector in zip(batch, vectors, strict=True):
            try:
                query.future.set_result(query.then(vector))
            except Exception as error:
                query.future.set_exception(error)

    def _run_document_chunk(self, job: _DocumentJob) -> None:
        if not job.vectors and not job.future.set_running_or_notify_cancel():
            self._finish(job)
            return
        try:
            positions = self._next_chunk(job)
            chunk = [job.texts[i] for i in positions]
            began = time.monotonic()
            job.vectors.extend(self._embed_documents(chunk))
            took = time.monotonic() - began
            tokens = max(1, sum(job.tokens[i] for i in positions))
            self._per_token = 0.7 * self._per_token + 0.3 * took / tokens
        except Exception as error:
            self._finish(job)
            job.future.set_exception(error)
            return
        if len(job.vectors) >= len(job.texts):
            self._finish(job)
            job.future.set_result(job.result())

    def _next_chunk(self, job: _DocumentJob) -> list[int]:
        """The job's next positions: as many tokens as fit the chunk's model time, at least
        `MIN_CHUNK_TOKENS` (and one document), at most `MAX_CHUNK` documents."""
        quiet = time.monotonic() - self._last_query >= self._quiet
        seconds = QUIET_CHUNK_SECONDS if quiet else self._chunk_seconds
        budget = max(MIN_CHUNK_TOKENS, seconds / self._per_token)
        start = len(job.vectors)
        positions: list[int] = []
        tokens = 0
        for position in job.order[start : start + MAX_CHUNK]:
            tokens += job.tokens[position]
            if positions and tokens > budget:
                break
            positions.append(position)
        return positions

    def _finish(self, job: _DocumentJob) -> None:
        with self._ready:
            self._documents.remove(job)

    def _fail_pending(self, error: Exception) -> None:
        for query in self._queries:
            if query.future.set_running_or_notify_cancel():
                query.future.set_exception(error)
        for job in self._documents:
            if job.vectors or job.future.set_running_or_notify_cancel():
                job.future.set_exception(error)
        for _, call in self._calls:
            call.set_exception(error)
        self._queries.clear()
        self._documents.clear()
        self._calls.clear()


def _characters(texts: Sequence[str]) -> list[int]:
    return [len(text) for text in texts]
