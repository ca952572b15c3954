"""PostgreSQL stopped like a crash and started again under write load: clients see only success or
UNAVAILABLE with a reason they can act on (DATABASE_UNAVAILABLE: nothing was changed;
OUTCOME_UNKNOWN: retry with the same request_id), health says NOT_SERVING while the database is
gone, and writes retried with their request id land exactly once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import memory_service_pb2, transcript_service_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from memory_service.server import LIVENESS_SERVICE
from tests.conftest import memory_env
from tests.e2e.helpers import (
    USER,
    draft,
    error_info,
    list_all,
    memory_spec,
    new_conversation,
    request_id,
)
from tests.support.postgres import PostgresCluster
from tests.support.servers import Client, ServerProcess, start_server

pytestmark = pytest.mark.timeout(300)
WORKERS = 4
OUTAGES = 2
# After the last restart the writers go on until every one has landed writes again and there
# were enough writes to mean anything, for at most this long (a loaded machine writes slowly).
RECOVERY_SECONDS = 60
MIN_WRITES = 21
REASONS = {"DATABASE_UNAVAILABLE", "OUTCOME_UNKNOWN"}


@pytest.fixture
def cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def server(cluster: PostgresCluster, tmp_path: Path) -> Iterator[ServerProcess]:
    env = memory_env(cluster.url, MEMORY_DATABASE_PROBE_SECONDS="0.5")
    server = start_server("memory_service", env, tmp_path)
    yield server
    server.stop()


def failure_of(err: grpc.RpcError) -> tuple[grpc.StatusCode, str, str]:
    """A failed call as (code, ErrorInfo reason, message). A status the client made itself (its
    own deadline passed) carries no details: it is recorded, not allowed to end the writer."""
    assert isinstance(err, grpc.Call), err
    if rpc_status.from_call(err) is None:
        return err.code(), "", err.details() or ""
    info = error_info(err)
    return info.code, info.reason, info.message


# What a client retries with the same request id: the server's UNAVAILABLE, and its own deadline
# (the outcome is unknown). Anything else is an answer: retrying it cannot change it.
RETRIED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


class Writer(threading.Thread):
    """Appends messages and creates memories from them, each with its own request id, retrying
    every retryable failure with the same request id until it succeeds. The texts hold no random
    ids: a long run of digits in one can pass the card-number check and be refused as a secret."""

    def __init__(self, number: int, client: Client, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.number = number
        self.client = client
        self.stop_event = stop
        self.conversation = new_conversation()
        self.texts: list[str] = []
        self.keys: list[str] = []
        self.failures: list[tuple[grpc.StatusCode, str, str]] = []
        self.gave_up: list[str] = []
        self.refused: list[str] = []
        # (request id, monotonic time, code, reason, message) per failure
        self.history: list[tuple[str, float, grpc.StatusCode, str, str]] = []

    def until_done(self, call: Callable[[str], Any]) -> Any:
        rid = request_id()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                return call(rid)
            except grpc.RpcError as err:
                self.failures.append(failure_of(err))
                self.history.append((rid, time.monotonic(), *self.failures[-1]))
                if self.failures[-1][0] not in RETRIED:
                    self.refused.append(rid)
                    return None
                time.sleep(0.1)
        self.gave_up.append(rid)
        return None

    def run(self) -> None:
        number = 0
        while not self.stop_event.is_set():
            number += 1
            text = f"note {number} from writer {self.number}"
            message = self.until_done(
                lambda rid, text=text: self.client.transcript.AppendMessage(
                    transcript_service_pb2.AppendMessageRequest(
                        parent=self.conversation,
                        message=transcript_service_pb2.Message(speaker=USER, text=text),
                        request_id=rid,
                    ),
                    timeout=15,
                )
            )
            if message is None:
                return
            self.texts.append(text)
            key = f"note_{number}"
            created = self.until_done(
                lambda rid, key=key, text=text, name=message.message.name: (
                    self.client.memories.CreateMemory(
                        memory_service_pb2.CreateMemoryRequest(
                            memory=memory_spec(key), revision=draft(text, name), request_id=rid
                        ),
                        timeout=15,
                    )
                )
            )
            if created is None:
                return
            self.keys.append(key)


def texts_of(client: Client, conversation: str) -> list[str]:
    texts: list[str] = []
    token = ""
    while True:
        reply = client.transcript.ListMessages(
            transcript_service_pb2.ListMessagesRequest(
                parent=conversation, page_size=1000, page_token=token
            ),
            timeout=10,
        )
        texts.extend(m.text for m in reply.messages)
        token = reply.next_page_token
        if not token:
            return texts


def health_status(channel: grpc.Channel, service: str = "") -> str:
    try:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=2
        )
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
    except grpc.RpcError as err:
        return str(err.code().name)


def wait_for(channel: grpc.Channel, status: str, timeout: float) -> float:
    started = time.monotonic()
    while health_status(channel) != status:
        assert time.monotonic() - started < timeout, f"health never became {status}"
        time.sleep(0.05)
    return time.monotonic() - started


def stuck_report(
    writers: list[Writer], server: ServerProcess, events: list[tuple[float, str]]
) -> str:
    """What each writer that gave up (or was refused) saw for its request id, its last 30
    errors timed from the test's start like the outages, and the end of the server's log, so a
    failure explains itself."""
    start = events[0][0]
    lines = [f"t={at - start:7.2f}s {what}" for at, what in events]
    for writer in writers:
        ended = [("gave up on", rid) for rid in writer.gave_up]
        ended += [("was refused on", rid) for rid in writer.refused]
        for what, rid in ended:
            seen = [h for h in writer.history if h[0] == rid]
            lines.append(
                f"writer {writer.number} {what} request_id {rid} after {len(seen)} errors:"
            )
            lines.extend(
                f"  t={at - start:7.2f}s {code.name} {reason or '-'}: {message}"
                for _, at, code, reason, message in seen[-30:]
            )
    lines.append("server log (last 80 lines):")
    lines.extend(server.log().splitlines()[-80:])
    return "\n".join(lines)


def test_postgres_stopped_and_started_under_write_load(
    cluster: PostgresCluster, server: ServerProcess, tenant: str
) -> None:
    stop = threading.Event()
    writers = [Writer(i, server.client(tenant, f"user{i}"), stop) for i in range(WORKERS)]
    health = server.channel()
    events = [(time.monotonic(), "writers start")]
    for writer in writers:
        writer.start()
    time.sleep(1.5)
    for _ in range(OUTAGES):
        cluster.stop()
        events.append((time.monotonic(), "PostgreSQL stopped"))
        wait_for(health, "NOT_SERVING", timeout=5)
        time.sleep(2)
        assert health_status(health) == "NOT_SERVING"
        # What the liveness probe asks: an outage must not restart the container.
        assert health_status(health, LIVENESS_SERVICE) == "SERVING"
        cluster.start()
        events.append((time.monotonic(), "PostgreSQL started"))
        wait_for(health, "SERVING", timeout=10)
        events.append((time.monotonic(), "health SERVING"))
        time.sleep(2)
    before = [len(w.keys) for w in writers]
    deadline = time.monotonic() + RECOVERY_SECONDS
    while (
        time.monotonic() < deadline
        and all(w.is_alive() for w in writers)
        and not (
            all(len(w.keys) > n for w, n in zip(writers, before, strict=True))
            and sum(len(w.texts) for w in writers) >= MIN_WRITES
        )
    ):
        time.sleep(0.1)
    stop.set()
    events.append((time.monotonic(), "writers told to stop"))
    for writer in writers:
        writer.join(90)
        assert not writer.is_alive()

    failures = [f for writer in writers for f in writer.failures]
    if any(w.gave_up or w.refused for w in writers):
        report = stuck_report(writers, server, events)
        print(report)
        pytest.fail(f"a write never succeeded on retry\n{report}")
    seen = Counter((code.name, reason) for code, reason, _ in failures)
    print("failures seen by clients:", dict(seen))
    assert failures, "the outages were never noticed by a client"
    assert {code for code, _, _ in failures} == {grpc.StatusCode.UNAVAILABLE}, seen
    assert {reason for _, reason, _ in failures} <= REASONS, seen
    for _code, reason, message in failures:
        if reason == "OUTCOME_UNKNOWN":
            assert "same request_id" in message
            assert "nothing was changed" not in message

    # Every write landed exactly once, whichever attempt applied it.
    for writer, user in zip(writers, (f"user{i}" for i in range(WORKERS)), strict=True):
        client = server.client(tenant, user)
        assert texts_of(client, writer.conversation) == writer.texts
        assert sorted(m.key for m in list_all(client)) == sorted(writer.keys)
    assert sum(len(w.texts) for w in writers) >= MIN_WRITES, "too little load to mean anything"

    # The import worker polls every 2 s through each outage: one line when it loses the
    # database and one when it is back, never a traceback per poll.
    log = server.log()
    assert "Traceback" not in log
    down = log.count("import worker: the database cannot be reached")
    back = log.count("import worker: the database answers again")
    assert 1 <= down <= OUTAGES, log
    assert back <= down, log
