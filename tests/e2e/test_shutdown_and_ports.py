"""Stopping and starting: SIGTERM reports NOT_SERVING for a drain window while calls still succeed,
then refuses calls and exits 0; a second instance on a port in use exits with one clear line."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import memory_service_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.conftest import memory_env, retrieval_env, start_retrieval
from tests.support.servers import ServerProcess, database_url, start_server

pytestmark = pytest.mark.timeout(300)
DRAIN = 2.0
NOT_SERVING = "NOT_SERVING"


@dataclass
class Observation:
    at: float  # seconds after SIGTERM
    health: str
    call: str  # "OK" or the status code of a failed call


def health_of(stub: health_pb2_grpc.HealthStub) -> str:
    try:
        reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
    except grpc.RpcError as err:
        return str(err.code().name)


def watch_sigterm(server: ServerProcess, call: Callable[[grpc.Channel], None]) -> list[Observation]:
    """SIGTERM, then poll health and make a call every ~20 ms until the process exits."""
    channel = grpc.insecure_channel(server.address)
    health = health_pb2_grpc.HealthStub(channel)
    assert health_of(health) == "SERVING"
    observations = []
    sent = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    while server.process.poll() is None and time.monotonic() - sent < 30:
        status = health_of(health)
        try:
            call(channel)
            outcome = "OK"
        except grpc.RpcError as err:
            outcome = err.code().name
        observations.append(Observation(time.monotonic() - sent, status, outcome))
        time.sleep(0.02)
    channel.close()
    return observations


def sampling_gap(observations: list[Observation]) -> float:
    """The longest time between two observations (from SIGTERM on): no moment is seen more
    precisely than this. A few milliseconds on a quiet machine; on a busy one, where a health
    check and a call can take a few hundred, the bounds below widen by it and no more."""
    times = [0.0] + [o.at for o in observations]
    return max(later - earlier for earlier, later in itertools.pairwise(times))


def assert_window(seen: list[Observation], observations: list[Observation], drain: float) -> None:
    """`seen` (the observations in the drain window) begin at once after SIGTERM and span the
    drain window, as far as observations this far apart can tell."""
    gap = sampling_gap(observations)
    assert seen[0].at < max(0.5, 2 * gap), ("NOT_SERVING came late", gap, observations[:5])
    window = seen[-1].at - seen[0].at
    assert window >= drain * 0.8 - 2 * gap, f"NOT_SERVING while serving for {window:.2f}s only"


def assert_drained(observations: list[Observation], drain: float, code: int | None) -> None:
    draining = [o for o in observations if o.health == NOT_SERVING and o.call == "OK"]
    assert draining, observations[:5]
    assert_window(draining, observations, drain)
    assert all(o.health != "SERVING" for o in observations if o.at > draining[0].at)
    later = [o for o in observations if o.at > draining[-1].at]
    assert all(o.call != "OK" for o in later), "a call succeeded after the drain window"
    assert code == 0


@pytest.fixture
def private_server(tmp_path: Path) -> Iterator[ServerProcess]:
    with database_url("sqlite", tmp_path)() as url:
        env = memory_env(url, MEMORY_SHUTDOWN_DRAIN_SECONDS=str(DRAIN))
        server = start_server("memory_service", env, tmp_path)
        yield server
        server.stop()


def test_sigterm_reports_not_serving_for_the_drain_window_while_calls_succeed(
    private_server: ServerProcess, tenant: str
) -> None:
    client = private_server.client(tenant, "alice")

    def list_memories(_channel: grpc.Channel) -> None:
        client.memories.ListMemories(memory_service_pb2.ListMemoriesRequest(), timeout=2)

    observations = watch_sigterm(private_server, list_memories)
    private_server.process.wait(30)
    assert_drained(observations, DRAIN, private_server.process.returncode)
    assert "memory service stopped" in private_server.log()


def second_instance(
    module: str, env: dict[str, str], workdir: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, "serve"],
        env={**os.environ, **env},
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_refused(result: subprocess.CompletedProcess[str], name: str, address: str) -> None:
    assert result.returncode == 1, result
    ours = [line for line in result.stderr.splitlines() if line.startswith(f"{name}: ")]
    assert ours == [f"{name}: cannot listen on {address}: the address is in use by another "
                    "process or not available on this host"], result.stderr  # fmt: skip
    assert "Traceback" not in result.stderr + result.stdout


def test_a_second_memory_service_on_a_used_port_exits_with_a_clear_message(
    private_server: ServerProcess, tmp_path: Path, tenant: str
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    env = memory_env(f"sqlite:///{other / 'memory.db'}", MEMORY_LISTEN=private_server.address)
    result = second_instance("memory_service", env, other)
    assert_refused(result, "memory service", private_server.address)
    # The first instance still has every connection.
    client = private_server.client(tenant, "alice")
    for _ in range(20):
        client.memories.ListMemories(memory_service_pb2.ListMemoriesRequest(), timeout=5)


def test_sidecar_refuses_a_used_port_and_drains_on_sigterm(tmp_path: Path) -> None:
    sidecar = start_retrieval(tmp_path / "first", RETRIEVAL_SHUTDOWN_DRAIN_SECONDS=str(DRAIN))
    try:
        result = second_instance(
            "retrieval_service",
            retrieval_env(tmp_path / "second", listen=sidecar.address),
            tmp_path,
        )
        assert_refused(result, "retrieval service", sidecar.address)

        # Health answering NOT_SERVING is the call that still succeeds during the window.
        def nothing(_channel: grpc.Channel) -> None:
            return None

        observations = watch_sigterm(sidecar, nothing)
        answered = [o for o in observations if o.health == NOT_SERVING]
        assert answered, observations[:5]
        assert_window(answered, observations, DRAIN)
        sidecar.process.wait(30)
        assert sidecar.process.returncode == 0
    finally:
        sidecar.stop()
