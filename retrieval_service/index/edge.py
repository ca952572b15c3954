"""Qdrant's own engine in-process (qdrant-edge-py): the embedded default for one machine."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from retrieval_service.index import (
    DENSE,
    HIT_FIELDS,
    SPARSE,
    Hit,
    IndexPoint,
    ScopeSelector,
    hit,
    point_id,
)
from retrieval_service.lexical import SparseTerms

FLUSH_SECONDS = 5.0


class EdgeIndex:
    """Every update goes to the shard's write-ahead log, which only `flush` checkpoints and
    truncates; the embedded engine has no background flusher (Qdrant's server flushes every 5 s).
    Without one the log's memory-mapped files grow with every overwrite, even at a constant
    number of points, so updates flush at most every FLUSH_SECONDS."""

    backend = "qdrant-edge"

    def __init__(self, path: Path, dimensions: int, sparse_idf: bool = False) -> None:
        self._lock = threading.Lock()  # the shard is shared by the gRPC worker threads
        self._flushed = time.monotonic()
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dimensions, distance=qe.Distance.Cosine)},
            sparse_vectors={
                SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if sparse_idf else None)
            },
        )
        if (path / "edge_config.json").exists() or any(path.glob("segments*")):
            self._shard = qe.EdgeShard.load(str(path), config)
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._shard = qe.EdgeShard.create(str(path), config)
            self._create_payload_indexes()

    def _create_payload_indexes(self) -> None:
        self._shard.update(
            qe.UpdateOperation.create_field_index(
                "tenant_id", qe.KeywordIndexParams(is_tenant=True)
            )
        )
        for field in ("scope_type", "scope_id"):
            self._shard.update(
                qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword)
            )
        self._shard.update(
            qe.UpdateOperation.create_field_index("version", qe.PayloadSchemaType.Integer)
        )

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        with self._lock:
            stored = {
                str(record.id): int((record.payload or {}).get("version", 0))
                for record in self._shard.retrieve(
                    [point_id(p.tenant_id, p.id) for p in points],
                    with_payload=["version"],
                    with_vector=False,
                )
            }
            fresh = [p for p in points if stored.get(point_id(p.tenant_id, p.id), -1) < p.version]
            for point in fresh:
                # The same tenant and an older version, checked by the engine at write time.
                guard = qe.Filter(
                    must=[
                        _match("tenant_id", point.tenant_id),
                        qe.FieldCondition(key="version", range=qe.RangeFloat(lt=point.version)),
                    ]
                )
                self._shard.update(
                    qe.UpdateOperation.upsert_points(
                        [
                            qe.Point(
                                point_id(point.tenant_id, point.id),
                                {
                                    DENSE: point.vector,
                                    SPARSE: qe.SparseVector(
                                        list(point.sparse.indices), list(point.sparse.values)
                                    ),
                                },
                                point.payload(),
                            )
                        ],
                        condition=guard,
                    )
                )
            self._flush_if_due()
            return len(fresh), len(points) - len(fresh)

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self._lock:
            self._shard.update(
                qe.UpdateOperation.delete_points_by_filter(
                    qe.Filter(
                        must=[
                            _match("tenant_id", tenant_id),
                            qe.HasIdCondition({point_id(tenant_id, i) for i in ids}),
                        ]
                    )
                )
            )
            self._flush_if_due()

    def delete_tenant(self, tenant_id: str) -> None:
        with self._lock:
            self._shard.update(
                qe.UpdateOperation.delete_points_by_filter(
                    qe.Filter(must=[_match("tenant_id", tenant_id)])
                )
            )
            self._flush_if_due()

    def _flush_if_due(self) -> None:
        """Checkpoint the segments and truncate the log; called with the lock held."""
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self._shard.flush()
            self._flushed = time.monotonic()

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return self._hits(
            self._shard.query(
                _request(qe.Query.Nearest(vector, using=DENSE), tenant_id, limit, scopes)
            )
        )

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        if not terms:
            return []
        return self._hits(self._shard.query(_request(_sparse(terms), tenant_id, limit, scopes)))

    def search_both(
        self,
        tenant_id: str,
        vector: list[float],
        terms: SparseTerms,
        limit: int,
        scopes: Sequence[ScopeSelector],
    ) -> tuple[list[Hit], list[Hit]]:
        if not terms:
            return self.search(tenant_id, vector, limit, scopes), []
        dense, sparse = self._shard.query_batch(
            qe.QueryBatchRequest(
                [
                    _request(qe.Query.Nearest(vector, using=DENSE), tenant_id, limit, scopes),
                    _request(_sparse(terms), tenant_id, limit, scopes),
                ]
            )
        )
        return self._hits(dense), self._hits(sparse)

    @staticmethod
    def _hits(found: Sequence[Any]) -> list[Hit]:
        return [hit(float(point.score), point.payload) for point in found]

    def count(self, tenant_id: str = "") -> int:
        if not tenant_id:
            return int(self._shard.info().points_count)
        return int(
            self._shard.count(
                qe.CountRequest(filter=qe.Filter(must=[_match("tenant_id", tenant_id)]), exact=True)
            )
        )

    def close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


def _match(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def _sparse(terms: SparseTerms) -> qe.Query:
    return qe.Query.Nearest(qe.SparseVector(list(terms.indices), list(terms.values)), using=SPARSE)


def _request(
    query: qe.Query, tenant_id: str, limit: int, scopes: Sequence[ScopeSelector]
) -> qe.QueryRequest:
    must: list[Any] = [_match("tenant_id", tenant_id)]
    if scopes:
        must.append(qe.Filter(should=[_scope_filter(scope) for scope in scopes]))
    return qe.QueryRequest(
        limit=limit,
        query=query,
        filter=qe.Filter(must=must),
        with_payload=HIT_FIELDS,
        with_vector=False,
    )


def _scope_filter(scope: ScopeSelector) -> qe.Filter:
    must: list[Any] = [_match("scope_type", scope.scope_type)]
    if scope.scope_id:
        must.append(_match("scope_id", scope.scope_id))
    return qe.Filter(must=must)
