"""qdrant-client against a Qdrant server or cluster (QDRANT_URL). Also opens qdrant-client's
local mode (`location=":memory:"` or a path), which the tests and the engine benchmark use.

A server older than `MIN_SERVER_VERSION` is refused before anything is written: over gRPC it
would drop the conditional upsert's filter as an unknown field and overwrite newer points with
older ones, silently. docs/qdrant.md lists each server feature used here and its version.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import grpc
from qdrant_client import QdrantClient, models

from crmmem_runtime.redaction import hide_password
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

log = logging.getLogger(__name__)

# The oldest server with every feature the adapter uses: conditional upserts (`update_filter`)
# came last, in Qdrant 1.16.0.
MIN_SERVER_VERSION = (1, 16, 0)
GRPC_PORT = 6334  # Qdrant's gRPC port when QDRANT_URL names none


class QdrantUnusable(Exception):
    """The Qdrant server is too old, did not say its version or refused the first call that
    needs the API key: the sidecar must not start."""


def refusal(error: grpc.RpcError, url: str) -> QdrantUnusable:
    """One line for a call Qdrant refused at start-up: a wrong or missing key named as such."""
    where = hide_password(url)
    code = error.code() if isinstance(error, grpc.Call) else None
    details = (error.details() if isinstance(error, grpc.Call) else str(error)) or ""
    said = f"{code.name if code else 'error'}: {details}".strip().rstrip(":")
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return QdrantUnusable(
            f"Qdrant at {where} refused the sidecar's API key ({said}); QDRANT_API_KEY must be "
            "the server's QDRANT__SERVICE__API_KEY"
        )
    return QdrantUnusable(f"Qdrant at {where} failed the sidecar's first calls ({said})")


def parse_version(reported: str) -> tuple[int, int, int] | None:
    """`1.16.0`, `v1.16.2` or `1.17.0-rc1` as (major, minor, patch); None when unreadable."""
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", reported.strip())
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def dotted(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


def require_server_version(client: QdrantClient, url: str) -> str:
    """The version the server at `url` reports; QdrantUnusable, with one line naming it and
    what is needed, when it is older than MIN_SERVER_VERSION, unreadable or not answering."""
    where = hide_password(url)
    try:
        reported = client.info().version
    except grpc.RpcError as error:
        reason = error.details() if isinstance(error, grpc.Call) else str(error)
        raise QdrantUnusable(
            f"Qdrant at {where} did not say its version ({reason}); QDRANT_URL names its gRPC "
            f"port, {GRPC_PORT} unless changed"
        ) from None
    version = parse_version(reported)
    if version is None or version < MIN_SERVER_VERSION:
        raise QdrantUnusable(
            f"Qdrant at {where} is version {reported or 'unknown'}; the sidecar needs "
            f"{dotted(MIN_SERVER_VERSION)} or later (conditional upserts, docs/qdrant.md)"
        )
    return reported


class QdrantClientIndex:
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dimensions: int,
        backend: str,
        shards: int = 1,
        replication_factor: int = 1,
        sparse_idf: bool = False,
    ) -> None:
        self.backend = backend
        self._client = client
        self._collection = collection
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={
                    DENSE: models.VectorParams(size=dimensions, distance=models.Distance.COSINE)
                },
                sparse_vectors_config={
                    SPARSE: models.SparseVectorParams(
                        modifier=models.Modifier.IDF if sparse_idf else None
                    )
                },
                shard_number=shards,
                replication_factor=replication_factor,
            )
            client.create_payload_index(
                collection,
                "tenant_id",
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True),
            )
            for field in ("scope_type", "scope_id"):
                client.create_payload_index(collection, field, models.PayloadSchemaType.KEYWORD)
            client.create_payload_index(collection, "version", models.PayloadSchemaType.INTEGER)
        if DELETED not in (client.get_collection(collection).payload_schema or {}):
            # Counts skip deletion markers through it (a collection from before markers too).
            client.create_payload_index(collection, DELETED, models.PayloadSchemaType.BOOL)

    @classmethod
    def connect(
        cls,
        url: str,
        collection: str,
        dimensions: int,
        api_key: str = "",
        shards: int = 1,
        replication_factor: int = 1,
        https: bool = False,
        sparse_idf: bool = False,
    ) -> QdrantClientIndex:
        """Shards and replication apply when the collection is created (cluster mode). The API
        key authenticates every call; `https` (or an https URL) encrypts them. The server's
        version is checked first (`require_server_version`)."""
        encrypted = https or url.startswith("https://")
        if api_key and not encrypted:
            log.warning(
                "QDRANT_API_KEY goes to Qdrant unencrypted (QDRANT_HTTPS=0): keep Qdrant's port "
                "inside a network only the sidecars reach, or give it TLS"
            )
        with warnings.catch_warnings():  # the client's own warning of it: two raw stderr lines
            warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
            client = QdrantClient(
                url=url,
                # The URL's port is the gRPC port; the client would otherwise use 6334 whatever
                # it says.
                grpc_port=urlsplit(url).port or GRPC_PORT,
                api_key=api_key or None,
                https=encrypted,
                prefer_grpc=True,
                timeout=10,
                # Its own check asks the REST root on the gRPC port and only warns; ours refuses.
                check_compatibility=False,
            )
        # Qdrant answers HealthCheck without the API key: a wrong or missing key shows only at
        # the next call, the collection's set-up, which is checked here with the version.
        try:
            require_server_version(client, url)
            return cls(
                client,
                collection,
                dimensions,
                "qdrant-server",
                shards,
                replication_factor,
                sparse_idf,
            )
        except QdrantUnusable:
            client.close()
            raise
        except grpc.RpcError as error:
            client.close()
            raise refusal(error, url) from None

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        stored = {
            str(record.id): (
                int((record.payload or {}).get("version", 0)),
                int((record.payload or {}).get("revision_number", 0)),
            )
            for record in self._client.retrieve(
                self._collection,
                [point_id(p.tenant_id, p.id) for p in points],
                with_payload=["version", "revision_number"],
                with_vectors=False,
            )
        }
        # Newer in (version, revision): a correction that takes effect later is re-indexed
        # then at an unchanged version, with the newer revision.
        fresh = [
            p
            for p in points
            if stored.get(point_id(p.tenant_id, p.id), (-1, -1)) < (p.version, p.revision_number)
        ]
        if fresh:
            # One conditional upsert per point: a concurrent writer with a newer version wins,
            # and a point of another tenant is never written over.
            self._client.batch_update_points(
                self._collection,
                [
                    models.UpsertOperation(
                        upsert=models.PointsList(
                            points=[
                                models.PointStruct(
                                    id=point_id(p.tenant_id, p.id),
                                    vector={
                                        DENSE: p.vector,
                                        SPARSE: models.SparseVector(
                                            indices=list(p.sparse.indices),
                                            values=list(p.sparse.values),
                                        ),
                                    },
                                    payload=p.payload(),
                                )
                            ],
                            update_filter=models.Filter(
                                must=[
                                    _match("tenant_id", p.tenant_id),
                                    models.Filter(
                                        should=[
                                            _range("version", lt=p.version),
                                            models.Filter(
                                                must=[
                                                    _range("version", gte=p.version, lte=p.version),
                                                    _range("revision_number", lt=p.revision_number),
                                                ]
                                            ),
                                        ]
                                    ),
                                ]
                            ),
                        )
                    )
                    for p in fresh
                ],
            )
        return len(fresh), len(points) - len(fresh)

    def delete(self, tenant_id: str, ids: Sequence[str], versions: Sequence[int] = ()) -> None:
        """Each point is overwritten by its deletion marker (`markers`); a point of another
        tenant is never written over."""
        if not ids:
            return
        stored = {
            str(record.id): record.payload or {}
            for record in self._client.retrieve(
                self._collection,
                [point_id(tenant_id, i) for i in ids],
                with_payload=["tenant_id", "version", "revision_number", DELETED],
                with_vectors=False,
            )
        }
        written = [
            models.PointStruct(id=key, vector={}, payload=payload)
            for key, payload in markers(tenant_id, ids, versions, stored).items()
        ]
        if written:
            self._client.batch_update_points(
                self._collection,
                [
                    models.UpsertOperation(
                        upsert=models.PointsList(
                            points=written,
                            # Updates match it, absent points are inserted.
                            update_filter=models.Filter(must=[_match("tenant_id", tenant_id)]),
                        )
                    )
                ],
            )

    def delete_tenant(self, tenant_id: str) -> None:
        self._client.delete(self._collection, models.Filter(must=[_match("tenant_id", tenant_id)]))

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return self._query([_request(vector, DENSE, tenant_id, limit, scopes)])[0]

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        if not terms:
            return []
        return self._query([_request(_sparse(terms), SPARSE, tenant_id, limit, scopes)])[0]

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
        dense, sparse = self._query(
            [
                _request(vector, DENSE, tenant_id, limit, scopes),
                _request(_sparse(terms), SPARSE, tenant_id, limit, scopes),
            ]
        )
        return dense, sparse

    def _query(self, requests: list[models.QueryRequest]) -> list[list[Hit]]:
        """One round trip for one or both lists."""
        return [
            [hit(float(point.score), point.payload) for point in response.points]
            for response in self._client.query_batch_points(self._collection, requests)
        ]

    def count(self, tenant_id: str = "") -> int:
        live = models.IsEmptyCondition(is_empty=models.PayloadField(key=DELETED))
        only = models.Filter(must=[_match("tenant_id", tenant_id), live] if tenant_id else [live])
        return int(self._client.count(self._collection, count_filter=only, exact=True).count)

    def close(self) -> None:
        self._client.close()


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _sparse(terms: SparseTerms) -> models.SparseVector:
    return models.SparseVector(indices=list(terms.indices), values=list(terms.values))


def _request(
    query: list[float] | models.SparseVector,
    using: str,
    tenant_id: str,
    limit: int,
    scopes: Sequence[ScopeSelector],
) -> models.QueryRequest:
    must: list[Any] = [_match("tenant_id", tenant_id)]
    if scopes:
        must.append(models.Filter(should=[_scope_filter(s) for s in scopes]))
    return models.QueryRequest(
        query=query,
        using=using,
        filter=models.Filter(must=must),
        limit=limit,
        with_payload=HIT_FIELDS,
    )


def _scope_filter(scope: ScopeSelector) -> models.Filter:
    must: list[Any] = [_match("scope_type", scope.scope_type)]
    if scope.scope_id:
        must.append(_match("scope_id", scope.scope_id))
    return models.Filter(must=must)


def _range(key: str, **bounds: int) -> models.FieldCondition:
    return models.FieldCondition(key=key, range=models.Range(**bounds))
