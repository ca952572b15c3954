"""A sidecar whose health keeps answering SERVING while no search ever comes back (a wedged
query path), asked by one caller at a time who sets no deadline: the memory service runs as
its own process at its defaults, the sidecar is a stand-in that can be wedged this way.

Each such search waits out the 5 s timeout, so the breaker's 10 s window never holds its five
calls, and the health poll sees nothing wrong. Before, every caller waited the timeout for as
long as the wedge lasted; now two misses in a row open the breaker, and only the breaker's
trial, once per reset, waits again."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import grpc
from crmmem.memory.v1 import memory_service_pb2

from tests.conftest import memory_env
from tests.support.servers import Client, database_url, start_server
from tests.support.stand_in_sidecar import serve_stand_in

SEARCH_TIMEOUT = 5.0  # the default MEMORY_RECALL_TIMEOUT_MS, left as it is
RESET = 2.0  # the default MEMORY_BREAKER_RESET_SECONDS
SLOW = 1.0


def _recall(client: Client) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query="net-30 terms", limit=5)
    )


def test_searches_wedged_behind_a_serving_health_stop_costing_every_caller_the_timeout(
    tmp_path: Path,
) -> None:
    with serve_stand_in() as stand_in, database_url("sqlite", tmp_path)() as url:
        memory = start_server(
            "memory_service",
            memory_env(url, MEMORY_RETRIEVAL_ADDRESS=stand_in.address),
            tmp_path / "memory",
        )
        try:
            mara = memory.client("acme", "mara")
            assert not _recall(mara).degraded, "the stand-in answers before it is wedged"
            searches_before = stand_in.searches
            stand_in.searches_hung.set()
            wedged_at = time.monotonic()
            took: list[float] = []
            while time.monotonic() - wedged_at < 25:
                began = time.monotonic()
                reply = _recall(mara)
                took.append(time.monotonic() - began)
                assert reply.degraded, "no search came back"
                time.sleep(0.05)
            elapsed = time.monotonic() - wedged_at
        finally:
            stand_in.released.set()
            memory.stop()
    slow = [t for t in took if t > SLOW]
    print(
        f"\nwedged searches, one caller, no deadline: {len(took)} answers in {elapsed:.0f} s, "
        f"{len(slow)} slower than {SLOW:.0f} s; {stand_in.searches - searches_before} searches"
    )
    # Two misses open it; then one trial per reset spell and timeout waits again.
    assert len(slow) <= 2 + elapsed / (RESET + SEARCH_TIMEOUT - 1) + 1, took
    assert len(took) >= 20, f"only {len(took)} answers: callers kept waiting the timeout"
    # The refused callers never reached the stand-in.
    assert stand_in.searches - searches_before <= len(slow) + 1


def test_a_tenant_whose_searches_hang_cannot_switch_recall_off_for_others(
    tmp_path: Path,
) -> None:
    """A signed-in tenant whose own searches never come back (the stand-in hangs them; a real
    sidecar could be slow for one tenant's data) sends them two and three at a time, without a
    deadline, while another tenant recalls: the attacker's misses finish side by side, but the
    other tenant's searches sent after them were answered, so the breaker stays closed, and its
    trial (a probe of the service's own) is never theirs to decide."""
    with serve_stand_in() as stand_in, database_url("sqlite", tmp_path)() as url:
        stand_in.hung_tenants.add("evil")
        memory = start_server(
            "memory_service",
            memory_env(url, MEMORY_RETRIEVAL_ADDRESS=stand_in.address),
            tmp_path / "memory",
        )
        stop = threading.Event()
        try:
            mara, eve = memory.client("acme", "mara"), memory.client("evil", "eve")
            assert not _recall(mara).degraded

            def attack() -> None:
                while not stop.is_set():
                    with contextlib.suppress(grpc.RpcError):  # the server stopping at the end
                        _recall(eve)

            attackers = [threading.Thread(target=attack) for _ in range(3)]
            for thread in attackers:
                thread.start()
            degraded = answered = 0
            began = time.monotonic()
            while time.monotonic() - began < 15:
                reply = _recall(mara)
                degraded += reply.degraded
                answered += 1
                time.sleep(0.02)
        finally:
            stop.set()
            stand_in.released.set()
            memory.stop()
        for thread in attackers:
            thread.join(10)
    print(f"\nanother tenant's recall beside hung searches: {degraded} of {answered} degraded")
    assert answered > 50
    assert degraded == 0
