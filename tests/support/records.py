"""Domain records for tests that need a memory without a server: one builder, so a new field
of `Memory` or `Revision` is added here once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Memory,
    MemoryKind,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)

MESSAGE = "conversations/c/messages/m"


def user_statement(
    quote: str = "", source_time: datetime | None = None, evidence: str = MESSAGE
) -> Provenance:
    """The user's own words in a transcript message."""
    return Provenance(
        Speaker.USER,
        ProvenanceMethod.USER_STATEMENT,
        EvidenceRef(EvidenceType.TRANSCRIPT_MESSAGE, evidence),
        quote,
        source_time,
    )


def revision(number: int, create_time: datetime, **changes: Any) -> Revision:
    """An ACTIVE revision of memory `m` by user `u`, valued `v{number}`, unless changed."""
    fields: dict[str, Any] = {
        "memory_id": "m",
        "number": number,
        "value": f"v{number}",
        "valid_from": None,
        "valid_until": None,
        "status": RevisionStatus.ACTIVE,
        "provenance": user_statement(),
        "create_time": create_time,
        "author_user_id": "u",
    }
    fields.update(changes)
    return Revision(**fields)


def memory(
    *revisions: Revision,
    created: datetime,
    memory_id: str = "m",
    tenant: str = "t",
    user: str = "u",
    key: str = "k",
) -> Memory:
    """A user's preference holding `revisions`."""
    return Memory(
        memory_id, tenant, Scope(ScopeType.USER, user), key, "", MemoryKind.PREFERENCE, 1,
        created, created, revisions=list(revisions),
    )  # fmt: skip
