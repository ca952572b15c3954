"""A deleted point must stay deleted in the index: an upsert of the memory's text that was sent
before the deletion but reaches the engine after it (a write the client gave up on at its
timeout, applied late by a sidecar that was suspended; two requests handled out of order) must
not put the deleted text back into the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_service.index import IndexPoint, VectorIndex
from retrieval_service.index.embedded import EmbeddedIndex
from retrieval_service.index.embedded_process import EmbeddedProcessIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex
from tests.integration.test_indexes import DIMENSIONS, index, point, vector

__all__ = ["index"]


def test_an_upsert_replayed_after_the_delete_does_not_bring_the_text_back(
    index: VectorIndex,
) -> None:
    memory = f"{7:032x}"
    written = IndexPoint(memory, "t1", 3, 2, "USER", "u1", vector(7))
    assert index.upsert([written]) == (1, 0)
    index.delete("t1", [memory])
    assert index.count("t1") == 0
    index.upsert([written])  # the same write, late
    assert index.count("t1") == 0
    assert not index.search("t1", vector(7), 5, [])


def test_a_later_version_or_revision_of_a_deleted_memory_is_indexed(index: VectorIndex) -> None:
    """The marker holds the deleted point's order only: a restore that extends the memory
    (a newer version), or a revision taking effect after the memory had none that applied (the
    same version, a newer revision), is written over it and found."""
    memory = f"{7:032x}"
    index.upsert([IndexPoint(memory, "t1", 3, 2, "USER", "u1", vector(7))])
    index.delete("t1", [memory])
    assert index.upsert([IndexPoint(memory, "t1", 3, 1, "USER", "u1", vector(7))]) == (0, 1)
    assert index.upsert([IndexPoint(memory, "t1", 3, 3, "USER", "u1", vector(7))]) == (1, 0)
    assert [(h.id, h.version, h.revision_number) for h in index.search("t1", vector(7), 5, [])] == [
        (memory, 3, 3)
    ]
    index.delete("t1", [memory])
    assert index.upsert([IndexPoint(memory, "t1", 4, 1, "USER", "u1", vector(7))]) == (1, 0)
    assert index.count("t1") == index.count() == 1
    assert index.search("t1", vector(7), 5, [])[0].version == 4


def test_markers_are_not_counted_and_not_shared_across_tenants(index: VectorIndex) -> None:
    index.upsert([point(n) for n in range(1, 5)] + [point(1, "t2")])
    index.delete("t1", [f"{n:032x}" for n in (1, 2)])
    index.delete("t2", [f"{3:032x}"])  # t2 has no memory 3: nothing to mark
    assert (index.count("t1"), index.count("t2"), index.count()) == (2, 1, 3)
    assert index.upsert([point(3, "t2")]) == (1, 0)
    assert index.upsert([point(1), point(1, "t2", version=2)]) == (1, 1)


def test_erasing_a_tenant_removes_its_markers_too(index: VectorIndex) -> None:
    """Nothing of an erased tenant stays in the index, not even which ids it deleted."""
    index.upsert([point(n) for n in range(1, 4)] + [point(1, "t2")])
    index.delete("t1", [f"{n:032x}" for n in (1, 2)])
    index.delete_tenant("t1")
    assert stored_points(index) == 1  # t2's point: no marker left behind


def stored_points(index: VectorIndex) -> int:
    """Every point the engine holds, deletion markers included."""
    if isinstance(index, EmbeddedIndex):
        return int(index._shard.info().points_count)
    if isinstance(index, EmbeddedProcessIndex):
        return int(index._read("points"))
    assert isinstance(index, QdrantClientIndex)
    return int(index._client.count(index._collection, exact=True).count)


@pytest.mark.parametrize("adapter", [EmbeddedIndex, EmbeddedProcessIndex])
def test_the_marker_outlives_a_restart(adapter: type[EmbeddedIndex], tmp_path: Path) -> None:
    """Kept with the shard: a sidecar restarted between the delete and the late upsert
    still refuses it."""
    memory = f"{7:032x}"
    written = IndexPoint(memory, "t1", 3, 2, "USER", "u1", vector(7))
    index = adapter(tmp_path / "embedded", DIMENSIONS)
    index.upsert([written])
    index.delete("t1", [memory])
    index.close()
    reopened = adapter(tmp_path / "embedded", DIMENSIONS)
    try:
        assert reopened.upsert([written]) == (0, 1)
        assert reopened.count("t1") == 0
        assert not reopened.search("t1", vector(7), 5, [])
    finally:
        reopened.close()


def test_a_delete_made_while_the_copy_is_optimised_keeps_its_marker(tmp_path: Path) -> None:
    """The delete is journalled and replayed into the optimised copy, marker included."""
    index = EmbeddedProcessIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=0)
    try:
        index.upsert([point(n) for n in range(1000)])
        optimizing = index.optimize_in_background()
        index.delete("t1", [f"{7:032x}"])
        optimizing.join(120)
        assert index.last_optimization["replayed"] == 1
        assert index.upsert([point(7)]) == (0, 1)
        assert index.count("t1") == 999
        assert index.search("t1", vector(7), 1, [])[0].id != f"{7:032x}"
    finally:
        index.close()


def test_the_version_sent_with_a_delete_refuses_any_lower_upsert(index: VectorIndex) -> None:
    """A correction (version 2) sent before the delete (version 3) and applied after it, over
    a point indexed at version 1, or for an id the index never held: the marker holds the
    version the deletion wrote, so neither comes back; version 0 (a memory no longer stored)
    keeps the order of the point removed."""
    held, never = f"{7:032x}", f"{8:032x}"
    index.upsert([IndexPoint(held, "t1", 1, 1, "USER", "u1", vector(7))])
    index.delete("t1", [held, never], [3, 3])
    late = [IndexPoint(m, "t1", 2, 2, "USER", "u1", vector(n)) for n, m in ((7, held), (8, never))]
    assert index.upsert(late) == (0, 2)
    assert index.count("t1") == index.count() == 0
    assert not index.search("t1", vector(7), 5, [])
    assert not index.search("t1", vector(8), 5, [])
    index.delete("t1", [held], [0])  # a lower marker never lowers the one held
    assert index.upsert(late[:1]) == (0, 1)
    assert index.upsert([IndexPoint(held, "t1", 4, 1, "USER", "u1", vector(7))]) == (1, 0)
    assert index.count("t1") == 1


def test_a_memory_with_no_revision_applying_is_indexed_when_one_applies(
    index: VectorIndex,
) -> None:
    """Removed at its version while no revision applies, the memory is indexed again at that
    same version when a revision starts to apply (`revision_number` >= 1)."""
    memory = f"{7:032x}"
    index.delete("t1", [memory], [5])
    assert index.upsert([IndexPoint(memory, "t1", 5, 2, "USER", "u1", vector(7))]) == (1, 0)
    assert index.search("t1", vector(7), 5, [])[0].revision_number == 2
