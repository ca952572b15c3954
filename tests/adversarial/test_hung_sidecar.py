"""A hung sidecar (SIGSTOP: the port accepts, nothing answers) and callers that set no deadline.

Such a caller waits for the memory service's own search timeout on every call that goes out to
the sidecar. The health poll is what can tell "hung" from "slow" without a caller paying for it:
a health check is answered off the model thread in milliseconds, so one that misses its own
timeout twice in a row means the process is stuck. Then the breaker must open, and callers get
a degraded answer at once instead of one full timeout after another; once the sidecar runs
again, recall comes back without a restart.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from crmmem.memory.v1 import memory_service_pb2

from tests.conftest import BACKENDS, memory_with_own_sidecar
from tests.e2e.helpers import create_pref
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess

SEARCH_TIMEOUT = 5.0  # the default MEMORY_RECALL_TIMEOUT_MS, left as it is
# The breaker's trial lets one call through now and then; a stuck process must keep it shut.
FAST = 1.0


@pytest.fixture(params=BACKENDS)
def hung_stack(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with memory_with_own_sidecar(request.param, tmp_path) as pair:
        yield pair


def _recall(client: Client, timeout: float | None) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query="shirt colour", limit=5), timeout=timeout
    )


def _found(client: Client) -> bool:
    reply = _recall(client, 30)
    return any(r.memory.applicable_revision.value == "prefers blue shirts" for r in reply.memories)


def _wait(client: Client, seconds: float) -> None:
    eventually(lambda: _found(client), seconds, "the memory was never recalled", interval=0.05)


def test_hung_sidecar_opens_the_breaker_for_callers_without_a_deadline(
    hung_stack: tuple[ServerProcess, ServerProcess],
) -> None:
    memory, sidecar = hung_stack
    mara = memory.client("acme", "mara")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    _wait(mara, 60)

    os.kill(sidecar.process.pid, signal.SIGSTOP)
    hung_at = time.monotonic()
    took: list[float] = []
    try:
        # One sequential caller with no deadline of its own, for 20 s of hang and at least 51
        # answers (a machine too busy to give them in 20 s keeps the sidecar hung longer).
        while time.monotonic() - hung_at < 20 or (
            len(took) <= 50 and time.monotonic() - hung_at < 120
        ):
            began = time.monotonic()
            reply = _recall(mara, None)
            took.append(time.monotonic() - began)
            assert reply.degraded, "a stopped sidecar cannot have answered"
            time.sleep(0.05)
    finally:
        os.kill(sidecar.process.pid, signal.SIGCONT)
    slow = [t for t in took if t > FAST]
    print(
        f"\nhung sidecar, no caller deadline: {len(took)} answers in "
        f"{time.monotonic() - hung_at:.0f} s, "
        f"{len(slow)} slower than {FAST:.0f} s ({', '.join(f'{t:.1f}' for t in slow)})"
    )
    # The calls already out when it hung wait the search timeout; after that the health poll
    # has opened the breaker and keeps it open while the process stays stuck.
    assert sum(slow) <= SEARCH_TIMEOUT + 1.5, f"slow answers took {sum(slow):.1f} s in all"
    # Without a deadline of its own, a caller has the search timeout as one: the search gives
    # up in time for the degraded answer to be back by then (+ 5 ms, SPEC's budget).
    assert max(took) <= SEARCH_TIMEOUT + 0.005, f"the slowest answer took {max(took):.4f} s"
    assert len(took) > 50

    resumed = time.monotonic()
    _wait(mara, 10)
    print(f"full recall {time.monotonic() - resumed:.2f} s after SIGCONT")
