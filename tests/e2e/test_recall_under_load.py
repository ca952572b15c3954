"""Recall that stays up while the machine is busy, and comes back as soon as the sidecar does.

Both services run as separate processes with the real model, at the default recall settings
(no timeout, breaker or margin overrides): ingest at full speed leaves recall full; a sidecar
killed with SIGKILL degrades recall within its deadline and full recall (including what was
written meanwhile) returns within 2 s of the sidecar reporting SERVING; a sidecar killed during
ingest is fully indexed within seconds of its return; a hung sidecar (SIGSTOP) gives callers
with a 200 ms deadline degraded answers, never DEADLINE_EXCEEDED. Other test runs on the same
two cores are part of the point: these must hold on a busy machine. Where a machine is so busy
that a call doing nothing of recall's (listing one memory) takes a good share of 200 ms, the
short deadline is sized to it (tests/support/pace.py): an answer given at once would miss a
200 ms deadline there whatever the service did.
"""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_service_pb2
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from tests.conftest import memory_env, start_retrieval
from tests.e2e.helpers import create_pref
from tests.support.outbox import queued
from tests.support.pace import StallWatch, deadline_for, slowest_round_trip
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess, database_url, sidecar_stub, start_server

RECOVERY_BUDGET = 2.0  # seconds from the sidecar reporting SERVING to full recall


@dataclass
class Stack:
    """A memory service at default recall settings with a sidecar of its own."""

    memory: ServerProcess
    sidecar_dir: Path
    listen: str
    sidecar: ServerProcess
    stopped: list[int] = field(default_factory=list)

    def kill_sidecar(self) -> None:
        os.kill(self.sidecar.process.pid, signal.SIGKILL)
        self.sidecar.process.wait()

    def restart_sidecar(self) -> float:
        """Starts the sidecar on the same address; returns when it was first seen SERVING."""
        self.sidecar = start_retrieval(self.sidecar_dir, RETRIEVAL_LISTEN=self.listen)
        return time.monotonic()

    def points(self) -> int:
        stub = sidecar_stub(self.sidecar.address)
        return int(stub.GetStats(rpb.GetStatsRequest(), timeout=10).points)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    sidecar_dir = tmp_path / "sidecar"
    sidecar = start_retrieval(sidecar_dir)
    with database_url("sqlite", tmp_path)() as url:
        memory = start_server(
            "memory_service",
            memory_env(url, MEMORY_RETRIEVAL_ADDRESS=sidecar.address),
            tmp_path / "memory",
        )
        running = Stack(memory, sidecar_dir, sidecar.address, sidecar)
        try:
            yield running
        finally:
            if running.sidecar.process.poll() is None:
                os.kill(running.sidecar.process.pid, signal.SIGCONT)
            memory.stop()
            running.sidecar.stop()


def recall(
    client: Client, query: str, timeout: float = 10
) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query=query, limit=5), timeout=timeout
    )


def values(reply: memory_service_pb2.RecallMemoriesResponse) -> list[str]:
    return [r.memory.applicable_revision.value for r in reply.memories]


def list_one(client: Client) -> None:
    """A call that does no search: what any call costs the machine now."""
    client.memories.ListMemories(memory_service_pb2.ListMemoriesRequest(page_size=1), timeout=30)


def short_deadline(client: Client, callers: int = 1) -> float:
    """200 ms, or what the machine's load alone needs for an answer given at once: a second
    of `callers` threads listing one memory (no search) shows it."""
    slowest = slowest_round_trip(lambda: list_one(client), callers)
    deadline = deadline_for(0.2, slowest)
    print(f"\nslowest listing {slowest * 1000:.0f} ms: short deadline {deadline * 1000:.0f} ms")
    return deadline


def first_memory_recalled(stack: Stack) -> Client:
    """Mara, once her first memory is indexed and recalled."""
    mara = stack.memory.client("acme", "mara")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    eventually(
        lambda: "prefers blue shirts" in values(recall(mara, "shirt colour")),
        60,
        "the first memory was never recalled",
        interval=0.02,
    )
    return mara


class Ingest:
    """Writer threads creating memories through the API as fast as they can."""

    def __init__(self, stack: Stack, writers: int = 4) -> None:
        self._clients = [stack.memory.client("acme", f"writer-{n}") for n in range(writers)]
        self._stop = threading.Event()
        self.created = 0
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._write, args=(c,), daemon=True) for c in self._clients
        ]

    def _write(self, client: Client) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            create_pref(client, f"note_{n}", f"{client.user} noted item {n}: ships on day {n % 28}")
            with self._lock:
                self.created += 1

    def __enter__(self) -> Ingest:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


def test_recall_stays_full_while_ingest_runs_at_full_speed(stack: Stack) -> None:
    mara = first_memory_recalled(stack)
    points_before = stack.points()
    latencies: list[float] = []
    degraded: list[str] = []
    with Ingest(stack) as ingest:
        time.sleep(1)  # let ingest reach full speed
        started = time.monotonic()
        while time.monotonic() - started < 20:
            began = time.perf_counter()
            reply = recall(mara, "what shirt colour does she like?")
            latencies.append(time.perf_counter() - began)
            if reply.degraded:
                degraded.append(reply.degraded_reason)
            else:
                assert "prefers blue shirts" in values(reply)
    indexed = stack.points() - points_before
    p95 = sorted(latencies)[int(0.95 * (len(latencies) - 1))]
    print(
        f"\nrecall under ingest: {len(latencies)} recalls, {len(degraded)} degraded, "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; "
        f"{ingest.created} memories written, {indexed} indexed meanwhile"
    )
    # The rates depend on how busy the machine is; what matters is that both ran throughout.
    assert ingest.created >= 20, "ingest never got going"
    assert indexed > 0, "the sidecar embedded documents while recall ran"
    assert degraded == [], (
        f"{len(degraded)} degraded answers with a healthy sidecar: {degraded[:3]}"
    )


def test_killed_sidecar_degrades_within_deadline_and_recall_returns_within_2s(
    stack: Stack,
) -> None:
    mara = first_memory_recalled(stack)
    stack.kill_sidecar()
    short = short_deadline(mara)
    # A recall caught in a stall of the whole machine (a call without search as slow, at the
    # same moment) is made again: five must answer in time, up to 20 tries.
    control = stack.memory.client("acme", "control")
    with StallWatch(lambda: list_one(control)) as watch:
        for timeout in (short, 1.0, 5.0):
            quick = tries = 0
            while quick < 5:
                tries += 1
                began = time.perf_counter()
                try:
                    reply = recall(mara, "shirt colour", timeout=timeout)
                except grpc.RpcError as error:
                    ended = time.perf_counter()
                    if tries < 20 and watch.stalled(began, ended, short / 3):
                        continue
                    raise AssertionError(
                        f"{error.code().name} after {ended - began:.3f}s"
                    ) from error
                elapsed = time.perf_counter() - began
                assert reply.degraded
                assert reply.memories == []
                late = elapsed >= min(timeout, 1.0)
                if late and tries < 20 and watch.stalled(began, began + elapsed, short / 3):
                    continue
                assert elapsed < min(timeout, 1.0), f"degraded recall took {elapsed:.3f}s"
                quick += 1
    create_pref(mara, "tie_color", "prefers green ties")  # written while search is down
    eventually(
        lambda: any(q.last_error for q in queued(stack.memory.database_url, "acme")),
        30,
        "the outbox never tried to index the memory written during the outage",
        interval=0.05,
    )  # it has tried and is backing off

    serving = stack.restart_sidecar()
    found = eventually(
        lambda: "prefers green ties" in values(recall(mara, "which colour ties?")),
        30,
        "the memory written during the outage was never recalled",
        interval=0.02,
    )
    print(f"\nfull recall {found - serving:.2f}s after the sidecar reported SERVING")
    assert found - serving <= RECOVERY_BUDGET
    assert "prefers blue shirts" in values(recall(mara, "shirt colour"))


def test_sidecar_killed_during_ingest_is_fully_indexed_soon_after_it_returns(
    stack: Stack,
) -> None:
    points_before = stack.points()
    with Ingest(stack) as ingest:
        time.sleep(3)
        stack.kill_sidecar()
        time.sleep(4)
    written = ingest.created
    time.sleep(2)
    serving = stack.restart_sidecar()
    caught_up = eventually(
        lambda: stack.points() >= points_before + written,
        60,
        f"the index never caught up with {written} memories",
        interval=0.02,
    )
    print(
        f"\n{written} memories written around a sidecar kill; index complete "
        f"{caught_up - serving:.2f}s after it reported SERVING"
    )
    assert caught_up - serving <= 10


def test_hung_sidecar_gives_short_deadlines_degraded_answers_not_errors(stack: Stack) -> None:
    """Beside the callers, a control caller lists one memory (no search) throughout. A caller's
    error while a control call was itself slower than the deadline was sized for (a third of
    it) happened while the machine stalled every call, and says nothing about the service: it
    is reported, not counted. Every other error fails the test; on a quiet machine no control
    call comes near that, and a service that waited out the hung sidecar fails every call
    before its breaker opens, not only those in a stall."""
    mara = first_memory_recalled(stack)
    deadline = short_deadline(mara, callers=4)
    os.kill(stack.sidecar.process.pid, signal.SIGSTOP)
    errors: list[tuple[str, float, float]] = []
    answers: list[bool] = []
    took: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + 8

    def caller(n: int) -> None:
        client = stack.memory.client("acme", f"caller-{n}")
        while time.monotonic() < stop:
            began = time.perf_counter()
            try:
                if n % 2:
                    degraded = recall(client, "shirt colour", timeout=deadline).degraded
                else:
                    degraded = client.context.BuildContext(
                        ctx_pb.BuildContextRequest(query="shirt colour"), timeout=deadline
                    ).recall_degraded
            except grpc.RpcError as error:
                with lock:
                    kind = "recall" if n % 2 else "context"
                    errors.append((f"{kind} {error.code().name}", began, time.perf_counter()))
                continue
            with lock:
                answers.append(degraded)
                took.append(time.perf_counter() - began)
            time.sleep(0.02)  # callers, not a load generator

    try:
        control = stack.memory.client("acme", "control")
        with StallWatch(lambda: list_one(control)) as watch:
            threads = [threading.Thread(target=caller, args=(n,)) for n in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            described = [f"{what} {ended - began:.3f}s" for what, began, ended in errors]
            blamed = [
                text
                for text, (_, began, ended) in zip(described, errors, strict=True)
                if not watch.stalled(began, ended, deadline / 3)
            ]
    finally:
        os.kill(stack.sidecar.process.pid, signal.SIGCONT)
    took.sort()
    print(
        f"\nhung sidecar, {deadline * 1000:.0f} ms deadlines: {len(answers)} answers "
        f"(p50 {took[len(took) // 2] * 1000:.0f} ms, max {took[-1] * 1000:.0f} ms), "
        f"errors {described}, slowest control call {watch.slowest * 1000:.0f} ms"
    )
    assert blamed == [], f"errors while calls without search were quick: {blamed}"
    assert len(answers) > 20
    assert all(answers), "a hung sidecar cannot have answered"
    # Once it runs again, recall returns without any restart.
    eventually(
        lambda: "prefers blue shirts" in values(recall(mara, "shirt colour")),
        10,
        "recall never came back after the sidecar resumed",
        interval=0.02,
    )
