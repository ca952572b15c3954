"""Micro-batching of query embeddings: concurrent searches share one forward pass."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

MAX_BATCH = 32


class QueryBatcher:
    def __init__(
        self,
        embed: Callable[[Sequence[str]], list[list[float]]],
        executor: Executor,
        wait_seconds: float,
    ) -> None:
        self._embed = embed
        self._executor = executor
        self._wait = wait_seconds
        self._queue: asyncio.Queue[tuple[str, asyncio.Future[list[float]]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def embed(self, text: str) -> list[float]:
        future: asyncio.Future[list[float]] = asyncio.get_running_loop().create_future()
        await self._queue.put((text, future))
        return await future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            deadline = loop.time() + self._wait
            while len(batch) < MAX_BATCH:
                timeout = deadline - loop.time()
                if timeout <= 0 and self._queue.empty():
                    break
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), max(timeout, 0)))
                except TimeoutError:
                    break
            try:
                vectors = await loop.run_in_executor(
                    self._executor, self._embed, [text for text, _ in batch]
                )
            except Exception as error:  # each waiting search gets the failure
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future), vector in zip(batch, vectors, strict=True):
                if not future.done():
                    future.set_result(vector)
