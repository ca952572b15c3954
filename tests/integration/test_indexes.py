"""The vector index adapters on real engines: Qdrant's engine embedded (qdrant-edge), and
qdrant-client (here in its local mode, which speaks the same client API as a Qdrant server)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from retrieval_service.index import IndexPoint, ScopeSelector, VectorIndex
from retrieval_service.index.edge import EdgeIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex

DIMENSIONS = 8


def vector(seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(DIMENSIONS)]


def point(
    n: int, tenant: str = "t1", version: int = 1, scope: str = "USER", who: str = "u1"
) -> IndexPoint:
    return IndexPoint(f"{n:032x}", tenant, version, version, scope, who, vector(n))


@pytest.fixture(params=["edge", "qdrant-client"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    if request.param == "edge":
        opened: VectorIndex = EdgeIndex(tmp_path / "edge", DIMENSIONS)
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
    first = EdgeIndex(tmp_path / "edge", DIMENSIONS)
    first.upsert([point(n) for n in range(20)])
    first.close()
    reopened = EdgeIndex(tmp_path / "edge", DIMENSIONS)
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


def test_edge_index_checkpoints_its_write_ahead_log_while_updates_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded engine never truncates its log by itself: without these flushes its mapped
    files grow with every overwrite at a constant number of points (the soak in the README)."""
    index = EdgeIndex(tmp_path / "edge", DIMENSIONS)
    shard = CountingShard(index._shard)
    index._shard = shard  # type: ignore[assignment]
    for version in range(1, 50):
        index.upsert([point(n, version=version) for n in range(5)])
    assert shard.flushes == 0, "flushes at most every FLUSH_SECONDS, not per update"
    monkeypatch.setattr("retrieval_service.index.edge.FLUSH_SECONDS", 0.0)
    index.upsert([point(1, version=50)])
    index.delete("t1", [f"{2:032x}"])
    index.delete_tenant("t2")
    assert shard.flushes == 3
    assert index.count() == 4
    index.close()
