"""A deleted point must stay deleted in the index: an upsert of the memory's text that was sent
before the deletion but reaches the engine after it (a write the client gave up on at its
timeout, applied late by a sidecar that was suspended; two requests handled out of order) must
not put the deleted text back into the index."""

from __future__ import annotations

from retrieval_service.index import IndexPoint, VectorIndex
from tests.integration.test_indexes import index, vector

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
