"""Client of the retrieval sidecar, the outbound adapter behind the `Search` port (and the
outbox's index writes): deadlines, a circuit breaker, a health watch, and trace propagation.

Search failures never become errors for the caller: recall degrades to "no recall" instead.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc
from crmmem.retrieval.v1 import retrieval_service_pb2 as pb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.grpc import client_interceptor, grpcext
from opentelemetry.sdk.trace import TracerProvider

from crmmem_runtime.shared_secret import call_metadata
from memory_service.kernel.domain.ports import Candidate, SearchUnavailable
from memory_service.memories.domain.indexing import IndexDocument, IndexUnavailable

log = logging.getLogger("memory_service.adapters.retrieval_client")

UPSERT_CHUNK = 256
SIDECAR_SERVICE = pb.DESCRIPTOR.services_by_name["RetrievalService"].full_name
# A restarted sidecar is found again within about a second, however long it was away (gRPC's
# default backoff grows to two minutes).
CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
HEALTH_POLL_SECONDS = 0.2
HEALTH_CHECK_TIMEOUT = 1.0
# Health is answered off the model thread in milliseconds even under ingest: this many checks
# in a row missing their timeout mean a stuck process (SIGSTOP, a wedged event loop), which
# callers without a deadline of their own would otherwise each wait a full search timeout for.
HUNG_AFTER_MISSED_CHECKS = 2
# A search that missed its deadline while the health check (answered in milliseconds off the
# model thread, and sent at once after a miss) has gone this long unanswered means the sidecar
# answers nothing at all (a hung process), not that a busy machine answered late: the breaker
# opens then, instead of a second of callers each waiting out their search. A busy machine
# mistaken for a hang costs the recalls until that check answers SERVING.
SILENT_HEALTH_SECONDS = 0.15
# Codes that say the sidecar (not one item) is the problem: index writes then wait for it.
UNREACHABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.UNAUTHENTICATED,
    }
)
INDEX_WRITE_TIMEOUT = 30.0
BREAKER_OPEN = "circuit breaker open: the sidecar is down or failing"
STATS_TIMEOUT = 5.0


# The breaker's trial is a search of our own (`RetrievalClient._permit_after_probe`): this
# query over the points of one of the last PROBE_TENANTS tenants answered with candidates, in
# turn (their points are searched, as callers' searches are), or, while there are none (since
# start-up, or after their indexes were emptied here), for a tenant id no token can carry (`#`
# is not allowed in one), which has nothing to search.
PROBE_QUERY = "is the sidecar answering"
PROBE_TENANT = "#breaker-trial"
PROBE_TENANTS = 4


class Outcome(enum.Enum):
    OK = 0.0
    SLOW = 0.5  # missed a deadline of at least half the search timeout: the sidecar was late
    FAILED = 1.0  # refused, unreachable or erroring
    # Missed a deadline a caller cut shorter than that: says nothing about the sidecar.
    UNJUDGED = -1.0


@dataclass(frozen=True)
class Permit:
    """One call the breaker let out: when it was sent, and whether it is the trial."""

    sent: float
    trial: bool


class CircuitBreaker:
    """Stops calling a sidecar that is down or erroring, so degraded recall costs nothing,
    without turning a few late answers on a busy machine into seconds of no recall.

    It looks at the outcomes of the calls of the last `window_seconds` (at most `window_calls`
    of them). With at least `min_calls` there, it opens when their failure score reaches
    `failure_rate`: a failure scores 1, a missed deadline 0.5, so at the default rate of 0.5
    missed deadlines alone open it only when every call misses (a hung sidecar). Open, it
    refuses calls for `reset_seconds`, then lets one trial through (half-open) whose outcome
    closes or re-opens it; `serving()` (the sidecar's health said SERVING) allows that trial at
    once, so recall comes back as soon as the sidecar does. `trip()` (the health poll says the
    sidecar is down or stuck) opens it and holds back the trial while the poll keeps saying so:
    a trial against a stuck sidecar would cost its caller a whole timeout.

    A sidecar answers in milliseconds, so `misses_in_a_row` missed deadlines (SLOW) open it
    too, however few calls the window holds: without that, a sidecar that answers its health
    check but no search, asked by one caller at a time, never fills the window (each miss
    takes seconds) and every caller waits the whole timeout. Misses are counted in the order
    their calls were sent: a call sent later and answered says the sidecar works, so the
    misses of calls sent before it no longer count, in the run or in the window. One tenant
    whose own searches are slow, sent side by side, cannot then switch recall off for tenants
    still being answered. Outcomes of calls sent before the breaker last opened or closed are
    dropped: they describe the sidecar before its trial.

    The trial is the client's probe (`RetrievalClient`), not a caller's search. A trial that
    ended without a verdict (UNJUDGED: it could not be sent) decides nothing.
    """

    def __init__(
        self,
        min_calls: int = 5,
        failure_rate: float = 0.5,
        window_seconds: float = 10.0,
        reset_seconds: float = 2.0,
        window_calls: int = 20,
        misses_in_a_row: int = 2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._min_calls = max(1, min_calls)
        self._rate = failure_rate
        self._window = window_seconds
        self._reset = reset_seconds
        self._clock = clock
        self._lock = threading.Lock()
        # (recorded, sent, outcome) of the calls recorded since the last open or close.
        self._outcomes: deque[tuple[float, float, Outcome]] = deque(
            maxlen=max(window_calls, min_calls)
        )
        self._opened_at: float | None = None
        self._trial_running = False
        self._misses_to_open = misses_in_a_row
        self._since = float("-inf")  # when it last opened or closed
        self._answered_sent = float("-inf")  # when the latest-sent answered call was sent
        self._misses: list[float] = []  # when missed calls sent after that were sent

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    def refuses(self) -> bool:
        """True while `allow()` would say no (open, and no trial due or one already out),
        without taking the trial: a caller can answer at once before doing any other work."""
        with self._lock:
            if self._opened_at is None:
                return False
            return self._trial_running or self._clock() - self._opened_at < self._reset

    def allow(self) -> Permit | None:
        """A permit when a call may go out (the first one after an open spell is the trial);
        hand it back to `record` with the call's outcome."""
        with self._lock:
            now = self._clock()
            if self._opened_at is None:
                return Permit(now, trial=False)
            if self._trial_running or now - self._opened_at < self._reset:
                return None
            self._trial_running = True
            return Permit(now, trial=True)

    def record(self, permit: Permit, outcome: Outcome) -> None:
        with self._lock:
            now = self._clock()
            if permit.trial:  # the trial's outcome decides alone
                self._trial_running = False
                if outcome is Outcome.OK:
                    self._close(now, permit.sent)
                elif outcome is not Outcome.UNJUDGED:
                    self._opened_at = now
                return
            if (
                self._opened_at is not None
                or permit.sent < self._since
                or outcome is Outcome.UNJUDGED
            ):
                return
            if outcome is Outcome.OK:
                if permit.sent > self._answered_sent:
                    self._answered_sent = permit.sent
                    if self._misses:
                        self._misses = [sent for sent in self._misses if sent >= permit.sent]
            elif (
                outcome is Outcome.SLOW
                and self._misses_to_open
                and permit.sent >= self._answered_sent
            ):
                self._misses.append(permit.sent)
                if len(self._misses) >= self._misses_to_open:
                    self._open(now)
                    return
            self._outcomes.append((now, permit.sent, outcome))
            while self._outcomes and self._outcomes[0][0] < now - self._window:
                self._outcomes.popleft()
            if len(self._outcomes) < self._min_calls:
                return
            answered = self._answered_sent
            score = sum(
                o.value
                for _, sent, o in self._outcomes
                if o is not Outcome.SLOW or sent >= answered
            )
            if score >= self._rate * len(self._outcomes):
                self._open(now)

    def _open(self, now: float) -> None:
        self._opened_at = now
        self._since = now
        self._misses = []
        self._outcomes.clear()

    def _close(self, now: float, answered_sent: float) -> None:
        self._opened_at = None
        self._since = now
        self._answered_sent = answered_sent
        self._misses = []
        self._outcomes.clear()

    def trip(self) -> None:
        """The sidecar is known to be down or stuck (its health said so): open, and restart the
        wait for a trial, so none goes out before the health poll sees it SERVING again."""
        with self._lock:
            if not self._trial_running:
                if self._opened_at is None:
                    self._open(self._clock())
                else:
                    self._opened_at = self._clock()

    def serving(self) -> None:
        """The sidecar reports SERVING: an open breaker lets its trial through now."""
        with self._lock:
            if self._opened_at is not None and not self._trial_running:
                self._opened_at = self._clock() - self._reset


class RetrievalClient:
    def __init__(
        self,
        address: str,
        secret: str,
        search_timeout: float,
        breaker: CircuitBreaker,
        tracer_provider: TracerProvider | None = None,
        write_timeout: float = 10.0,
    ) -> None:
        self.address = address
        self._timeout = search_timeout
        self._write_timeout = write_timeout
        self.breaker = breaker
        # Every call names the shared secret itself (see `retrieval_service.auth`): a Python
        # client interceptor adding it cost each search about as much again as the metadata.
        self._metadata = call_metadata(secret)
        channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self._raw_channel = channel
        self._channel: grpc.Channel = channel
        if tracer_provider is not None:  # a client span, and the trace carried to the sidecar
            self._channel = grpcext.intercept_channel(
                channel, client_interceptor(tracer_provider=tracer_provider)
            )
        self._stub = pb_grpc.RetrievalServiceStub(self._channel)
        self._on_serving: list[Callable[[], None]] = []
        # When the health check now waiting for its answer was sent (None: none is waiting).
        self._check_sent: float | None = None
        # A search opened the breaker on a silent health check: the next SERVING lets the trial
        # through at once (a busy machine, not a hung sidecar, costs a poll's worth of recall).
        self._tripped_by_search = False
        # A search missed its deadline since the health check last answered.
        self._missed_since_check = False
        # Whose points the breaker's probe searches, in turn: the last tenants answered with
        # candidates, so it searches stored points (a probe with nothing to search answers while
        # searches over points hang), never a tenant never answered, and no single one of them
        # (whose own searches may come to hang) decides every trial.
        self._probe_tenants: deque[str] = deque(maxlen=PROBE_TENANTS)
        self._probe_turn = 0
        self._probe_lock = threading.Lock()
        self._check_now = threading.Event()  # a search missed: ask the health check at once
        self._closed = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="sidecar-health", daemon=True)

    @property
    def search_timeout(self) -> float:
        """The longest any search may take, and a recall's deadline when the caller set
        none."""
        return self._timeout

    def on_serving(self, callback: Callable[[], None]) -> None:
        """`callback` runs whenever the sidecar (re)reports SERVING, e.g. to wake the outbox."""
        self._on_serving.append(callback)

    def start(self) -> None:
        self._watcher.start()

    def refusal(self) -> str | None:
        """Why a search would be refused now without trying, else None. A search already
        missed its deadline and the health check has gone unanswered since: the sidecar answers
        nothing, so this caller is not sent to wait for it too."""
        if self._missed_since_check and self._health_silent():
            self._trip_silent()
        if self.breaker.refuses():
            return BREAKER_OPEN
        return None

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Candidate]:
        """Candidates by `deadline` (a `time.monotonic()` instant the caller's reply needs the
        answer by) or within our own timeout, whichever comes first."""
        started = time.monotonic()
        timeout = self._timeout
        if deadline is not None:
            timeout = min(timeout, deadline - started)
        if timeout <= 0:
            raise SearchUnavailable(
                "no time left before the recall timeout"
                if own_deadline
                else "no time left before the caller's deadline"
            )
        permit = self.breaker.allow()
        if permit is not None and permit.trial:
            # The trial is a probe of our own, not this caller's search: nothing a tenant sends
            # (a deadline too short to judge by, a query of its own that is slow) decides when
            # recall comes back. The caller waits for it within its own time.
            permit = self._permit_after_probe(permit, timeout)
            timeout -= time.monotonic() - started
        if permit is None or timeout <= 0:
            raise SearchUnavailable(BREAKER_OPEN)
        request = pb.SearchRequest(
            tenant_id=tenant_id,
            query=query,
            limit=limit,
            scopes=[pb.ScopeFilter(scope_type=t, scope_id=i) for t, i in scopes],
        )
        try:
            reply = self._stub.Search(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            code = self._failed(permit, error, timeout)
            raise SearchUnavailable(f"search failed: {code.name if code else error}") from error
        self.breaker.record(permit, Outcome.OK)
        if reply.candidates:  # searched stored points, so its probe will too
            self._probed(tenant_id)
        # A sidecar answering more than it was asked for gets no more database work than the
        # limit: every candidate is loaded and checked against the records.
        return [Candidate(c.id, c.score, c.revision_number) for c in reply.candidates[:limit]]

    def _failed(
        self, permit: Permit, error: grpc.RpcError, timeout: float
    ) -> grpc.StatusCode | None:
        """Records a search that failed. After a missed deadline, a health check that has gone
        unanswered for a while says the sidecar is hung; a counted miss also sends one at once
        (a miss of a deadline too short to judge by does not: one tenant's impatient calls
        would keep the checks going back to back, and a busy moment in any would trip the
        breaker for all)."""
        code = error.code() if isinstance(error, grpc.Call) else None
        outcome = Outcome.FAILED
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            outcome = self._judge_miss(timeout)
            self._missed_since_check = True
            if outcome is Outcome.SLOW:
                self._check_now.set()
        self.breaker.record(permit, outcome)
        if code is grpc.StatusCode.DEADLINE_EXCEEDED and self._health_silent():
            self._trip_silent()
        return code

    def _permit_after_probe(self, trial: Permit, wait: float) -> Permit | None:
        """Sends the breaker's trial as a probe search (`PROBE_QUERY`), given the whole search
        timeout and waiting for the channel to reconnect, whose outcome is recorded however
        long it takes; waits up to `wait` for it. A permit for the caller's own search if the
        probe was answered in that time (the breaker is closed then), else None."""
        until = time.monotonic() + wait
        # A trace of its own: the probe is the service's, not the triggering caller's.
        detached = otel_context.attach(otel_context.Context())
        try:
            probe = self._stub.Search.future(
                pb.SearchRequest(tenant_id=self._probe_tenant(), query=PROBE_QUERY, limit=1),
                timeout=self._timeout,
                metadata=self._metadata,
                wait_for_ready=True,
            )
        except Exception:  # e.g. the channel closed at shutdown: the trial slot is given back
            log.exception("the breaker's probe could not be sent")
            self.breaker.record(trial, Outcome.UNJUDGED)
            return None
        finally:
            otel_context.detach(detached)
        settling = threading.Lock()  # one outcome, from whichever thread sees the end first
        recorded = threading.Event()

        def settle(done: grpc.Future[pb.SearchResponse]) -> None:
            if not settling.acquire(blocking=False):
                return
            try:
                done.result()
            except grpc.RpcError as error:
                self._failed(trial, error, self._timeout)
            except Exception:  # not a call's outcome: nothing to judge by
                self.breaker.record(trial, Outcome.UNJUDGED)
            else:
                self.breaker.record(trial, Outcome.OK)
            finally:
                recorded.set()

        probe.add_done_callback(settle)
        try:
            probe.result(timeout=max(0.0, until - time.monotonic()))
        except grpc.FutureTimeoutError:
            return None  # still out: it decides when it ends
        except grpc.RpcError:
            settle(probe)
            return None
        settle(probe)
        # Another thread may be recording it: its verdict is what `allow` must see.
        recorded.wait(max(0.0, until - time.monotonic()))
        return self.breaker.allow()

    def _probed(self, tenant_id: str) -> None:
        """The tenant's search was answered with candidates: the most recent of the probe's."""
        with self._probe_lock:
            if tenant_id in self._probe_tenants:
                if self._probe_tenants[-1] == tenant_id:
                    return
                self._probe_tenants.remove(tenant_id)
            self._probe_tenants.append(tenant_id)

    def _probe_tenant(self) -> str:
        with self._probe_lock:
            if not self._probe_tenants:
                return PROBE_TENANT
            self._probe_turn += 1
            return self._probe_tenants[self._probe_turn % len(self._probe_tenants)]

    def _judge_miss(self, timeout: float) -> Outcome:
        """A sidecar answers in milliseconds: missing at least half the search timeout, whoever
        set the deadline, says it is late; a shorter deadline (a caller's choice, or what slow
        work before the search left) says nothing about it, so one tenant's impatient calls
        cannot open the breaker for all."""
        return Outcome.SLOW if timeout >= self._timeout / 2 else Outcome.UNJUDGED

    def _trip_silent(self) -> None:
        if not self._tripped_by_search:
            log.warning("a search and the health check both unanswered: sidecar hung")
        self._tripped_by_search = True
        self.breaker.trip()

    def _health_silent(self) -> bool:
        sent = self._check_sent
        return sent is not None and time.monotonic() - sent >= SILENT_HEALTH_SECONDS

    def _watch(self) -> None:
        """Polls the sidecar's health: SERVING after anything else lets recall's trial through
        and wakes the index writers at once; refused connections, NOT_SERVING or checks that
        keep timing out (a stuck process) open the breaker. (Polling `Check`, not `Watch`: the
        sidecar's health servicer answers `Watch` through the tracing interceptor badly, and a
        poll also notices a silent restart.)"""
        health = health_pb2_grpc.HealthStub(self._raw_channel)
        request = health_pb2.HealthCheckRequest(service=SIDECAR_SERVICE)
        serving = False
        missed = 0
        while True:
            self._check_now.wait(HEALTH_POLL_SECONDS)
            self._check_now.clear()
            if self._closed.is_set():
                return
            try:
                self._check_sent = time.monotonic()
                try:
                    status = health.Check(request, timeout=HEALTH_CHECK_TIMEOUT).status
                finally:
                    self._check_sent = None
                missed = 0
                self._missed_since_check = False
            except grpc.RpcError as error:
                code = error.code() if isinstance(error, grpc.Call) else None
                if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                    missed += 1
                    if missed < HUNG_AFTER_MISSED_CHECKS:
                        continue  # one late answer may be a busy machine
                    if serving:
                        log.warning("sidecar health checks time out: treating it as hung")
                    serving = False
                    self.breaker.trip()
                    continue
                missed = 0
                status = health_pb2.HealthCheckResponse.NOT_SERVING
                if code is not grpc.StatusCode.UNAVAILABLE and serving:
                    log.warning("sidecar health check failed: %s", error)
            except Exception:
                log.exception("sidecar health check failed")
                continue
            if status == health_pb2.HealthCheckResponse.SERVING:
                if not serving or self._tripped_by_search:
                    serving = True
                    self._tripped_by_search = False
                    self.breaker.serving()
                    for callback in self._on_serving:
                        callback()
            else:
                serving = False
                self.breaker.trip()

    # --- index writes (the outbox worker) ------------------------------------------------------

    def _write_timeout_until(self, deadline: float | None) -> float:
        if deadline is None:
            return self._write_timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise IndexUnavailable("no time left in this drain's lease")
        return min(self._write_timeout, left)

    def _write(
        self, method: Callable[..., object], request: object, deadline: float | None
    ) -> None:
        """One index write; the sidecar being unreachable is `IndexUnavailable`, anything else
        (a document it refuses) stays an error about the items."""
        try:
            method(request, timeout=self._write_timeout_until(deadline), metadata=self._metadata)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            if code is not None and code in UNREACHABLE:
                raise IndexUnavailable(f"index write failed: {code.name}") from error
            raise

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None:
        for start in range(0, len(documents), UPSERT_CHUNK):
            chunk = documents[start : start + UPSERT_CHUNK]
            request = pb.UpsertDocumentsRequest(
                documents=[
                    pb.Document(
                        id=d.memory_id,
                        tenant_id=d.tenant_id,
                        version=d.version,
                        revision_number=d.revision_number,
                        text=d.text,
                        scope_type=d.scope_type,
                        scope_id=d.scope_id,
                    )
                    for d in chunk
                ]
            )
            self._write(self._stub.UpsertDocuments, request, deadline)

    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        if memory_ids:
            request = pb.DeleteDocumentsRequest(
                tenant_id=tenant_id, ids=list(memory_ids), versions=list(versions)
            )
            self._write(self._stub.DeleteDocuments, request, deadline)

    def delete_tenant(self, tenant_id: str, deadline: float | None = None) -> None:
        self._write(
            self._stub.DeleteDocuments,
            pb.DeleteDocumentsRequest(tenant_id=tenant_id, all_of_tenant=True),
            deadline,
        )
        with self._probe_lock:  # nothing of it to search any more
            if tenant_id in self._probe_tenants:
                self._probe_tenants.remove(tenant_id)

    def tenant_points(self, tenant_id: str) -> int:
        """How many documents of the tenant the index holds (for the completeness check)."""
        reply = self._stub.GetStats(
            pb.GetStatsRequest(tenant_id=tenant_id), timeout=STATS_TIMEOUT, metadata=self._metadata
        )
        return int(reply.tenant_points)

    def close(self) -> None:
        self._closed.set()
        self._check_now.set()
        self._raw_channel.close()
        if self._watcher.is_alive():
            self._watcher.join(timeout=2)
