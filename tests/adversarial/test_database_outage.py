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


class Writer(threading.Thread):
    """Appends messages and creates memories from them, each with its own request id, retrying
    every failure with the same request id until it succeeds."""

    def __init__(self, client: Client, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.stop_event = stop
        self.conversation = new_conversation()
        self.texts: list[str] = []
        self.keys: list[str] = []
        self.failures: list[tuple[grpc.StatusCode, str, str]] = []
        self.gave_up: list[str] = []

    def until_done(self, call: Callable[[str], Any]) -> Any:
        rid = request_id()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                return call(rid)
            except grpc.RpcError as err:
                info = error_info(err)
                self.failures.append((info.code, info.reason, info.message))
                time.sleep(0.1)
        self.gave_up.append(rid)
        return None

    def run(self) -> None:
        number = 0
        while not self.stop_event.is_set():
            number += 1
            text = f"note {number} from {self.conversation}"
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


def health_status(channel: grpc.Channel) -> str:
    try:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=2
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


def test_postgres_stopped_and_started_under_write_load(
    cluster: PostgresCluster, server: ServerProcess, tenant: str
) -> None:
    stop = threading.Event()
    writers = [Writer(server.client(tenant, f"user{i}"), stop) for i in range(WORKERS)]
    health = server.channel()
    for writer in writers:
        writer.start()
    time.sleep(1.5)
    for _ in range(OUTAGES):
        cluster.stop()
        wait_for(health, "NOT_SERVING", timeout=5)
        time.sleep(2)
        assert health_status(health) == "NOT_SERVING"
        cluster.start()
        wait_for(health, "SERVING", timeout=10)
        time.sleep(2)
    stop.set()
    for writer in writers:
        writer.join(90)
        assert not writer.is_alive()

    failures = [f for writer in writers for f in writer.failures]
    assert not [w.gave_up for w in writers if w.gave_up], "a write never succeeded on retry"
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
    assert sum(len(w.texts) for w in writers) > 20, "too little load to mean anything"
