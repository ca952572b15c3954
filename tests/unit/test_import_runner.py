"""The import worker wakes the outbox drain when a batch it processed queued index work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest

from memory_service.imports.workers.imports import ImportRunner


class Queue:
    def __init__(self) -> None:
        self.batches = [("acme", "b1")]

    def lease(self, owner: str, now: datetime, lease: float) -> tuple[str, str] | None:
        return self.batches.pop() if self.batches else None


class Outbox:
    queued_now = False


class Uow:
    def __init__(self) -> None:
        self.outbox = Outbox()
        self.committed = False

    def commit(self) -> None:
        self.committed = True


class Imports:
    def __init__(self, writes_memories: bool) -> None:
        self.writes_memories = writes_memories

    def process(self, uow: Uow, batch_id: str, now: datetime) -> None:
        uow.outbox.queued_now = self.writes_memories  # a restore queues its memories


@pytest.mark.parametrize("writes_memories", [True, False])
def test_a_processed_batch_that_queued_index_work_wakes_the_drain(writes_memories: bool) -> None:
    woken: list[bool] = []

    @contextmanager
    def units(tenant_id: str, write: bool = False) -> Iterator[Uow]:
        yield Uow()

    imports: Any = Imports(writes_memories)
    queue: Any = Queue()
    factory: Any = units
    runner = ImportRunner(queue, factory, imports, index_work_committed=lambda: woken.append(True))
    assert runner.run_once()
    assert woken == ([True] if writes_memories else [])
