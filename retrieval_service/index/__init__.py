"""Vector indexes behind one small protocol: Qdrant's engine embedded, or a Qdrant server.

Each point carries two vectors: the sentence embedding (`DENSE`) and the BM25 term weights
(`SPARSE`, whose index applies the IDF modifier). Either can be searched alone; `search_both`
asks for both lists in one round trip. The sidecar's Search asks for them apart (the sparse list
while the model embeds the query) and fuses them (`retrieval_service.fusion`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from retrieval_service.lexical import NO_TERMS, SparseTerms

PAYLOAD_FIELDS = ("tenant_id", "version", "revision_number", "scope_type", "scope_id")
HIT_FIELDS = ["memory_id", "version", "revision_number"]
# Point ids are UUIDv5 names in this namespace over the tenant and the memory id.
POINT_NAMESPACE = uuid.UUID("6f1c2a4e-3b7d-5e8f-9a0b-1c2d3e4f5a6b")
DENSE = "dense"
SPARSE = "bm25"
# A deleted memory's point becomes a deletion marker: the same point id and order (version,
# revision) with no vectors, so no search finds it, and `deleted` set, so no count does. The
# upsert guard then refuses a late write at or below that order, as it would had the point
# stayed (an upsert the client gave up on, applied after the delete), while a later version
# (a restore that extends the memory) replaces the marker. Markers are points of the shard:
# they persist and are copied with it, and a tenant's deletion removes them with the rest.
DELETED = "deleted"


@dataclass(frozen=True)
class IndexPoint:
    id: str
    tenant_id: str
    version: int
    revision_number: int
    scope_type: str
    scope_id: str
    vector: list[float]
    sparse: SparseTerms = NO_TERMS

    def payload(self) -> dict[str, str | int]:
        return {
            "memory_id": self.id,
            "tenant_id": self.tenant_id,
            "version": self.version,
            "revision_number": self.revision_number,
            "scope_type": self.scope_type,
            "scope_id": self.scope_id,
        }


def markers(
    tenant_id: str,
    ids: Sequence[str],
    versions: Sequence[int],
    stored: dict[str, dict[str, object]],
) -> dict[str, dict[str, object]]:
    """The deletion markers to write, by point id: `stored` holds the payloads read for the
    points of `ids`. The marker takes the higher of the point's order and (version sent, 0): a
    deletion writes a new version of the memory, so no upsert of the text deleted is as high;
    a memory with no revision applying now and one that applies later at the same version
    gets a higher revision then. A point of another tenant, or already a marker, is left."""
    found: dict[str, dict[str, object]] = {}
    for position, memory_id in enumerate(ids):
        key = point_id(tenant_id, memory_id)
        sent = (versions[position] if position < len(versions) else 0, 0)
        payload = stored.get(key)
        if payload is not None and payload.get("tenant_id") != tenant_id:
            continue
        held = (
            (int(str(payload.get("version", 0))), int(str(payload.get("revision_number", 0))))
            if payload is not None
            else (0, 0)
        )
        if payload is None and sent[0] <= 0:
            continue  # nothing to remove, nothing to hold
        if payload is not None and payload.get(DELETED) and held >= sent:
            continue
        version, revision = max(held, sent)
        found[key] = {
            "memory_id": memory_id,
            "tenant_id": tenant_id,
            "version": version,
            "revision_number": revision,
            DELETED: True,
        }
    return found


class Hit(NamedTuple):
    """A tuple: built and pickled for every candidate of every search (each one crosses from the
    engine's worker process), a quarter of a frozen dataclass's cost."""

    id: str
    score: float
    version: int
    revision_number: int


class ScopeSelector(NamedTuple):
    scope_type: str
    scope_id: str = ""


class VectorIndex(Protocol):
    backend: str

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        """Writes points whose version is newer than the stored one; returns (written, stale)."""

    def delete(self, tenant_id: str, ids: Sequence[str], versions: Sequence[int] = ()) -> None:
        """Replaces each point with its deletion marker (`DELETED`), at the point's order or
        the memory's version sent for it (`versions`, by position; 0 for none), whichever is
        higher; with a version, an id the index lacks gets a marker too (see `markers`)."""

    def delete_tenant(self, tenant_id: str) -> None: ...
    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        """Nearest by the dense vector (cosine)."""

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        """Best BM25 matches; none for a query without terms."""

    def search_both(
        self,
        tenant_id: str,
        vector: list[float],
        terms: SparseTerms,
        limit: int,
        scopes: Sequence[ScopeSelector],
    ) -> tuple[list[Hit], list[Hit]]:
        """The dense and the sparse list in one call to the engine."""

    def count(self, tenant_id: str = "") -> int:
        """Points in the index, or of one tenant; deletion markers are not counted."""

    def close(self) -> None: ...


def point_id(tenant_id: str, memory_id: str) -> str:
    """Scoped by tenant: a document sent under another tenant lands on a point of its own and
    can neither move nor shadow this one, whatever memory id it carries."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{tenant_id}\x00{memory_id}"))


def hit(score: float, payload: dict[str, object] | None) -> Hit:
    """The memory id comes from the payload: point ids are one-way."""
    fields = payload or {}
    return Hit(
        str(fields.get("memory_id", "")),
        float(score),
        int(str(fields.get("version", 0))),
        int(str(fields.get("revision_number", 0))),
    )
