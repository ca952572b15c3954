"""Stale evidence, written once and applied on every write path (create, correct, confirm,
propose, import confirmation, restore): what was said before a key was deleted, or before the
revision that now holds the key, cannot write that key again. Only newer evidence can.

The other evidence rule, grounding (does the evidence say what the value says), lives in
`grounding.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Memory, Revision, RevisionStatus


def said_time(revision: Revision) -> datetime:
    """When a revision's evidence was said; no later than the revision was written."""
    said = revision.provenance.source_time
    return revision.create_time if said is None else min(said, revision.create_time)


def offered_time(revision: Revision) -> datetime | None:
    """When a stored revision's evidence was said, offered again to hold its key (a confirmation,
    a restore): no later than the revision was written, and unknown stays unknown (old)."""
    said = revision.provenance.source_time
    return None if said is None else min(said, revision.create_time)


def evidence_time(asserted: datetime | None, recorded: datetime | None) -> datetime | None:
    """An asserted source time can only make evidence older than its record, never newer."""
    if asserted is None:
        return recorded
    if recorded is None:
        return asserted
    return min(asserted, recorded)


def archive_time(asserted: datetime | None, uploaded: datetime) -> datetime | None:
    """When an archived statement was said: what the archive asserts, but no later than the
    upload (an archive cannot hold what was said after it). Unknown stays unknown."""
    return None if asserted is None else min(asserted, uploaded)


@dataclass(frozen=True)
class Offered:
    """Evidence offered to write `value` to a key."""

    said: datetime | None  # when it was said; None when unknown, which counts as old
    value: str
    subject_statement: bool  # the subject's own words (authority.py) may bring a value back
    ref: str = ""  # its name, to refuse evidence that underlies a deleted memory


@dataclass(frozen=True)
class KeyHistory:
    """What the store knows about a key when new evidence arrives to write it."""

    deleted_at: datetime | None  # the key's newest deletion marker, if any
    memory: Memory | None  # the live memory holding the key, if any
    evidence_withdrawn: bool = False  # the evidence underlies a deleted memory


def stale_evidence(
    said: datetime | None,
    history: KeyHistory,
    value: str,
    *,
    subject_statement: bool,
    now: datetime,
    exclude: Revision | None = None,
) -> str:
    """Why evidence said at `said` may not write `value` to the key; '' when it may.

    - evidence said at or before the key's deletion (or of unknown time, when the key was
      deleted) never recreates it; nor does evidence that underlies a deleted memory;
    - evidence said before the evidence of the newest active revision (counting revisions
      effective in the future) cannot replace it; unknown times count as old;
    - a value the memory already had and that was superseded or rejected comes back only
      from the subject's own statement (imports, inference and rules cannot revive it).
    """
    deleted_at = history.deleted_at
    if deleted_at is not None and (said is None or said <= deleted_at):
        return (
            "the memory was deleted after this evidence was said; only newer evidence may write it"
        )
    if history.evidence_withdrawn:
        return "this evidence underlies a deleted memory"
    memory = history.memory
    if memory is None:
        return ""
    newest = _newest_active(r for r in memory.revisions if r is not exclude)
    if newest is not None and (said is None or said < said_time(newest)):
        return (
            f"the evidence predates revision {newest.number}, which holds the key now; "
            "an older statement cannot undo a newer one"
        )
    if not subject_statement:
        normalized = rules.normalize_for_match(value)
        for revision in memory.revisions:
            state = rules.state_at(revision, now)
            if state in (RevisionStatus.SUPERSEDED, RevisionStatus.REJECTED) and (
                rules.normalize_for_match(revision.value) == normalized
            ):
                return (
                    f"revision {revision.number} with this value was {state.value.lower()}; "
                    "only the subject's own statement brings it back"
                )
    return ""


def _newest_active(revisions: Iterable[Revision]) -> Revision | None:
    newest: Revision | None = None
    for revision in revisions:
        if revision.status is RevisionStatus.ACTIVE and (
            newest is None or said_time(revision) > said_time(newest)
        ):
            newest = revision
    return newest
