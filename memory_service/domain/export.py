"""Export records as JSON Lines objects (schema `crmmem.memory-export/v1`, committed under
`schemas/`). Pure functions: the same record always exports to the same object."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory_service.domain.authorization import require_admin
from memory_service.domain.model import Identity, Memory, Revision, ScopeType
from memory_service.domain.ports import MemoryQuery, UnitOfWork, Visibility

SCHEMA_ID = "crmmem.memory-export/v1"


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _revision(revision: Revision) -> dict[str, Any]:
    provenance = revision.provenance
    confirmation = revision.confirmation
    return {
        "number": revision.number,
        "value": revision.value,
        "status": revision.status.value,
        "valid_from": _time(revision.valid_from),
        "valid_until": _time(revision.valid_until),
        "superseded_from": _time(revision.superseded_from),
        "superseded_by": revision.superseded_by_number,
        "replaces": revision.replaces_number,
        "provenance": {
            "speaker": provenance.speaker.value,
            "method": provenance.method.value,
            "evidence_type": provenance.evidence.type.value,
            "evidence": provenance.evidence.ref,
            "quote": provenance.quote,
            "source_time": _time(provenance.source_time),
        },
        "create_time": _time(revision.create_time),
        "author_user_id": revision.author_user_id,
        "confirmation": (
            None
            if confirmation is None
            else {
                "user_id": confirmation.user_id,
                "confirm_time": _time(confirmation.confirm_time),
            }
        ),
    }


def export_record(memory: Memory) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "id": memory.id,
        "scope": {"type": memory.scope.type.value, "id": memory.scope.id},
        "key": memory.key,
        "key_context": memory.key_context,
        "kind": memory.kind.value,
        "create_time": _time(memory.create_time),
        "update_time": _time(memory.update_time),
        "delete_time": _time(memory.delete_time),
        "key_hash": memory.key_hash,
        "revisions": [_revision(r) for r in memory.revisions],
    }


class ExportUseCases:
    """Who may export what: their own user memory, or (admins) a user's or the tenant's."""

    def query(self, identity: Identity, user_id: str | None, include_deleted: bool) -> MemoryQuery:
        if user_id is None:
            require_admin(identity)
            return MemoryQuery(Visibility(None, None), show_deleted=include_deleted)
        if user_id != identity.user_id:
            require_admin(identity)
        return MemoryQuery(
            Visibility(frozenset({user_id}), frozenset(), organization=False),
            scope_type=ScopeType.USER,
            scope_id=user_id,
            show_deleted=include_deleted,
        )

    @staticmethod
    def page(uow: UnitOfWork, query: MemoryQuery, after_id: str, limit: int) -> list[Memory]:
        return uow.memories.list_after(query, after_id, limit)
