"""The usage recorder: notes merge to the latest use, a failed flush keeps them, and the
pending set is bounded while the database is away."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest

from memory_service.memories.workers import usage
from memory_service.memories.workers.usage import UsageRecorder

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)


class Store:
    def __init__(self) -> None:
        self.batches: list[dict[tuple[str, str], datetime]] = []
        self.failing = False

    def record(self, uses: Mapping[tuple[str, str], datetime]) -> None:
        if self.failing:
            raise ConnectionError("database away")
        self.batches.append(dict(uses))


def test_notes_keep_the_latest_use_and_a_flush_writes_them_once() -> None:
    store = Store()
    recorder = UsageRecorder(store)
    recorder.note("t", ["a", "b"], T0 + timedelta(seconds=2))
    recorder.note("t", ["a"], T0)  # an earlier read finishing late
    recorder.note("u", ["a"], T0)
    assert recorder.flush() == 3
    assert store.batches == [
        {("t", "a"): T0 + timedelta(seconds=2), ("t", "b"): T0 + timedelta(seconds=2),
         ("u", "a"): T0}
    ]  # fmt: skip
    assert recorder.flush() == 0
    assert len(store.batches) == 1


def test_a_failed_flush_keeps_its_notes_for_the_next_one() -> None:
    store = Store()
    recorder = UsageRecorder(store)
    recorder.note("t", ["a"], T0)
    store.failing = True
    with pytest.raises(ConnectionError):
        recorder.flush()
    recorder.note("t", ["a"], T0 + timedelta(seconds=1))
    store.failing = False
    assert recorder.flush() == 1
    assert store.batches == [{("t", "a"): T0 + timedelta(seconds=1)}]


def test_pending_notes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage, "MAX_PENDING", 3)
    recorder = UsageRecorder(Store())
    recorder.note("t", ["a", "b", "c", "d", "e"], T0)
    recorder.note("t", ["a"], T0 + timedelta(seconds=1))  # known ids still move forward
    assert recorder.dropped == 2
    assert recorder.flush() == 3


def test_stop_writes_what_is_pending() -> None:
    store = Store()
    recorder = UsageRecorder(store, flush_seconds=3600)
    recorder.start()
    recorder.note("t", ["a"], T0)
    recorder.stop()
    assert store.batches == [{("t", "a"): T0}]
