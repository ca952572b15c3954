"""Vector indexes behind one small protocol: Qdrant's engine embedded, or a Qdrant server."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

PAYLOAD_FIELDS = ("tenant_id", "version", "revision_number", "scope_type", "scope_id")


@dataclass(frozen=True)
class IndexPoint:
    id: str
    tenant_id: str
    version: int
    revision_number: int
    scope_type: str
    scope_id: str
    vector: list[float]

    def payload(self) -> dict[str, str | int]:
        return {
            "memory_id": self.id,
            "tenant_id": self.tenant_id,
            "version": self.version,
            "revision_number": self.revision_number,
            "scope_type": self.scope_type,
            "scope_id": self.scope_id,
        }


@dataclass(frozen=True)
class Hit:
    id: str
    score: float
    version: int
    revision_number: int


@dataclass(frozen=True)
class ScopeSelector:
    scope_type: str
    scope_id: str = ""


class VectorIndex(Protocol):
    backend: str

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        """Writes points whose version is newer than the stored one; returns (written, stale)."""

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None: ...
    def delete_tenant(self, tenant_id: str) -> None: ...
    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]: ...
    def count(self) -> int: ...
    def close(self) -> None: ...


def point_id(memory_id: str) -> str:
    """Memory ids are 32 hex characters, which is exactly a UUID: the point id is the memory id."""
    return str(uuid.UUID(hex=memory_id))


def memory_id(point: object) -> str:
    return uuid.UUID(str(point)).hex
