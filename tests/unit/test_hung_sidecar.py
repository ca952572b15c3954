"""The sidecar client against a stand-in sidecar that stops answering (a SIGSTOPped process):
the breaker opens after a handful of searches wait out their deadlines, not after a second or
more of them, while a busy sidecar that answers its health check keeps recall on."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from memory_service.kernel.app.transactions import Transactions
from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import SearchUnavailable
from memory_service.memories.adapters import retrieval_client
from memory_service.memories.adapters.retrieval_client import (
    PROBE_QUERY,
    CircuitBreaker,
    RetrievalClient,
)
from memory_service.memories.app.recall import Recaller, ReplyMargin
from tests.support.polling import eventually
from tests.support.stand_in_sidecar import StandInSidecar, serve_stand_in
from tests.unit.test_recall_connections import IDENTITY, _Recall, _Units

HIT = pb.Candidate(id="0" * 32, score=0.9, revision_number=1)


@pytest.fixture
def sidecar() -> Iterator[tuple[StandInSidecar, RetrievalClient]]:
    with serve_stand_in() as stand_in:
        client = RetrievalClient(stand_in.address, "s" * 32, 5.0, CircuitBreaker())
        client.on_serving(stand_in.seen_serving.set)
        client.start()
        try:
            yield stand_in, client
        finally:
            stand_in.released.set()
            client.close()


def silent_since_the_miss(client: RetrievalClient) -> Callable[[], bool]:
    """A health check sent after the missed search has gone unanswered for the silent
    interval (the client's own record of when its check went out)."""

    def silent() -> bool:
        sent = client._check_sent
        return (
            sent is not None and time.monotonic() - sent >= retrieval_client.SILENT_HEALTH_SECONDS
        )

    return silent


def searches_until_refused(client: RetrievalClient, limit: int, deadline: float) -> int:
    """How many searches with `deadline` seconds each wait before the client refuses at once."""
    for waited in range(limit):
        if client.refusal() is not None:
            return waited
        with pytest.raises(SearchUnavailable):
            client.search("t-1", "meetings", 10, [], time.monotonic() + deadline)
    return limit


def test_a_hung_sidecar_opens_the_breaker_after_a_few_searches(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    stand_in, client = sidecar
    for _ in range(15):  # a window of answered searches, as before any hang
        assert client.search("t-1", "meetings", 10, [], time.monotonic() + 1) == []
    assert stand_in.seen_serving.wait(10), "the health poll never saw SERVING"
    stand_in.hung.set()
    # Before: the window's answers kept it closed until the health poll's two missed checks
    # (about 2.4 s, some 16 searches of 150 ms each).
    assert searches_until_refused(client, 12, 0.15) <= 5


def test_late_searches_of_a_sidecar_that_answers_its_health_keep_recall_on(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    stand_in, client = sidecar
    for _ in range(15):
        client.search("t-1", "meetings", 10, [], time.monotonic() + 1)
    stand_in.search_delay = 0.3  # a busy model thread: searches answer, late
    for _ in range(9):
        with pytest.raises(SearchUnavailable, match="DEADLINE_EXCEEDED"):
            client.search("t-1", "meetings", 10, [], time.monotonic() + 0.1)
    assert client.refusal() is None


def test_once_a_search_missed_and_the_health_check_is_silent_no_caller_waits(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    stand_in, client = sidecar
    for _ in range(15):
        client.search("t-1", "meetings", 10, [], time.monotonic() + 1)
    assert stand_in.seen_serving.wait(10), "the health poll never saw SERVING"
    stand_in.hung.set()
    with pytest.raises(SearchUnavailable, match="DEADLINE_EXCEEDED"):
        client.search("t-1", "meetings", 10, [], time.monotonic() + 0.05)
    # The miss sends a health check at once; once it has gone unanswered for the silent
    # interval (however long the machine took to send it), no caller is sent to wait.
    eventually(silent_since_the_miss(client), 10, "no health check was sent after the miss")
    assert client.refusal() is not None


@pytest.mark.parametrize(("deadline", "opens"), [(0.3, True), (0.2, True), (0.1, False)])
def test_a_search_that_had_half_the_timeout_and_missed_counts_against_the_sidecar(
    sidecar: tuple[StandInSidecar, RetrievalClient], deadline: float, opens: bool
) -> None:
    """Whoever set the deadline (the caller, or the service for a caller that set none):
    missing at least half the search timeout says the sidecar is slow, a shorter deadline says
    nothing about it. (Before, a caller's deadline as long as the timeout, less the reply's
    margin, never counted: such callers waited the timeout on a wedged sidecar for good.)"""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 0.3, CircuitBreaker())
    try:
        stand_in.search_delay = 0.5  # answers its health, every search late
        waited = 0
        while waited < 5 and client.refusal() is None:  # 5: the breaker's least window
            with pytest.raises(SearchUnavailable, match="DEADLINE_EXCEEDED"):
                client.search("t-1", "meetings", 10, [], time.monotonic() + deadline)
            waited += 1
        assert (client.refusal() is not None) is opens
        assert waited == (2 if opens else 5)  # two misses in a row open it
    finally:
        client.close()


def test_a_sidecar_answering_within_the_timeout_keeps_recall_on_for_callers_without_one(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """Recall through the real client, callers setting no deadline, every search answered in
    70% of the timeout after validations that were slow for a while: all answered, the breaker
    closed. (Searches given the timeout less the margin kept before a caller's deadline, twice
    the validations' p95 here, missed, and opened the breaker on a sidecar that was only slow.)"""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 1.0, CircuitBreaker())
    units = _Units()
    recaller = Recaller(Transactions(units, timedelta(hours=1)), _Recall(units), client)  # type: ignore[arg-type]
    try:
        assert client.search("t-1", "meetings", 10, [], None) == []  # connected
        for _ in range(20):
            recaller.margin.observe(0.3)
        stand_in.search_delay = 0.7
        for _ in range(5):  # the breaker's least window
            outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
            assert not isinstance(outcome, SearchUnavailable), outcome.reason
        assert client.refusal() is None
    finally:
        stand_in.search_delay = 0.0
        client.close()


@pytest.mark.parametrize(("before_search", "floor"), [(0.0, 0.05), (0.1, 0.05), (0.1, 0.0)])
def test_searches_that_hang_behind_a_serving_health_open_the_breaker_for_callers_without_one(
    sidecar: tuple[StandInSidecar, RetrievalClient], before_search: float, floor: float
) -> None:
    """A wedged search path whose health still says SERVING: only the misses tell, so those of
    callers without a deadline must count, work before the search (here 100 ms of a 1 s
    timeout, more than the margin's floor) included."""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 1.0, CircuitBreaker())
    units = _Units()
    recaller = Recaller(
        Transactions(units, timedelta(hours=1)),
        _Recall(units),  # type: ignore[arg-type]
        client,
        margin=ReplyMargin(floor),
    )
    try:
        stand_in.search_delay = 3.0
        waited = 0
        while waited < 5 and client.refusal() is None:  # 5: the breaker's least window
            arrived = time.monotonic() - before_search
            outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None, arrived=arrived)
            assert isinstance(outcome, SearchUnavailable)
            assert "DEADLINE_EXCEEDED" in outcome.reason
            waited += 1
        assert client.refusal() is not None
        assert waited == 2
    finally:
        stand_in.search_delay = 0.0
        client.close()


def test_one_caller_at_a_time_against_searches_hanging_behind_a_serving_health_opens_it(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """Each miss of the timeout takes most of it, so a window of 2.5 s (as the default 10 s
    against the default 5 s timeout) never holds the breaker's five calls: before, every such
    caller waited the whole timeout for as long as the search path stayed wedged."""
    stand_in, _ = sidecar
    client = RetrievalClient(
        stand_in.address, "s" * 32, 1.0, CircuitBreaker(window_seconds=2.5, reset_seconds=30)
    )
    units = _Units()
    recaller = Recaller(Transactions(units, timedelta(hours=1)), _Recall(units), client)  # type: ignore[arg-type]
    try:
        assert client.search("t-1", "meetings", 10, [], None) == []  # connected, answered
        stand_in.search_delay = 3.0
        took = []
        for _ in range(6):
            began = time.monotonic()
            outcome = recaller.run(IDENTITY, "meetings?", 5, utcnow(), None)
            took.append(time.monotonic() - began)
            assert isinstance(outcome, SearchUnavailable)
        assert [t > 0.5 for t in took] == [True, True, False, False, False, False], took
        assert client.refusal() is not None
    finally:
        stand_in.search_delay = 0.0
        client.close()


def _end(
    stop: threading.Event,
    stand_in: StandInSidecar,
    threads: list[threading.Thread],
    client: RetrievalClient,
) -> None:
    """Stops the callers, then the hung searches they wait on, then the client."""
    stop.set()
    stand_in.released.set()
    for thread in threads:
        thread.join(10)
    client.close()


def test_one_tenants_wedged_searches_sent_side_by_side_leave_other_tenants_recall_on(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """A tenant whose own searches never come back sends them two at a time, without a
    deadline, while other tenants are answered: the pairs finish together, but searches sent
    after them were answered, so they never count as misses in a row."""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 0.5, CircuitBreaker())
    stand_in.hung_tenants.add("t-evil")
    stop = threading.Event()
    refused: list[str] = []
    answered = 0

    def victim() -> None:
        nonlocal answered
        while not stop.is_set():
            try:
                client.search("t-good", "meetings", 10, [], None)
                answered += 1
            except SearchUnavailable as unavailable:
                refused.append(unavailable.reason)
            time.sleep(0.02)

    def attacker() -> None:
        while not stop.is_set():
            with contextlib.suppress(SearchUnavailable):
                client.search("t-evil", "meetings", 10, [], None)

    threads = [threading.Thread(target=victim)] + [
        threading.Thread(target=attacker) for _ in range(2)
    ]
    try:
        for thread in threads:
            thread.start()
        time.sleep(3)
    finally:
        _end(stop, stand_in, threads, client)
    assert answered > 20
    assert refused == []


@pytest.mark.parametrize(
    ("attackers_deadline", "attackers_searches_hang"),
    [(0.002, False), (None, True)],
    ids=["deadlines-of-2-ms", "own-searches-hang"],
)
def test_no_tenant_decides_the_breakers_trial(
    sidecar: tuple[StandInSidecar, RetrievalClient],
    attackers_deadline: float | None,
    attackers_searches_hang: bool,
) -> None:
    """Once the breaker is open, one tenant searches as fast as it can, with deadlines too
    short to judge a sidecar by (2 ms), or with searches of its own that never come back.
    The trial is a probe search of the client's own, of the points of the tenant whose search
    was answered last, so neither takes or decides it: recall comes back for everyone.
    (Before, the trial was the next caller's search, and each of these misses re-opened the
    breaker.)"""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 0.5, CircuitBreaker(reset_seconds=0.2))
    stand_in.search_delay = 0.02  # a working sidecar, slower than 2 ms
    stand_in.candidates = [HIT]
    if attackers_searches_hang:
        stand_in.hung_tenants.add("t-evil")
    stop = threading.Event()

    def attacker() -> None:
        while not stop.is_set():
            deadline = attackers_deadline and time.monotonic() + attackers_deadline
            with contextlib.suppress(SearchUnavailable):
                client.search("t-evil", "meetings", 10, [], deadline)

    def recalled() -> bool:
        try:
            return bool(client.search("t-good", "meetings", 10, [], None))
        except SearchUnavailable:
            time.sleep(0.01)
            return False

    threads = [threading.Thread(target=attacker) for _ in range(4)]
    try:
        assert client.search("t-good", "meetings", 10, [], None)  # connected
        client.breaker.trip()  # opened once, say by a restart the health poll saw
        for thread in threads:
            thread.start()
        eventually(recalled, 10, "recall never came back while one tenant searched")
        # The probe searched the points of the tenant answered last, never the attacker's.
        assert ("t-good", PROBE_QUERY) in stand_in.searched
        assert ("t-evil", PROBE_QUERY) not in stand_in.searched
    finally:
        _end(stop, stand_in, threads, client)


def test_while_searches_over_stored_points_hang_the_probe_keeps_the_breaker_open(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """A sidecar that answers a search with nothing to search but hangs every search over
    stored points (a stalled read of the vectors): the probe searches the points of the tenant
    last answered with candidates, so it hangs too, and once the breaker is open no caller's
    search is sent until it answers; answers without candidates (an empty tenant's) do not
    make their tenant the probe's. (A probe of a tenant without points answered, closed the
    breaker, and every caller sent then waited the timeout again.)"""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 0.5, CircuitBreaker(reset_seconds=0.2))
    stop = threading.Event()
    waited: list[float] = []

    def caller() -> None:
        while not stop.is_set():
            began = time.monotonic()
            with contextlib.suppress(SearchUnavailable):
                client.search("t-1", "meetings", 10, [], None)
            waited.append(time.monotonic() - began)
            time.sleep(0.01)

    threads = [threading.Thread(target=caller) for _ in range(4)]
    try:
        stand_in.candidates = [HIT]
        assert client.search("t-1", "meetings", 10, [], None)  # answered, with candidates
        stand_in.candidates = []
        assert client.search("t-empty", "meetings", 10, [], None) == []  # nothing to search
        stand_in.hung_tenants.add("t-1")
        began = len(stand_in.searched)
        for thread in threads:
            thread.start()
        eventually(lambda: client.breaker.is_open, 10, "the breaker never opened")
        opened = time.monotonic()
        time.sleep(3)
        watched_until = time.monotonic()
    finally:
        _end(stop, stand_in, threads, client)
    searched = list(zip(stand_in.searched[began:], stand_in.searched_at[began:], strict=True))
    probes = [at for (tenant, query), at in searched if query == PROBE_QUERY]
    callers = [at for (tenant, query), at in searched if query != PROBE_QUERY]
    assert probes, "no probe was sent"
    assert {tenant for (tenant, query), _ in searched if query == PROBE_QUERY} == {"t-1"}
    # Searches sent just before it opened may arrive a little after: none later.
    assert [at - opened for at in callers if opened + 0.3 < at < watched_until] == []
    # Each slow answer is a caller's search that hung or one probe spell's wait.
    assert sum(t > 0.3 for t in waited) <= len(callers) + len(probes)


def test_the_probe_is_a_trace_of_its_own_and_forgets_a_deleted_tenant(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """The probe belongs to the service, not to the caller whose recall sent it: its span is
    a root, not a child of that caller's recall (which would show one tenant's search in
    another's trace). A tenant whose index is emptied is no longer the probe's."""
    stand_in, _ = sidecar
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    client = RetrievalClient(
        stand_in.address, "s" * 32, 1.0, CircuitBreaker(reset_seconds=0), provider
    )
    try:
        stand_in.candidates = [HIT]
        assert client.search("t-a", "meetings", 10, [], None)
        client.breaker.trip()
        with provider.get_tracer("test").start_as_current_span("recall of t-b") as recall:
            assert client.search("t-b", "meetings", 10, [], None)
        client.delete_tenant("t-other")  # not one of the probe's: nothing changes
        client.delete_tenant("t-a")
        client.delete_tenant("t-b")
        client.breaker.trip()
        assert client.search("t-c", "meetings", 10, [], None)
    finally:
        client.close()
    probed = [tenant for tenant, query in stand_in.searched if query == PROBE_QUERY]
    assert probed == ["t-a", "#breaker-trial"]
    searches = [
        s
        for s in spans.get_finished_spans()
        if s.kind is SpanKind.CLIENT and s.name.endswith("/Search")
    ]
    in_recall = [s for s in searches if s.context.trace_id == recall.get_span_context().trace_id]
    assert len(in_recall) == 1  # t-b's own search
    # Roots: t-a's and t-c's searches (no recall span around them) and the two probes.
    assert len([s for s in searches if s.parent is None]) == 4


def test_the_probe_takes_the_last_tenants_answered_in_turn(
    sidecar: tuple[StandInSidecar, RetrievalClient],
) -> None:
    """One of the tenants last answered whose own searches come to hang misses every probe of
    its points: the others' probes close the breaker."""
    stand_in, _ = sidecar
    client = RetrievalClient(stand_in.address, "s" * 32, 0.3, CircuitBreaker(reset_seconds=0))
    try:
        stand_in.candidates = [HIT]
        for tenant in ("t-a", "t-b", "t-c"):
            assert client.search(tenant, "meetings", 10, [], None)
        stand_in.hung_tenants.add("t-c")
        client.breaker.trip()

        def recalled() -> bool:
            try:
                return bool(client.search("t-a", "meetings", 10, [], None))
            except SearchUnavailable:
                return False

        eventually(recalled, 10, "the hung tenant's probes kept the breaker open")
    finally:
        client.close()
    probed = [tenant for tenant, query in stand_in.searched if query == PROBE_QUERY]
    assert set(probed) <= {"t-a", "t-b", "t-c"}
    assert len(set(probed)) >= 2 or probed[0] != "t-c"
