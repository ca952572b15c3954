"""The index's wire format to its engine worker: plain tuples and float32 bytes, decoded back into
the objects the engine adapter takes."""

from __future__ import annotations

import pickle
from array import array

from retrieval_service.index import Hit, IndexPoint, ScopeSelector
from retrieval_service.index.embedded_process import (
    _decoded,
    _encoded,
    _hits,
    _request,
    _wire_point,
)
from retrieval_service.lexical import Bm25Encoder


def _sent(request: bytes) -> tuple[str, tuple[object, ...]]:
    op, args = pickle.loads(request)
    return op, _decoded(op, args)


def float32(values: list[float]) -> list[float]:
    return array("f", values).tolist()


def test_an_upsert_arrives_as_the_points_sent_with_the_vectors_the_engine_stores() -> None:
    vector = [0.1, -0.25, 1 / 3, 0.0]
    point = IndexPoint(
        "a" * 32, "tenant-1", 3, 2, "customer", "c-9", vector, Bm25Encoder().document("net-30 A")
    )
    op, args = _sent(_request("upsert", [_wire_point(point)]))
    assert op == "upsert"
    (points,) = args
    assert points == [
        IndexPoint("a" * 32, "tenant-1", 3, 2, "customer", "c-9", float32(vector), point.sparse)
    ]
    assert float32(vector) != vector  # what changes is the rounding the engine applies anyway


def test_searches_arrive_with_their_scopes_and_terms() -> None:
    terms = Bm25Encoder().query("ORD-48213 net-30")
    scopes = [ScopeSelector("customer", "c-1"), ScopeSelector("user")]
    wired = [("customer", "c-1"), ("user", "")]
    assert _sent(_request("search", "t", array("f", [0.5, 0.25]).tobytes(), 7, wired)) == (
        "search",
        ("t", [0.5, 0.25], 7, scopes),
    )
    assert _sent(_request("search_sparse", "t", (terms.indices, terms.values), 7, wired)) == (
        "search_sparse",
        ("t", terms, 7, scopes),
    )
    op, (tenant, vector, sparse, limit, selected) = _sent(
        _request(
            "search_both", "t", array("f", [1.0]).tobytes(), (terms.indices, terms.values), 3, []
        )
    )
    assert (op, tenant, vector, sparse, limit, selected) == (
        "search_both",
        "t",
        [1.0],
        terms,
        3,
        [],
    )


def test_hits_come_back_as_tuples_and_are_hits_again() -> None:
    found = [Hit("b" * 32, 0.75, 4, 1), Hit("c" * 32, 0.5, 1, 0)]
    for op, result in (("search", found), ("search_sparse", found)):
        wired = pickle.loads(pickle.dumps(_encoded(op, result)))
        assert all(type(one) is tuple for one in wired)
        assert _hits(wired) == found
        assert all(type(one) is Hit for one in _hits(wired))
    dense, sparse = pickle.loads(pickle.dumps(_encoded("search_both", (found, found[:1]))))
    assert (_hits(dense), _hits(sparse)) == (found, found[:1])
    assert _encoded("count", 12) == 12  # other answers go as they are
