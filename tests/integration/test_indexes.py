"""The vector index adapters on real engines: Qdrant's engine embedded (qdrant-edge), and
qdrant-client (here in its local mode, which speaks the same client API as a Qdrant server)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from retrieval_service.index import IndexPoint, ScopeSelector, VectorIndex, point_id
from retrieval_service.index.embedded import OPTIMIZE_POINTS, EmbeddedIndex
from retrieval_service.index.embedded_process import EmbeddedProcessIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex

DIMENSIONS = 8


def vector(seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(DIMENSIONS)]


def point(
    n: int, tenant: str = "t1", version: int = 1, scope: str = "USER", who: str = "u1"
) -> IndexPoint:
    return IndexPoint(f"{n:032x}", tenant, version, version, scope, who, vector(n))


@pytest.fixture(params=["embedded", "embedded-process", "qdrant-client"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    if request.param == "embedded":
        opened: VectorIndex = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    elif request.param == "embedded-process":
        opened = EmbeddedProcessIndex(tmp_path / "embedded", DIMENSIONS)
    else:
        opened = QdrantClientIndex(QdrantClient(location=":memory:"), "c", DIMENSIONS, "local")
    yield opened
    opened.close()


def test_a_lower_version_never_overwrites_a_higher_one(index: VectorIndex) -> None:
    assert index.upsert([point(1, version=5)]) == (1, 0)
    assert index.upsert([point(1, version=4), point(2, version=1)]) == (1, 1)
    assert index.upsert([point(1, version=5)]) == (0, 1)  # a repeat is harmless
    hits = index.search("t1", vector(1), 1, [])
    assert (hits[0].id, hits[0].version) == (f"{1:032x}", 5)
    assert index.upsert([point(1, version=6)]) == (1, 0)


def test_a_newer_revision_at_the_same_version_is_written_and_an_older_one_is_not(
    index: VectorIndex,
) -> None:
    """A correction that takes effect later is re-indexed then with the memory's version
    unchanged and the newer revision; a document read on a clock from before the correction
    took effect carries the new version with the old revision. Either way the newer revision
    of the same version must replace the older, never the reverse."""
    memory = f"{1:032x}"
    stored = IndexPoint(memory, "t1", 2, 1, "USER", "u1", vector(1))
    assert index.upsert([stored]) == (1, 0)
    newer = IndexPoint(memory, "t1", 2, 2, "USER", "u1", vector(1))
    assert index.upsert([newer]) == (1, 0)
    hits = index.search("t1", vector(1), 1, [])
    assert (hits[0].id, hits[0].version, hits[0].revision_number) == (memory, 2, 2)
    assert index.upsert([stored]) == (0, 1)  # the older revision, late
    assert index.upsert([IndexPoint(memory, "t1", 1, 3, "USER", "u1", vector(1))]) == (0, 1)
    hits = index.search("t1", vector(1), 1, [])
    assert (hits[0].version, hits[0].revision_number) == (2, 2)
    assert index.upsert([IndexPoint(memory, "t1", 3, 1, "USER", "u1", vector(1))]) == (1, 0)


def test_search_never_crosses_tenants_and_honours_scopes(index: VectorIndex) -> None:
    index.upsert([point(1, "t1"), point(2, "t2"), point(3, "t1", scope="CUSTOMER", who="c9")])
    assert {h.id for h in index.search("t2", vector(1), 10, [])} == {f"{2:032x}"}
    customers = index.search("t1", vector(1), 10, [ScopeSelector("CUSTOMER", "c9")])
    assert [h.id for h in customers] == [f"{3:032x}"]
    users = index.search("t1", vector(1), 10, [ScopeSelector("USER", "u1")])
    assert [h.id for h in users] == [f"{1:032x}"]


def test_deletes_by_id_and_by_tenant(index: VectorIndex) -> None:
    index.upsert([point(n, "t1" if n < 5 else "t2") for n in range(8)])
    index.delete("t1", [f"{1:032x}", f"{6:032x}"])  # 6 belongs to t2: untouched
    assert index.count() == 7
    index.delete_tenant("t2")
    assert index.count() == 4
    assert {h.id for h in index.search("t1", vector(1), 10, [])} == {
        f"{n:032x}" for n in (0, 2, 3, 4)
    }


def test_the_embedded_engine_keeps_points_across_restarts(tmp_path: Path) -> None:
    first = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    first.upsert([point(n) for n in range(20)])
    first.close()
    reopened = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    assert reopened.count() == 20
    assert reopened.search("t1", vector(7), 1, [])[0].id == f"{7:032x}"
    reopened.close()


def test_a_memory_id_sent_under_another_tenant_neither_moves_nor_shadows_the_point(
    index: VectorIndex,
) -> None:
    """Point ids are scoped by tenant: the same memory id under t2, even at a far higher
    version, is a separate point. t1 keeps its point, its version, and its corrections.
    Fails on the previous main, where the point id was the memory id alone."""
    index.upsert([point(1, "t1", version=3)])
    assert index.upsert([point(1, "t2", version=1_000_000)]) == (1, 0)
    [kept] = index.search("t1", vector(1), 10, [])
    assert (kept.id, kept.version) == (f"{1:032x}", 3)
    assert index.upsert([point(1, "t1", version=4)]) == (1, 0)  # the real correction lands
    assert [h.version for h in index.search("t1", vector(1), 10, [])] == [4]
    index.delete_tenant("t2")
    assert index.count("t1") == 1
    index.delete("t2", [f"{1:032x}"])  # t2's delete of the same id leaves t1's point
    assert index.count("t1") == 1


def test_counts_points_per_tenant(index: VectorIndex) -> None:
    index.upsert([point(n, "t1" if n < 5 else "t2") for n in range(8)])
    assert (index.count(), index.count("t1"), index.count("t2"), index.count("t3")) == (8, 5, 3, 0)


class CountingShard:
    """The real shard, counting flushes."""

    def __init__(self, shard: object) -> None:
        self._shard = shard
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        self._shard.flush()  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._shard, name)


def test_embedded_index_checkpoints_its_write_ahead_log_while_updates_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded engine never truncates its log by itself: without these flushes its mapped
    files grow with every overwrite at a constant number of points (the soak in
    docs/benchmarks.md)."""
    index = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    shard = CountingShard(index._shard)
    index._shard = shard  # type: ignore[assignment]
    for version in range(1, 50):
        index.upsert([point(n, version=version) for n in range(5)])
    assert shard.flushes == 0, "flushes at most every FLUSH_SECONDS, not per update"
    monkeypatch.setattr("retrieval_service.index.embedded.FLUSH_SECONDS", 0.0)
    index.upsert([point(1, version=50)])
    index.delete("t1", [f"{2:032x}"])
    index.delete_tenant("t2")
    assert shard.flushes == 3
    assert index.count() == 4
    index.close()


def stored_versions(index: VectorIndex, tenant: str, ids: range) -> dict[int, int]:
    """Each point's stored version, by its own vector (top hit of a search of the tenant)."""
    found = {}
    for n in ids:
        hits = [h for h in index.search(tenant, vector(n), 20, []) if h.id == f"{n:032x}"]
        if hits:
            found[n] = hits[0].version
    return found


def test_one_batch_mixing_new_older_newer_and_repeated_points_keeps_each_guard(
    index: VectorIndex,
) -> None:
    """A batch spans tenants and versions: each point is written only over an older version
    of the same tenant's point, as if it had been written alone."""
    index.upsert([point(1, "t1", 5), point(2, "t1", 2), point(3, "t2", 4), point(4, "t2", 1)])
    written = index.upsert(
        [
            point(1, "t1", 4),  # older than stored: stale
            point(2, "t1", 3),  # newer: written
            point(3, "t2", 4),  # the same version: stale
            point(4, "t2", 9),  # newer: written
            point(5, "t1", 1),  # new
            point(6, "t2", 7),  # new
        ]
    )
    assert written == (4, 2)
    assert stored_versions(index, "t1", range(1, 7)) == {1: 5, 2: 3, 5: 1}
    assert stored_versions(index, "t2", range(1, 7)) == {3: 4, 4: 9, 6: 7}


def test_a_batch_naming_a_point_twice_keeps_its_newest_version(index: VectorIndex) -> None:
    index.upsert([point(1, version=3), point(1, version=7), point(1, version=5)])
    assert stored_versions(index, "t1", range(1, 2)) == {1: 7}
    assert index.count() == 1


class StaleReads:
    """The real shard whose `retrieve` reports nothing stored, or every point at version 0:
    what a writer would see if another had written between its read and its update."""

    def __init__(self, shard: object, version: int | None) -> None:
        self._shard = shard
        self._version = version
        self.updates = 0

    def retrieve(self, ids: list[str], **_options: object) -> list[object]:
        if self._version is None:
            return []
        records = self._shard.retrieve(ids, with_payload=True, with_vector=False)  # type: ignore[attr-defined]
        return [FakeRecord(r.id, {**r.payload, "version": self._version}) for r in records]

    def update(self, operation: object) -> None:
        self.updates += 1
        self._shard.update(operation)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._shard, name)


class FakeRecord:
    def __init__(self, id: object, payload: dict[str, object]) -> None:
        self.id = id
        self.payload = payload


@pytest.mark.parametrize("stale_version", [None, 0])
def test_the_engine_guards_each_point_even_when_the_read_before_the_write_was_stale(
    tmp_path: Path, stale_version: int | None
) -> None:
    """The version read only sorts a batch; the write itself carries the guard the engine
    checks: a point missing from the read goes in insert-only, one read as older goes in under
    its (tenant, version) condition. Either way a newer stored version survives."""
    index = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    index.upsert([point(1, "t1", 5), point(2, "t1", 1), point(3, "t2", 8)])
    shard = StaleReads(index._shard, stale_version)
    index._shard = shard  # type: ignore[assignment]
    index.upsert([point(1, "t1", 4), point(2, "t1", 4), point(3, "t2", 4), point(4, "t2", 4)])
    index._shard = shard._shard  # type: ignore[assignment]
    assert stored_versions(index, "t1", range(1, 5)) == {1: 5, 2: 1 if stale_version is None else 4}
    assert stored_versions(index, "t2", range(1, 5)) == {3: 8, 4: 4}
    index.close()


def test_embedded_index_writes_a_batch_in_at_most_two_engine_updates(tmp_path: Path) -> None:
    """One insert-only update for new points, one conditional update for older ones, however
    many tenants and versions the batch holds (previously one update per point)."""
    index = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    index.upsert([point(n, f"t{n % 3}", 1) for n in range(30)])
    shard = StaleReads(index._shard, 1)
    shard.retrieve = index._shard.retrieve  # type: ignore[method-assign]
    index._shard = shard  # type: ignore[assignment]
    batch = [point(n, f"t{n % 3}", 2 + n % 4) for n in range(60)]
    assert index.upsert(batch) == (60, 0)
    assert shard.updates == 2
    index.close()


def test_embedded_index_optimizes_every_optimize_points_and_still_guards_and_deletes(
    tmp_path: Path,
) -> None:
    """Updates optimise the shard every `optimize_points` written points; indexed (quantised)
    segments answer the same, keep the version guard, and lose deleted points."""
    index = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=40)
    shard = CountingShard(index._shard)
    optimized = []
    shard.optimize = lambda: optimized.append(1) or index._shard._shard.optimize()  # type: ignore[attr-defined, func-returns-value]
    index._shard = shard  # type: ignore[assignment]
    index.upsert([point(n, f"t{n % 2}") for n in range(30)])
    assert optimized == []
    index.upsert([point(n, f"t{n % 2}") for n in range(30, 60)])
    assert optimized == [1]
    assert shard._shard.info().segments_count >= 2  # an indexed segment and an appendable one
    assert index.search("t1", vector(7), 1, [])[0].id == f"{7:032x}"
    assert index.upsert([point(7, "t1", version=0), point(9, "t1", version=2)]) == (1, 1)
    assert stored_versions(index, "t1", range(7, 10, 2)) == {7: 1, 9: 2}
    index.delete("t1", [f"{7:032x}"])
    index.delete_tenant("t0")
    assert (index.count(), index.count("t1")) == (29, 29)
    assert f"{7:032x}" not in {h.id for h in index.search("t1", vector(7), 10, [])}
    index.close()


def test_a_shard_written_under_the_former_configuration_opens_and_is_optimized(
    tmp_path: Path,
) -> None:
    """The sidecar's data directory outlives upgrades: a shard created with the former
    configuration (no quantisation, default graph, never optimised) loads under the new one,
    keeps its points and its guard, and is converted when opened."""
    import qdrant_edge as qe

    former = qe.EdgeShard.create(
        str(tmp_path / "embedded"),
        qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=DIMENSIONS, distance=qe.Distance.Cosine)},
            sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=None)},
        ),
    )
    former.update(
        qe.UpdateOperation.create_field_index("tenant_id", qe.KeywordIndexParams(is_tenant=True))
    )
    former.update(qe.UpdateOperation.create_field_index("version", qe.PayloadSchemaType.Integer))
    for field in ("scope_type", "scope_id"):
        former.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    points = [point(n, f"t{n % 2}", version=3) for n in range(2000)]
    former.update(
        qe.UpdateOperation.upsert_points(
            [
                qe.Point(point_id(p.tenant_id, p.id), {"dense": p.vector}, p.payload())
                for p in points
            ]
        )
    )
    former.close()
    reopened = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=100)
    assert reopened.count() == 2000
    assert reopened._shard.info().segments_count >= 2
    assert reopened.search("t1", vector(7), 1, [])[0].id == f"{7:032x}"
    assert reopened.upsert([point(7, "t1", version=2)]) == (0, 1)
    reopened.close()


def test_the_sidecars_default_index_never_optimizes_while_it_serves(tmp_path: Path) -> None:
    """The engine's `optimize` freezes every thread of the process that calls it (searches
    and health checks too) for about a second per 10,000 points, so the engine process that
    serves never calls it: not after many writes, not when a stored shard is opened (a second
    process optimises a copy, test_embedded_process). Indexing stays correct on plain segments."""
    index = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    shard = CountingShard(index._shard)
    optimized: list[int] = []
    shard.optimize = lambda: optimized.append(1)  # type: ignore[attr-defined]
    index._shard = shard  # type: ignore[assignment]
    written = OPTIMIZE_POINTS + 1000  # past the step at which an optimising index would run it
    for start in range(0, written, 1000):
        index.upsert([point(n, f"t{n % 2}") for n in range(start, start + 1000)])
    segments = shard._shard.info().segments_count
    index.close()
    assert optimized == []
    reopened = EmbeddedIndex(tmp_path / "embedded", DIMENSIONS)
    assert reopened._shard.info().segments_count == segments  # nothing was indexed at open
    assert reopened.count() == written
    assert reopened.search("t1", vector(7), 1, [])[0].id == f"{7:032x}"
    reopened.close()
