"""Hybrid search on the real engines with the real model: an exact order number, which the
sentence embedding cannot tell from its neighbours, is found by BM25 and by the fused ranking."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from crmmem_runtime.settings import load
from retrieval_service import fusion
from retrieval_service.config import RetrievalSettings
from retrieval_service.embedding import Embedder, open_embedder
from retrieval_service.index import IndexPoint, ScopeSelector, VectorIndex
from retrieval_service.index.embedded import EmbeddedIndex
from retrieval_service.index.qdrant_server import QdrantClientIndex
from retrieval_service.lexical import Bm25Encoder

PRODUCTS = ["pallet wrap", "nitrile gloves", "label printers", "barcode scanners", "safety boots"]
# Forty orders that differ only by code, quantity and product: what a CRM holds by the hundred.
ORDERS = [
    (f"ORD-{48200 + 7 * n}", f"{20 + 10 * n} units of {PRODUCTS[n % len(PRODUCTS)]}")
    for n in range(40)
]
WANTED = 17
QUESTION = f"who placed {ORDERS[WANTED][0]}?"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The sidecar's default embedder."""
    return open_embedder(load(RetrievalSettings))


@pytest.fixture(params=["embedded", "qdrant-client"])
def index(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder
) -> Iterator[VectorIndex]:
    if request.param == "embedded":
        opened: VectorIndex = EmbeddedIndex(tmp_path / "embedded", embedder.dimensions)
    else:
        opened = QdrantClientIndex(
            QdrantClient(location=":memory:"), "c", embedder.dimensions, "local"
        )
    texts = [f"last order (account-{n}): {code}, {what}" for n, (code, what) in enumerate(ORDERS)]
    encoder = Bm25Encoder()
    opened.upsert(
        [
            IndexPoint(f"{n:032x}", "t1", 1, 1, "USER", "u1", vector, encoder.document(text))
            for n, (text, vector) in enumerate(zip(texts, embedder.embed(texts), strict=True))
        ]
    )
    # The same text in another tenant: BM25 statistics are shared, results never are.
    opened.upsert(
        [
            IndexPoint(
                f"{99:032x}",
                "t2",
                1,
                1,
                "USER",
                "u9",
                embedder.embed([texts[WANTED]])[0],
                encoder.document(texts[WANTED]),
            )
        ]
    )
    yield opened
    opened.close()


def test_an_exact_order_number_is_found_by_bm25_where_the_embedding_misses_it(
    index: VectorIndex, embedder: Embedder
) -> None:
    wanted = f"{WANTED:032x}"
    vector = embedder.embed([QUESTION])[0]
    terms = Bm25Encoder().query(QUESTION)
    scopes = [ScopeSelector("USER", "u1")]

    dense = index.search("t1", vector, 5, scopes)
    assert wanted not in [h.id for h in dense[:1]]  # the embedding ranks another order first

    sparse = index.search_sparse("t1", terms, 5, scopes)
    assert sparse[0].id == wanted
    assert f"{99:032x}" not in {h.id for h in sparse}

    both_dense, both_sparse = index.search_both("t1", vector, terms, 5, scopes)
    assert [h.id for h in both_dense] == [h.id for h in dense]
    assert [h.id for h in both_sparse] == [h.id for h in sparse]
    assert fusion.weighted(both_dense, both_sparse, 5, 0.3)[0].id == wanted
    # Reciprocal rank fusion (k=60) is too flat for this: first in one list only scores below
    # second in both, which is why the weighted sum is the default (docs/benchmarks.md).
    assert wanted in [h.id for h in fusion.rrf([both_dense, both_sparse], 5)]


def test_a_query_without_terms_searches_dense_only(index: VectorIndex, embedder: Embedder) -> None:
    terms = Bm25Encoder().query("who is it?")
    assert not terms
    assert index.search_sparse("t1", terms, 5, []) == []
    dense, sparse = index.search_both("t1", embedder.embed(["who is it?"])[0], terms, 5, [])
    assert len(dense) == 5
    assert sparse == []
