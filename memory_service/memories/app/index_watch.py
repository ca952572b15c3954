"""Notices when the search index has lost a tenant's points, so recall answers degraded instead
of a confident, incomplete list, and queues the tenant's resync.

Wiped by hand, restored from an old snapshot, a new Qdrant node, a collection of a new point-id
scheme: the sidecar answers quickly and well-formed, just without some memories. The check
compares the tenant's point count with what the records say should be searchable (less what
the outbox is still delivering). It runs off the request path, at most once per tenant per
interval: recall reads the last verdict and never waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.ports import OutboxKind, Search, UnitOfWorkFactory, chunks
from memory_service.memories.domain.indexing import missing_from_index

log = logging.getLogger("memory_service.app.index_watch")
INCOMPLETE = "INDEX_INCOMPLETE"
UNCHECKED = "INDEX_UNCHECKED"
RECHECK_INCOMPLETE_SECONDS = 1.0
READ_CHUNK = 500  # memories read per statement when a short index is looked at closely


@dataclass
class _Verdict:
    reason: str | None  # None: complete (or not checked yet)
    checked_at: float  # when the check behind `reason` finished
    began_at: float  # and when it began: it saw the index as of then
    running: threading.Event | None = None  # set when the check under way finishes
    running_began: float = float("-inf")


class IndexWatch:
    def __init__(
        self,
        search: Search,
        units: UnitOfWorkFactory,
        interval_seconds: float,
        on_queued: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._search = search
        self._units = units
        self._interval = interval_seconds
        self._on_queued = on_queued
        self._clock = clock
        self._lock = threading.Lock()
        self._verdicts: dict[str, _Verdict] = {}
        self._checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-watch")

    def incomplete(
        self, tenant_id: str, wait_until: float | None = None, since: float | None = None
    ) -> str | None:
        """The reason recall must degrade for this tenant, from the last check; starts a new
        check when that one is older than the interval (sooner while incomplete).

        Two answers cannot come from an old verdict, so they wait (until `wait_until`, a
        `time.monotonic()` instant) for a check, and degrade when none finishes in time: the
        first recall of a tenant (there is no verdict yet: a memory service started against an
        emptied index would otherwise answer its first recalls from it), and, with `since`, a
        search that found nothing, which only a check begun at or after `since` may confirm (a
        wipe between two checks would otherwise be answered as a confident empty list).
        """
        while True:
            now = self._clock()
            with self._lock:
                verdict = self._verdicts.get(tenant_id)
                if verdict is None:
                    verdict = self._verdicts[tenant_id] = _Verdict(
                        None, float("-inf"), float("-inf")
                    )
                oldest = float("-inf") if since is None else since
                settled = verdict.checked_at > float("-inf") and verdict.began_at >= oldest
                due = RECHECK_INCOMPLETE_SECONDS if verdict.reason else self._interval
                stale = now - verdict.checked_at >= due
                if verdict.running is None and (stale or not settled):
                    verdict.running = threading.Event()
                    verdict.running_began = now
                    self._checks.submit(self._check, tenant_id, verdict.running, now)
                if settled or wait_until is None:
                    return verdict.reason
                running = verdict.running
                fits = running is not None and verdict.running_began >= oldest
            left = wait_until - self._clock()
            if running is None or left <= 0:
                return f"{UNCHECKED}: the search index of this tenant is being checked"
            running.wait(left)
            if not fits and not running.is_set():
                return f"{UNCHECKED}: the search index of this tenant is being checked"

    def _check(self, tenant_id: str, done: threading.Event, began: float) -> None:
        reason: str | None = None
        try:
            reason = self._examine(tenant_id)
        except Exception as error:  # the sidecar down is the breaker's business, not ours
            log.debug("index check of tenant %s failed: %s", tenant_id, error)
        with self._lock:
            self._verdicts[tenant_id] = _Verdict(reason, self._clock(), began)
        done.set()

    def _examine(self, tenant_id: str) -> str | None:
        """Two counts when the index is complete (every recalled tenant, every interval, so the
        common case must not grow with the tenant's size, as listing its ids would), two more
        when some live memories are not searchable; a short count is looked at closely, in the
        order `missing_from_index` needs."""
        with self._units(tenant_id, write=False) as uow:
            counted = uow.memories.count_live()
            points = self._search.tenant_points(tenant_id)
            if points >= counted:
                return None  # counted after the records: nothing delivered in between is missed
            # A memory awaiting review, expired or not yet valid keeps the live count above
            # the index's for good; the searchable count, costlier, tells such a tenant
            # complete without reading every memory (seconds for a large one) each interval.
            # The same point count serves: on SQLite both counts read one snapshot, and a
            # memory made searchable and indexed meanwhile only sends the check the long way.
            if points >= uow.memories.count_searchable(utcnow()):
                return None
            live = uow.memories.live_versions()
            changes = uow.outbox.queued_changes()
            refilling = uow.outbox.tenant_work()
        indexed = self._search.tenant_points(tenant_id)
        if indexed >= len(live):
            return None
        now = utcnow()
        with self._units(tenant_id, write=False) as uow:
            # A chunk at a time: a large tenant's memories are never all held at once.
            memories = (
                memory
                for chunk in chunks(list(live), READ_CHUNK)
                for memory in uow.memories.get_many(chunk).values()
            )
            missing = missing_from_index(live, changes, indexed, memories, now)
        if missing == 0:
            return None
        if not refilling:
            with self._units(tenant_id, write=True) as uow:
                if not uow.outbox.tenant_work():
                    uow.outbox.enqueue_tenant(OutboxKind.RESYNC, utcnow())
                    uow.commit()
                    log.warning(
                        "the search index lacks %d memories of tenant %s; resync queued",
                        missing,
                        tenant_id,
                    )
            self._on_queued()
        return (
            f"{INCOMPLETE}: the search index lacks {missing} of this tenant's memories; "
            "it is being refilled from the records"
        )

    def close(self) -> None:
        self._checks.shutdown(wait=False, cancel_futures=True)
