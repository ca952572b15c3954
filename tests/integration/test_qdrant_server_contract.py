"""The server adapter (`QdrantClientIndex`) against a real Qdrant server, the one the sidecar
runs against when QDRANT_URL is set. The rest of the suite checks this adapter on
qdrant-client's local mode, an in-process re-implementation that cannot show what a server
does with what the adapter sends. This module checks each server feature the adapter depends on
(docs/qdrant.md lists them), and the conditional upsert most of all: a server that dropped its
filter would let an older version overwrite a newer one without any error.

Runs only when QDRANT_URL is set (QDRANT_API_KEY and QDRANT_HTTPS are read too); docs/qdrant.md
says how to start a server for it. Each test uses a collection of its own and deletes it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from qdrant_client import QdrantClient, models

from retrieval_service.index import DELETED, DENSE, SPARSE, IndexPoint, ScopeSelector, point_id
from retrieval_service.index.qdrant_server import (
    MIN_SERVER_VERSION,
    QdrantClientIndex,
    parse_version,
    require_server_version,
)
from retrieval_service.lexical import Bm25Encoder
from tests.integration.test_indexes import DIMENSIONS, point, vector

QDRANT_URL = os.environ.get("QDRANT_URL", "")

pytestmark = pytest.mark.skipif(
    not QDRANT_URL,
    reason=(
        "QDRANT_URL is not set: this contract test needs a real Qdrant server, e.g. "
        "`docker run -p 6334:6334 qdrant/qdrant:v1.18.2` and QDRANT_URL=http://127.0.0.1:6334 "
        "(docs/qdrant.md); the rest of the suite runs the adapter on qdrant-client's local mode"
    ),
)


def connect(collection: str, sparse_idf: bool = False) -> QdrantClientIndex:
    """What the sidecar does at start-up (`retrieval_service.server.open_index`)."""
    return QdrantClientIndex.connect(
        QDRANT_URL,
        collection,
        DIMENSIONS,
        api_key=os.environ.get("QDRANT_API_KEY", ""),
        https=os.environ.get("QDRANT_HTTPS", "").strip().lower() in ("1", "true", "yes", "on"),
        sparse_idf=sparse_idf,
    )


@pytest.fixture(params=[False, True], ids=["plain", "idf"])
def index(request: pytest.FixtureRequest) -> Iterator[QdrantClientIndex]:
    """A fresh collection, in both layouts the sidecar creates (with and without BM25's IDF)."""
    collection = f"crmmem-contract-{uuid.uuid4().hex[:12]}"
    opened = connect(collection, sparse_idf=request.param)
    try:
        yield opened
    finally:
        opened._client.delete_collection(collection)
        opened.close()


def stored(index: QdrantClientIndex, tenant: str, memory: int) -> dict[str, Any] | None:
    """The payload the server holds for a tenant's memory, deletion markers included."""
    found = index._client.retrieve(
        index._collection, [point_id(tenant, f"{memory:032x}")], with_payload=True
    )
    return dict(found[0].payload or {}) if found else None


def versions(index: QdrantClientIndex, tenant: str, memories: range) -> dict[int, int]:
    held = {n: stored(index, tenant, n) for n in memories}
    return {n: int(payload["version"]) for n, payload in held.items() if payload is not None}


def test_the_server_is_at_least_the_minimum(index: QdrantClientIndex) -> None:
    reported = require_server_version(index._client, QDRANT_URL)
    version = parse_version(reported)
    assert version is not None
    assert version >= MIN_SERVER_VERSION


def test_a_new_collection_has_both_vectors_and_every_payload_index(
    index: QdrantClientIndex,
) -> None:
    info = index._client.get_collection(index._collection)
    dense = info.config.params.vectors
    assert isinstance(dense, dict)
    assert dense[DENSE].size == DIMENSIONS
    assert dense[DENSE].distance == models.Distance.COSINE
    sparse = info.config.params.sparse_vectors or {}
    assert SPARSE in sparse
    schema = info.payload_schema
    assert schema["tenant_id"].data_type == models.PayloadSchemaType.KEYWORD
    assert getattr(schema["tenant_id"].params, "is_tenant", None) is True
    assert schema["scope_type"].data_type == models.PayloadSchemaType.KEYWORD
    assert schema["scope_id"].data_type == models.PayloadSchemaType.KEYWORD
    assert schema["version"].data_type == models.PayloadSchemaType.INTEGER
    assert schema[DELETED].data_type == models.PayloadSchemaType.BOOL


def test_the_idf_layout_asks_the_server_for_idf() -> None:
    collection = f"crmmem-contract-{uuid.uuid4().hex[:12]}"
    opened = connect(collection, sparse_idf=True)
    try:
        sparse = opened._client.get_collection(collection).config.params.sparse_vectors or {}
        assert sparse[SPARSE].modifier == models.Modifier.IDF
        reopened = connect(collection, sparse_idf=True)  # an existing collection is kept
        reopened.close()
    finally:
        opened._client.delete_collection(collection)
        opened.close()


def test_a_lower_version_never_overwrites_a_higher_one(index: QdrantClientIndex) -> None:
    assert index.upsert([point(1, version=5)]) == (1, 0)
    assert index.upsert([point(1, version=4), point(2, version=1)]) == (1, 1)
    assert index.upsert([point(1, version=5)]) == (0, 1)
    assert index.upsert([point(1, version=6)]) == (1, 0)
    assert versions(index, "t1", range(1, 3)) == {1: 6, 2: 1}


class StaleReads:
    """The real client whose `retrieve` reports nothing stored, or every point at version 0:
    what the adapter would see had another writer written between its read and its upsert."""

    def __init__(self, client: QdrantClient, version: int | None) -> None:
        self._client = client
        self._version = version

    def retrieve(self, collection: str, ids: list[Any], **options: Any) -> list[models.Record]:
        if self._version is None:
            return []
        return [
            models.Record(
                id=record.id,
                payload={**(record.payload or {}), "version": self._version, "revision_number": 0},
            )
            for record in self._client.retrieve(collection, ids, with_payload=True)
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.mark.parametrize("stale_version", [None, 0], ids=["read-nothing", "read-older"])
def test_the_server_keeps_the_newer_version_when_the_read_came_too_late(
    index: QdrantClientIndex, stale_version: int | None
) -> None:
    """The version read only sorts a batch; the server must check the upsert's own filter.
    A server that ignored `update_filter` (any before 1.16) writes 4 over 5 and over 8 here."""
    index.upsert([point(1, "t1", 5), point(2, "t1", 1), point(3, "t2", 8)])
    real = index._client
    index._client = StaleReads(real, stale_version)  # type: ignore[assignment]
    try:
        index.upsert([point(1, "t1", 4), point(2, "t1", 4), point(3, "t2", 4), point(4, "t2", 4)])
    finally:
        index._client = real
    assert versions(index, "t1", range(1, 5)) == {1: 5, 2: 4}
    assert versions(index, "t2", range(1, 5)) == {3: 8, 4: 4}


def test_a_point_held_by_another_tenant_is_never_written_over(index: QdrantClientIndex) -> None:
    """Point ids are per tenant, so only a forged id collides; the upsert's and the deletion
    marker's filter on tenant_id keep the point whose tenant it is anyway."""
    foreign = point(1, "t2", version=3)
    index._client.upsert(
        index._collection,
        [
            models.PointStruct(
                id=point_id("t1", foreign.id),
                vector={DENSE: foreign.vector},
                payload=foreign.payload(),
            )
        ],
    )
    index.upsert([point(1, "t1", version=9)])  # its read sees t2's point; its filter refuses
    real = index._client
    index._client = StaleReads(real, None)  # the delete's read misses it; its filter refuses
    try:
        index.delete("t1", [f"{1:032x}"], [10])
    finally:
        index._client = real
    held = index._client.retrieve(index._collection, [point_id("t1", foreign.id)])
    assert held[0].payload is not None
    assert (held[0].payload["tenant_id"], held[0].payload["version"]) == ("t2", 3)
    assert DELETED not in held[0].payload


def test_a_deleted_memory_stays_deleted_until_a_later_version(index: QdrantClientIndex) -> None:
    """The deletion marker: a point with no vectors at the memory's order, never counted nor
    found; a late upsert at or below it is refused, a later version replaces it."""
    written = point(7, "t1", version=3)
    index.upsert([written, point(8, "t1", version=1)])
    index.delete("t1", [written.id], [4])
    marker = stored(index, "t1", 7)
    assert marker is not None
    assert marker[DELETED] is True
    assert (index.count("t1"), index.count()) == (1, 1)
    assert index.upsert([written]) == (0, 1)  # the same write, late
    assert [h.id for h in index.search("t1", vector(7), 10, [])] == [f"{8:032x}"]
    assert index.upsert([point(7, "t1", version=5)]) == (1, 0)
    assert index.count("t1") == 2


def test_dense_sparse_and_batched_searches_honour_tenant_and_scope(
    index: QdrantClientIndex,
) -> None:
    encoder = Bm25Encoder()
    texts = {
        1: ("t1", "USER", "u1", "prefers morning meetings on Mondays"),
        2: ("t1", "CUSTOMER", "c9", "invoice ORD-48319 is overdue"),
        3: ("t1", "USER", "u1", "likes green tea"),
        4: ("t2", "USER", "u1", "invoice ORD-48319 is overdue"),
    }
    index.upsert(
        [
            IndexPoint(f"{n:032x}", tenant, 1, 1, scope, who, vector(n), encoder.document(text))
            for n, (tenant, scope, who, text) in texts.items()
        ]
    )
    terms = encoder.query("who owes ORD-48319?")
    sparse = index.search_sparse("t1", terms, 10, [])
    assert [h.id for h in sparse] == [f"{2:032x}"]  # never t2's point with the same text
    assert index.search_sparse("t1", terms, 10, [ScopeSelector("USER", "u1")]) == []
    dense = index.search("t1", vector(3), 1, [ScopeSelector("USER", "u1")])
    assert [h.id for h in dense] == [f"{3:032x}"]
    both_dense, both_sparse = index.search_both("t1", vector(1), terms, 10, [])
    assert both_dense[0].id == f"{1:032x}"
    assert {h.id for h in both_dense} == {f"{n:032x}" for n in (1, 2, 3)}
    assert [h.id for h in both_sparse] == [f"{2:032x}"]
    assert (both_dense[0].version, both_dense[0].revision_number) == (1, 1)


def test_counts_per_tenant_and_erasing_a_tenant(index: QdrantClientIndex) -> None:
    index.upsert([point(n, "t1" if n < 5 else "t2") for n in range(8)])
    index.delete("t2", [f"{6:032x}"])
    assert (index.count(), index.count("t1"), index.count("t2"), index.count("t3")) == (7, 5, 2, 0)
    index.delete_tenant("t2")
    assert (index.count(), index.count("t2")) == (5, 0)
    assert stored(index, "t2", 6) is None  # its marker went with it
