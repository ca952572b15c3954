"""Recall as both RecallMemories and BuildContext use it: search under a deadline, then the
records decide (`domain.recall.RecallUseCases.validate`); degraded when search is unavailable.

No database connection is held while the sidecar is asked: the caller's scopes are read in one
short transaction, the search runs with nothing checked out of the pool, and the candidates are
validated in a second short read (which re-checks every record and the caller's authority as
they are then, so nothing the first read saw is trusted)."""

from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import nullcontext
from datetime import datetime

from opentelemetry import metrics, trace

from memory_service.app.index_watch import IndexWatch
from memory_service.app.transactions import Transactions
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import (
    NoUsageLog,
    Search,
    SearchUnavailable,
    UsageLog,
    Visibility,
)
from memory_service.domain.recall import Candidate, RecallResult, RecallUseCases, ScopeHint

CANDIDATE_OVERFETCH = 3
MAX_CANDIDATES = 100
SEARCH_OFF = "search is turned off (MEMORY_RETRIEVAL_ADDRESS is empty)"
tracer = trace.get_tracer("memory_service")
degraded_counter = metrics.get_meter("memory_service").create_counter(
    "crmmem.recall.degraded", description="recalls answered without search"
)


class ReplyMargin:
    """How long before the caller's deadline search must give up, so that validating the
    candidates and sending a (possibly degraded) reply still fit. The largest of: `floor`;
    twice the slowest recent validations (p95); and a share of the caller's budget (up to
    `SHARE_CAP`), because on busy cores waking up after a timed-out search and replying can
    itself take tens of milliseconds (measured: up to 77 ms at load 20 on 2 cores)."""

    SHARE = 0.4
    SHARE_CAP = 0.2

    def __init__(self, floor: float = 0.05, samples: int = 200) -> None:
        self._floor = floor
        self._lock = threading.Lock()
        self._samples: deque[float] = deque(maxlen=samples)

    def observe(self, seconds: float) -> None:
        with self._lock:
            self._samples.append(seconds)

    def seconds(self, remaining: float) -> float:
        with self._lock:
            ordered = sorted(self._samples)
        validation = 2 * ordered[int(0.95 * (len(ordered) - 1))] if ordered else 0.0
        return max(self._floor, validation, min(self.SHARE * remaining, self.SHARE_CAP))


class Recaller:
    def __init__(
        self,
        transactions: Transactions,
        recall: RecallUseCases,
        search: Search | None,
        margin: ReplyMargin | None = None,
        watch: IndexWatch | None = None,
        usage: UsageLog | None = None,
    ) -> None:
        self._tx = transactions
        self.recall = recall
        self.search = search
        self.margin = margin or ReplyMargin()
        self.watch = watch
        self.usage = usage or NoUsageLog()

    def run(
        self,
        identity: Identity,
        query: str,
        limit: int,
        instant: datetime,
        deadline: float | None,
        hint: ScopeHint | None = None,
        within: Visibility | None = None,
        scopes: list[tuple[str, str]] | None = None,
    ) -> RecallResult | SearchUnavailable:
        """`scopes` already resolved by the caller (a context's), else read here first.

        A search that would be refused anyway (turned off, the breaker open) answers degraded
        before anything else, the scopes' read included: recall with the sidecar down costs no
        more than the check. Every caller is then told the same, whatever scope it asked for."""
        hint = hint or ScopeHint()
        if self.search is None:
            return SearchUnavailable(SEARCH_OFF)
        if refused := self.search.refusal():
            return SearchUnavailable(refused)
        if scopes is None:
            resolved = self._tx.read(
                identity, lambda uow: self.recall.search_scopes(uow, identity, hint)
            )
            if resolved is None:
                return RecallResult()  # nothing the caller may see was asked for
            scopes = resolved
        found = self._search(identity, query, limit, deadline, scopes)
        if isinstance(found, SearchUnavailable):
            return found
        started = time.monotonic()
        # A span of its own only under a recording one (traces exported): it shows where a
        # slow recall's time went, and costs its bookkeeping on every call otherwise.
        with (
            tracer.start_as_current_span("recall.validate")
            if trace.get_current_span().is_recording()
            else nullcontext(trace.INVALID_SPAN)
        ) as span:
            result = (
                self._tx.read(
                    identity,
                    lambda uow: self.recall.validate(
                        uow, identity, found, instant, hint, limit, within
                    ),
                )
                if found
                else RecallResult()
            )
            span.set_attribute("crmmem.recall.candidates", len(found))
            span.set_attribute("crmmem.recall.dropped", result.dropped_count)
        self.margin.observe(time.monotonic() - started)
        self.usage.note(identity.tenant_id, (m.id for m, _ in result.memories), utcnow())
        return result

    def _search(
        self,
        identity: Identity,
        query: str,
        limit: int,
        deadline: float | None,
        scopes: list[tuple[str, str]],
    ) -> list[Candidate] | SearchUnavailable:
        """The sidecar's candidates, or why there are none to trust; runs outside any unit of
        work, so a slow sidecar never holds a pooled connection."""
        try:
            if self.search is None:
                raise SearchUnavailable(SEARCH_OFF)
            search_deadline = None if deadline is None else self._search_deadline(deadline)
            wait_until = search_deadline or time.monotonic() + self.search.search_timeout
            if self.watch and (incomplete := self.watch.incomplete(identity.tenant_id, wait_until)):
                raise SearchUnavailable(incomplete)
            searched_at = time.monotonic()
            candidates = self.search.search(
                identity.tenant_id,
                query,
                min(limit * CANDIDATE_OVERFETCH, MAX_CANDIDATES),
                scopes,
                search_deadline,
            )
            # An empty list is only said with confidence after a check the search preceded.
            if not candidates and self.watch:
                incomplete = self.watch.incomplete(identity.tenant_id, wait_until, searched_at)
                if incomplete:
                    raise SearchUnavailable(incomplete)
        except SearchUnavailable as unavailable:
            return unavailable
        return candidates

    def _search_deadline(self, deadline: float) -> float:
        return deadline - self.margin.seconds(deadline - time.monotonic())


def annotate(outcome: RecallResult | SearchUnavailable) -> None:
    """Degraded and dropped counts on the RPC's span (and a metric), for operators."""
    span = trace.get_current_span()
    if isinstance(outcome, SearchUnavailable):
        span.set_attribute("crmmem.recall.degraded", True)
        span.set_attribute("crmmem.recall.degraded_reason", outcome.reason)
        degraded_counter.add(1, {"reason": outcome.reason.split(":")[0]})
        return
    span.set_attribute("crmmem.recall.degraded", False)
    span.set_attribute("crmmem.recall.candidates", outcome.candidate_count)
    span.set_attribute("crmmem.recall.dropped", outcome.dropped_count)


Outcome = RecallResult | SearchUnavailable


class RecallMemories:
    """The RecallMemories use case: recall (its own short reads around the search), counts on
    the span."""

    def __init__(self, recaller: Recaller) -> None:
        self._recaller = recaller

    def __call__(
        self,
        identity: Identity,
        query: str,
        limit: int,
        instant: datetime,
        deadline: float | None,
        hint: ScopeHint,
    ) -> Outcome:
        outcome = self._recaller.run(identity, query, limit, instant, deadline, hint=hint)
        annotate(outcome)
        return outcome
