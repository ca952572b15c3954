"""Recall as both RecallMemories and BuildContext use it: search under a deadline, then the
records decide (`domain.recall.RecallUseCases.validate`); degraded when search is unavailable.

No database connection is held while the sidecar is asked: the search runs with nothing checked
out of the pool, and the candidates are validated afterwards in one short read, which re-checks
every record and the caller's authority as they are then. RecallMemories builds the search's
filter from what the caller could see at their last recall (`SeenVisibility`; read first in a
short transaction of its own only when there is none), and that validation read reads it again:
when it changed (a grant given or revoked since), the search is asked again with the filter as
it now is, so a recall is never answered from a filter older than its own validation."""

from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

from opentelemetry import metrics, trace

from memory_service.kernel.app.transactions import Transactions
from memory_service.kernel.domain.model import Identity, utcnow
from memory_service.kernel.domain.ports import (
    Candidate,
    NoUsageLog,
    Search,
    SearchUnavailable,
    UsageLog,
    Visibility,
)
from memory_service.memories.app.index_watch import IndexWatch
from memory_service.memories.domain.recall import RecallResult, RecallUseCases, ScopeHint

CANDIDATE_OVERFETCH = 3
MAX_CANDIDATES = 100
# SeenVisibility's bound: customer ids held over every caller (each caller counts at least one),
# a few MB at most.
SEEN_CUSTOMER_IDS = 50_000
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
    itself take tens of milliseconds, a cost that grows with the load rather than the candidates."""

    SHARE = 0.4
    OWN_SHARE = 0.1
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

    def own_seconds(self, remaining: float) -> float:
        """The margin before the service's own deadline (a caller that set none): a smaller
        share of the time left, since that timeout is the sidecar's too (at 5 s a search may
        take 4.8 of them), and without the validations' term, since a few slow validations
        would otherwise starve every search after them, and nothing validated would bring the
        margin down again."""
        return max(self._floor, min(self.OWN_SHARE * remaining, self.SHARE_CAP))


class SeenVisibility:
    """What each caller could see when their last recall was validated, to build the next
    search's filter without a read of its own before the search. Only a starting point: the
    validation read reads the caller's visibility again and decides (`Recaller`). Bounded by the
    customer ids it holds (`SEEN_CUSTOMER_IDS`), the callers seen longest ago forgotten first."""

    def __init__(self, customer_ids: int = SEEN_CUSTOMER_IDS) -> None:
        self._budget = customer_ids
        self._held = 0
        self._lock = threading.Lock()
        self._seen: dict[Identity, Visibility] = {}

    def get(self, identity: Identity) -> Visibility | None:
        return self._seen.get(identity)

    def put(self, identity: Identity, visibility: Visibility) -> None:
        size = _size(visibility)
        with self._lock:
            old = self._seen.pop(identity, None)
            if old is not None:
                self._held -= _size(old)
            if size > self._budget:
                return
            while self._seen and self._held + size > self._budget:
                self._held -= _size(self._seen.pop(next(iter(self._seen))))  # the oldest
            self._seen[identity] = visibility
            self._held += size


def _size(visibility: Visibility) -> int:
    return 1 + len(visibility.customer_ids or ())


@dataclass(frozen=True)
class Due:
    """When a recall's reply is due (a `time.monotonic()` instant), and whether that is the
    service's own timeout rather than the caller's deadline."""

    at: float
    own: bool


class Recaller:
    def __init__(
        self,
        transactions: Transactions,
        recall: RecallUseCases,
        search: Search | None,
        margin: ReplyMargin | None = None,
        watch: IndexWatch | None = None,
        usage: UsageLog | None = None,
        seen: SeenVisibility | None = None,
    ) -> None:
        self._tx = transactions
        self.recall = recall
        self.search = search
        self.margin = margin or ReplyMargin()
        self.watch = watch
        self.usage = usage or NoUsageLog()
        self.seen = seen or SeenVisibility()

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
        arrived: float | None = None,
    ) -> RecallResult | SearchUnavailable:
        """`scopes` already resolved by the caller (a context's, read in its own transaction),
        else built from what the caller can see (`_own_scopes`).

        A caller without a deadline has the search timeout as one, counted from `arrived` (when
        the use case started; now if not given): the search gives up a margin before it
        (`ReplyMargin.own_seconds`), so a hung sidecar costs such a caller the timeout and not
        the timeout plus the reply.

        A search that would be refused anyway (turned off, the breaker open) answers degraded
        before anything else, any read included: recall with the sidecar down costs no more than
        the check. Every caller is then told the same, whatever scope it asked for."""
        hint = hint or ScopeHint()
        if self.search is None:
            return SearchUnavailable(SEARCH_OFF)
        if refused := self.search.refusal():
            return SearchUnavailable(refused)
        own = deadline is None
        if deadline is None:
            start = arrived if arrived is not None else time.monotonic()
            deadline = start + self.search.search_timeout
        due = Due(deadline, own)
        if scopes is None:
            return self._own_scopes(identity, query, limit, instant, due, hint)
        found = self._search(identity, query, limit, due, scopes)
        if isinstance(found, SearchUnavailable):
            return found
        result = self._validate(identity, found, instant, hint, limit, within, None)
        return self._noted(identity, result)

    def _own_scopes(
        self,
        identity: Identity,
        query: str,
        limit: int,
        instant: datetime,
        due: Due,
        hint: ScopeHint,
    ) -> RecallResult | SearchUnavailable:
        """Searches with the filter of what the caller could last see, and validates in one
        read that also reads what they can see now. A filter that was not current then is
        searched once more with the current one; a second change meanwhile is not chased (the
        validation, under what it read, still decides every candidate). A caller not seen
        before is read first, and validated as before the search's filter was remembered."""
        visibility = self.seen.get(identity)
        read_now = visibility is None
        if visibility is None:
            visibility = self._tx.read(identity, lambda uow: self.recall.visibility(uow, identity))
            self.seen.put(identity, visibility)
        for again in (False, True):
            scopes = self.recall.search_scopes(visibility, hint)
            found: list[Candidate] = []
            if scopes is not None:
                candidates = self._search(identity, query, limit, due, scopes)
                if isinstance(candidates, SearchUnavailable):
                    return candidates
                found = candidates
            searched = None if read_now else visibility
            result = self._validate(identity, found, instant, hint, limit, None, searched)
            if result.visibility is None or result.visibility == visibility or again:
                break
            visibility, read_now = result.visibility, True
            self.seen.put(identity, visibility)
        return self._noted(identity, result)

    def _noted(self, identity: Identity, result: RecallResult) -> RecallResult:
        """The memories recalled are noted as used, whichever way the scopes were found."""
        self.usage.note(
            identity.tenant_id, (shown.memory.id for shown, _ in result.recalled), utcnow()
        )
        return result

    def _validate(
        self,
        identity: Identity,
        found: list[Candidate],
        instant: datetime,
        hint: ScopeHint,
        limit: int,
        within: Visibility | None,
        searched: Visibility | None,
    ) -> RecallResult:
        started = time.monotonic()
        # A span of its own only under a recording one (traces exported): it shows where a
        # slow recall's time went, and costs its bookkeeping on every call otherwise.
        with (
            tracer.start_as_current_span("recall.validate")
            if trace.get_current_span().is_recording()
            else nullcontext(trace.INVALID_SPAN)
        ) as span:
            # Nothing found under a filter read in this call: nothing to read. Under one
            # remembered from an earlier call, the read still says whether it was current.
            result = (
                self._tx.read(
                    identity,
                    lambda uow: self.recall.validate(
                        uow, identity, found, instant, hint, limit, within, searched
                    ),
                )
                if found or searched is not None
                else RecallResult()
            )
            span.set_attribute("crmmem.recall.candidates", len(found))
            span.set_attribute("crmmem.recall.dropped", result.dropped_count)
        self.margin.observe(time.monotonic() - started)
        return result

    def _search(
        self,
        identity: Identity,
        query: str,
        limit: int,
        due: Due,
        scopes: list[tuple[str, str]],
    ) -> list[Candidate] | SearchUnavailable:
        """The sidecar's candidates, or why there are none to trust; runs outside any unit of
        work, so a slow sidecar never holds a pooled connection."""
        try:
            if self.search is None:
                raise SearchUnavailable(SEARCH_OFF)
            margin = self.margin.own_seconds if due.own else self.margin.seconds
            wait_until = due.at - margin(due.at - time.monotonic())
            if self.watch and (incomplete := self.watch.incomplete(identity.tenant_id, wait_until)):
                raise SearchUnavailable(incomplete)
            searched_at = time.monotonic()
            candidates = self.search.search(
                identity.tenant_id,
                query,
                min(limit * CANDIDATE_OVERFETCH, MAX_CANDIDATES),
                scopes,
                wait_until,
                own_deadline=due.own,
            )
            # An empty list is only said with confidence after a check the search preceded.
            if not candidates and self.watch:
                incomplete = self.watch.incomplete(identity.tenant_id, wait_until, searched_at)
                if incomplete:
                    raise SearchUnavailable(incomplete)
        except SearchUnavailable as unavailable:
            return unavailable
        return candidates


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


@dataclass(eq=False)
class RecallMemories:
    """The RecallMemories use case: recall (its own short reads around the search), counts on
    the span."""

    _recaller: Recaller

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
