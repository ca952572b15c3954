"""A streaming RPC ends through the same metrics and error path as a unary one."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import memory_service_pb2 as service_pb
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from memory_service.kernel.domain.errors import NotFound
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.transport import rpc


class Aborted(Exception):
    pass


class FakeContext:
    def __init__(self) -> None:
        self.status: Any = None

    def time_remaining(self) -> float | None:
        return None

    def set_code(self, code: grpc.StatusCode) -> None:
        pass

    def set_details(self, details: str) -> None:
        pass

    def abort_with_status(self, status: Any) -> None:
        self.status = status
        raise Aborted


class FakeAuthenticator:
    def authenticate(self, context: Any) -> Identity:
        return Identity("t1", "mara")


class Recorded:
    def __init__(self) -> None:
        self.outcomes: list[tuple[str, str]] = []

    def record(self, seconds: float, attributes: dict[str, str]) -> None:
        self.outcomes.append((attributes["rpc"], attributes["outcome"]))


class Streamer:
    authenticator = FakeAuthenticator()

    def __init__(self, failure: Exception | None) -> None:
        self.failure = failure

    def shown_current(self, memory: Any) -> None:
        return None

    @rpc.rpc
    def Stream(
        self, request: Any, context: grpc.ServicerContext, identity: Identity
    ) -> Iterator[str]:
        def messages() -> Iterator[str]:
            yield "first"
            if self.failure is not None:
                raise self.failure
            yield "second"

        return messages()


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Recorded:
    recorder = Recorded()
    monkeypatch.setattr(rpc, "rpc_duration", recorder)
    return recorder


def run(failure: Exception | None) -> tuple[list[str], FakeContext]:
    context = FakeContext()
    stream = Streamer(failure).Stream(service_pb.ExportMemoriesRequest(), context)  # type: ignore[arg-type]
    received: list[str] = []
    with pytest.raises(Aborted) if failure else contextlib.nullcontext():
        received.extend(stream)  # type: ignore[arg-type]
    return received, context


def test_a_stream_that_finishes_is_counted_once_as_ok(recorded: Recorded) -> None:
    received, _ = run(None)
    assert received == ["first", "second"]
    assert recorded.outcomes == [("Stream", "OK")]


def test_an_unexpected_failure_mid_stream_is_internal_with_a_trace_id(recorded: Recorded) -> None:
    received, context = run(RuntimeError("boom with memory text"))
    assert received == ["first"]
    assert context.status.code is grpc.StatusCode.INTERNAL
    assert "boom" not in context.status.details
    assert recorded.outcomes == [("Stream", "INTERNAL")]


def test_a_domain_error_mid_stream_maps_like_a_unary_one(recorded: Recorded) -> None:
    _, context = run(NotFound("memories/x"))
    assert context.status.code is grpc.StatusCode.NOT_FOUND
    assert recorded.outcomes == [("Stream", NotFound("memories/x").reason.name)]


def test_a_caller_leaving_mid_stream_is_counted_as_cancelled(recorded: Recorded) -> None:
    stream = Streamer(None).Stream(service_pb.ExportMemoriesRequest(), FakeContext())  # type: ignore[arg-type]
    assert next(stream) == "first"  # type: ignore[call-overload]
    stream.close()  # type: ignore[attr-defined]
    assert recorded.outcomes == [("Stream", "CANCELLED")]


def test_an_unexpected_failure_without_a_span_quotes_an_id_its_log_line_repeats(
    recorded: Recorded, caplog: pytest.LogCaptureFixture
) -> None:
    """No server span (traces not exported): the INTERNAL answer still carries an id that
    finds its log line, a fresh one per failure."""
    with caplog.at_level(logging.ERROR, logger=rpc.log.name):
        _, first = run(RuntimeError("boom"))
        _, second = run(RuntimeError("boom"))
    found = [re.search(r"trace ([0-9a-f]{32})\)", c.status.details) for c in (first, second)]
    ids = [match.group(1) for match in found if match]
    assert len(ids) == 2
    assert ids[0] != ids[1]
    assert "0" * 32 not in ids
    logged = [r.getMessage() for r in caplog.records]
    for quoted in ids:
        assert any(quoted in line for line in logged)


def test_an_unexpected_failure_under_a_span_quotes_its_trace_id() -> None:
    provider = TracerProvider()
    with provider.get_tracer("test").start_as_current_span("call") as span:
        expected = format(span.get_span_context().trace_id, "032x")
        assert rpc.failure_id(trace.get_current_span()) == expected
