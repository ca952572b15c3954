"""The threads that run the server's handlers: the one that went idle last takes the next call.

`concurrent.futures.ThreadPoolExecutor` wakes whichever idle worker the queue's lock picks,
which in practice rotates through all of them: after a burst of concurrent calls had started
sixteen threads, sequential calls each ran on a cold thread, and a recall refused at once by
the open breaker cost the server 10-20% more CPU than on a server that had only ever started
one. Here idle workers form a stack, so a quiet stream of calls keeps running on one warm
thread, and a burst still gets up to `max_workers` threads at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Worker:
    """An idle worker waits on its own lock; whoever hands it work puts it in `work` and
    releases the lock (None: the pool shut down)."""

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        self.work: _Work | None = None


class LastIdleFirstPool(ThreadPoolExecutor):
    """A `ThreadPoolExecutor` (gRPC takes one) whose idle workers are reused last-in first-out.
    Work beyond `max_workers` waits in submission order."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._limit = max_workers
        self._prefix = thread_name_prefix or "pool"
        self._guard = threading.Lock()
        self._idle: list[_Worker] = []  # a stack: the last to go idle is woken first
        self._waiting: deque[_Work] = deque()
        self._started: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        work: _Work = (future, fn, args, kwargs)
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._idle:
                worker = self._idle.pop()
                worker.work = work
                worker.wake.release()
            elif len(self._started) < self._limit:
                thread = threading.Thread(
                    target=self._run,
                    args=(_Worker(), work),
                    name=f"{self._prefix}_{len(self._started)}",
                    daemon=True,
                )
                thread.start()  # counted once running: one that cannot start takes no slot
                self._started.append(thread)
            else:
                self._waiting.append(work)
        return future

    def _run(self, worker: _Worker, work: _Work | None) -> None:
        while work is not None:
            future, fn, args, kwargs = work
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs, work  # no reference held while idle
            with self._guard:
                if self._waiting:
                    work = self._waiting.popleft()
                    continue
                if self._closed:
                    return
                self._idle.append(worker)
            worker.wake.acquire()
            work, worker.work = worker.work, None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Idle workers end at once, busy ones after the work still waiting (cancelled with
        `cancel_futures`)."""
        with self._guard:
            self._closed = True
            if cancel_futures:
                while self._waiting:
                    self._waiting.popleft()[0].cancel()
            while self._idle:
                self._idle.pop().wake.release()  # its work is None: it ends
            threads = list(self._started)
        super().shutdown(wait=False)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
