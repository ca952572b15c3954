"""The outbox drain stepped by hand, for tests: the service runs it on its own thread."""

from __future__ import annotations

from memory_service.memories.workers.outbox import OutboxWorker


def drain_once(worker: OutboxWorker) -> int:
    """One batch, start to finish: leased, read, written to the index, settled. Returns how
    many items were leased (0: none was due)."""
    batch = worker._prepare()
    if batch is None:
        return 0
    return worker._settle(batch, worker._send(batch))
