"""What an answer shows of a memory at an instant, with what the rules decide about it worked
out here once: the revision that applies, and each shown revision's state then and whether it
was inferred. The app entry (or the domain, where it already knows the applicable revision)
builds these; the transport's conversion reads them and decides nothing."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Memory, Revision, RevisionStatus
from memory_service.memories.domain import authority


class ShownRevision(NamedTuple):
    """A revision with its state at the answer's instant and whether it was inferred."""

    revision: Revision
    state: RevisionStatus
    inferred: bool


class ShownMemory(NamedTuple):
    """A memory with its applicable revision at the answer's instant (None: nothing applies)
    and its latest one (the same object when the latest applies)."""

    memory: Memory
    applicable: ShownRevision | None
    latest: ShownRevision | None


class _Unknown:
    """The applicable revision not worked out yet (None says that nothing applies)."""


UNKNOWN = _Unknown()


def show_revision(revision: Revision, instant: datetime) -> ShownRevision:
    return ShownRevision(
        revision, rules.state_at(revision, instant), authority.inferred(revision.provenance)
    )


def show_memory(
    memory: Memory, instant: datetime, applicable: Revision | _Unknown | None = UNKNOWN
) -> ShownMemory:
    """`applicable`: the revision that applies at `instant`, when the caller has already worked
    it out (a context, a recall's validation), so that it is decided once."""
    if isinstance(applicable, _Unknown):
        applicable = rules.applicable_revision(memory, instant)
    shown = None if applicable is None else show_revision(applicable, instant)
    latest = memory.latest
    if latest is None or latest is applicable:
        return ShownMemory(memory, shown, shown if latest is not None else None)
    return ShownMemory(memory, shown, show_revision(latest, instant))


def show_written(
    memory: Memory, revision: Revision, now: datetime
) -> tuple[ShownMemory, ShownRevision]:
    """A write's answer: the memory it changed and the revision it wrote, as of the write."""
    shown = show_memory(memory, now)
    for known in (shown.applicable, shown.latest):
        if known is not None and known.revision is revision:
            return shown, known
    return shown, show_revision(revision, now)
