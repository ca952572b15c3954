"""Qdrant's own engine in-process (qdrant-edge-py). The sidecar runs this adapter in a worker
process of its own (`embedded_process`), because every engine call holds the interpreter."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from retrieval_service.index import (
    DELETED,
    DENSE,
    HIT_FIELDS,
    SPARSE,
    Hit,
    IndexPoint,
    ScopeSelector,
    hit,
    markers,
    point_id,
)
from retrieval_service.lexical import SparseTerms

FLUSH_SECONDS = 5.0
# The engine has no background optimiser, and its `optimize` holds the interpreter (no other
# thread of the process runs) for about a second per 10,000 points it rewrites. So the process
# that serves never optimises: `embedded_process` optimises a copy of the shard in a second worker
# process and switches to it. `optimize_points` > 0 (tests, and whoever embeds this adapter
# directly and accepts those pauses) makes every that many written points an update index the
# appendable segment, and optimises a stored shard once when opened. OPTIMIZE_POINTS sizes the
# segments such a step writes.
OPTIMIZE_POINTS = 20_000
SEGMENTS = 1_000  # the target number of segments: high enough that no merge is ever planned
# A tenant's vectors are scanned (no graph: `m` and `payload_m` 0), as int8 codes kept in RAM,
# the best candidates rescored with the stored float vectors: exact-search quality at a quarter
# of the bytes read (docs/benchmarks.md, embedded engine).
RESCORE = qe.SearchParams(quantization=qe.QuantizationSearchParams(rescore=True, oversampling=2.0))


def shard_config(dimensions: int, sparse_idf: bool, optimize_points: int) -> qe.EdgeConfig:
    """The indexing threshold (in KiB of dense vectors) is half an optimisation step, so each
    step indexes the appendable segment it filled, whatever the dimensions.

    Every hit reads its point's payload (`HIT_FIELDS`). Left cold (the engine's default:
    mapped, read from disk on first touch), a tenant's first searches after a worker opened a
    generation read about 20 pages each: p50 3.1 against 0.7 ms once read, at 1M points. Held
    cached, the segments written from then on are read whole when opened, at about 33 MiB a
    segment however few points it holds (the engine's payload page file is 32 MiB)."""
    threshold_kib = max(1, optimize_points * dimensions * 4 // 1024 // 2)
    return qe.EdgeConfig(
        payload_memory=qe.Memory.Cached,
        vectors={DENSE: qe.EdgeVectorParams(size=dimensions, distance=qe.Distance.Cosine)},
        sparse_vectors={
            SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if sparse_idf else None)
        },
        hnsw_config=qe.HnswIndexConfig(
            m=0, ef_construct=100, full_scan_threshold=10_000, payload_m=0
        ),
        quantization_config=qe.ScalarQuantizationConfig(
            type=qe.ScalarType.Int8, quantile=0.99, always_ram=True
        ),
        optimizers=qe.EdgeOptimizersConfig(
            default_segment_number=SEGMENTS, indexing_threshold=threshold_kib
        ),
    )


class EmbeddedIndex:
    """Every update goes to the shard's write-ahead log, which only `flush` checkpoints and
    truncates; the embedded engine has no background flusher (Qdrant's server flushes every 5 s).
    Without one the log's memory-mapped files grow with every overwrite, even at a constant
    number of points, so updates flush at most every FLUSH_SECONDS.

    Nor has it a background optimiser: points stay in an appendable, unindexed segment (a
    search there walks the tenant's points one by one) until `optimize` runs, which freezes the
    whole process while it runs: the sidecar's worker leaves it to a second worker working on
    a copy (`embedded_process`). With `optimize_points` > 0 updates call it every that many written
    points and a shard opened from disk is optimised once at start; with 0, the default, only
    an explicit `optimize()` does."""

    backend = "qdrant-edge"

    def __init__(
        self,
        path: Path,
        dimensions: int,
        sparse_idf: bool = False,
        optimize_points: int = 0,
    ) -> None:
        self._lock = threading.Lock()  # the shard is shared by the gRPC worker threads
        self._flushed = time.monotonic()
        self._optimize_points = optimize_points
        self._pending = 0  # points written since the last optimisation
        config = shard_config(dimensions, sparse_idf, optimize_points or OPTIMIZE_POINTS)
        if (path / "edge_config.json").exists() or any(path.glob("segments*")):
            self._shard = qe.EdgeShard.load(str(path), config)
            if DELETED not in self._shard.info().payload_schema:  # a shard from before markers
                self._index_markers()
            if optimize_points:
                self._shard.optimize()
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
        self._index_markers()

    def _index_markers(self) -> None:
        """Counts skip deletion markers through this index: without it every count reads the
        payload of every point (38 ms of CPU at 20,000 points, 1.5 ms with it)."""
        self._shard.update(
            qe.UpdateOperation.create_field_index(DELETED, qe.PayloadSchemaType.Bool)
        )

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        """Two engine updates at most, whatever the batch size: one write per point cost a
        log append and a guard evaluation each (about 1,400 points/s). Points the shard lacks
        go in as insert-only (never overwriting one that exists); points it holds at an older
        (version, revision) of the same tenant go in under one condition that is the per-point
        guard (same tenant, older version, or the same version and an older revision: a
        correction taking effect later is re-indexed then at an unchanged version) written as
        one clause per (tenant, version, revision) group."""
        newest: dict[str, IndexPoint] = {}
        for point in points:  # a batch naming a point twice keeps its newest version
            key = point_id(point.tenant_id, point.id)
            if key not in newest or _order(newest[key]) < _order(point):
                newest[key] = point
        with self._lock:
            stored = {
                str(record.id): record.payload or {}
                for record in self._shard.retrieve(
                    list(newest),
                    with_payload=["tenant_id", "version", "revision_number"],
                    with_vector=False,
                )
            }
            absent: list[qe.Point] = []
            older: list[qe.Point] = []
            groups: dict[tuple[str, int, int], set[qe.PointId]] = {}
            for key, point in newest.items():
                if key not in stored:
                    absent.append(_point(key, point))
                elif stored[key].get("tenant_id") == point.tenant_id and (
                    int(str(stored[key].get("version", 0))),
                    int(str(stored[key].get("revision_number", 0))),
                ) < _order(point):
                    older.append(_point(key, point))
                    order = (point.tenant_id, point.version, point.revision_number)
                    groups.setdefault(order, set()).add(key)
            if absent:
                self._shard.update(
                    qe.UpdateOperation.upsert_points(absent, update_mode=qe.UpdateMode.InsertOnly)
                )
            if older:
                # Checked by the engine at write time, per point: its own group's clause.
                guard = qe.Filter(
                    should=[
                        qe.Filter(
                            must=[
                                qe.HasIdCondition(ids),
                                _match("tenant_id", tenant),
                                _older(version, revision),
                            ]
                        )
                        for (tenant, version, revision), ids in groups.items()
                    ]
                )
                self._shard.update(qe.UpdateOperation.upsert_points(older, condition=guard))
            written = len(absent) + len(older)
            self._pending += written
            if self._optimize_points and self._pending >= self._optimize_points:
                self._optimize()
            self._flush_if_due()
            return written, len(points) - written

    def optimize(self) -> bool:
        """Index what was written since the last optimisation; True when anything changed."""
        with self._lock:
            return self._optimize()

    def _optimize(self) -> bool:
        """Called with the lock held."""
        self._pending = 0
        return bool(self._shard.optimize())

    def delete(self, tenant_id: str, ids: Sequence[str], versions: Sequence[int] = ()) -> None:
        """Each point is overwritten by its deletion marker (`markers`), under the lock, so
        no write lands between the read of its order and the marker."""
        if not ids:
            return
        with self._lock:
            stored = {
                str(record.id): record.payload or {}
                for record in self._shard.retrieve(
                    [point_id(tenant_id, i) for i in ids],
                    with_payload=["tenant_id", "version", "revision_number", DELETED],
                    with_vector=False,
                )
            }
            written = [
                qe.Point(key, {}, payload)
                for key, payload in markers(tenant_id, ids, versions, stored).items()
            ]
            if written:
                self._shard.update(qe.UpdateOperation.upsert_points(written))
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
        return self._hits(self._shard.query(_dense(vector, tenant_id, limit, scopes)))

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
                    _dense(vector, tenant_id, limit, scopes),
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
            markers = self._shard.count(
                qe.CountRequest(filter=qe.Filter(must_not=[_live()]), exact=True)
            )
            return int(self._shard.info().points_count) - int(markers)
        return int(
            self._shard.count(
                qe.CountRequest(
                    filter=qe.Filter(must=[_match("tenant_id", tenant_id), _live()]),
                    exact=True,
                )
            )
        )

    def close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


def _point(key: str, point: IndexPoint) -> qe.Point:
    sparse = qe.SparseVector(list(point.sparse.indices), list(point.sparse.values))
    return qe.Point(key, {DENSE: point.vector, SPARSE: sparse}, point.payload())


def _order(point: IndexPoint) -> tuple[int, int]:
    """What a write must be newer in: the memory's version, then the revision it indexes."""
    return point.version, point.revision_number


def _older(version: int, revision: int) -> qe.Filter:
    """A stored point older than (version, revision): an older version, or this version at an
    older revision."""
    return qe.Filter(
        should=[
            qe.FieldCondition(key="version", range=qe.RangeFloat(lt=version)),
            qe.Filter(
                must=[
                    qe.FieldCondition(key="version", range=qe.RangeFloat(gte=version, lte=version)),
                    qe.FieldCondition(key="revision_number", range=qe.RangeFloat(lt=revision)),
                ]
            ),
        ]
    )


def _live() -> qe.IsEmptyCondition:
    """Not a deletion marker."""
    return qe.IsEmptyCondition(DELETED)


def _match(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def _sparse(terms: SparseTerms) -> qe.Query:
    return qe.Query.Nearest(qe.SparseVector(list(terms.indices), list(terms.values)), using=SPARSE)


def _dense(
    vector: list[float], tenant_id: str, limit: int, scopes: Sequence[ScopeSelector]
) -> qe.QueryRequest:
    return _request(qe.Query.Nearest(vector, using=DENSE), tenant_id, limit, scopes, RESCORE)


def _request(
    query: qe.Query,
    tenant_id: str,
    limit: int,
    scopes: Sequence[ScopeSelector],
    params: qe.SearchParams | None = None,
) -> qe.QueryRequest:
    must: list[Any] = [_match("tenant_id", tenant_id)]
    if scopes:
        must.append(qe.Filter(should=[_scope_filter(scope) for scope in scopes]))
    return qe.QueryRequest(
        limit=limit,
        query=query,
        filter=qe.Filter(must=must),
        params=params,
        with_payload=HIT_FIELDS,
        with_vector=False,
    )


def _scope_filter(scope: ScopeSelector) -> qe.Filter:
    must: list[Any] = [_match("scope_type", scope.scope_type)]
    if scope.scope_id:
        must.append(_match("scope_id", scope.scope_id))
    return qe.Filter(must=must)
