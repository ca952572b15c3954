"""qdrant-client against a Qdrant server or cluster (QDRANT_URL). Also opens qdrant-client's
local mode (`location=":memory:"` or a path), which the engine benchmark measures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from retrieval_service.index import Hit, IndexPoint, ScopeSelector, memory_id, point_id


class QdrantClientIndex:
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dimensions: int,
        backend: str,
        shards: int = 1,
        replication_factor: int = 1,
    ) -> None:
        self.backend = backend
        self._client = client
        self._collection = collection
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config=models.VectorParams(
                    size=dimensions, distance=models.Distance.COSINE
                ),
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

    @classmethod
    def connect(
        cls,
        url: str,
        collection: str,
        dimensions: int,
        api_key: str = "",
        shards: int = 1,
        replication_factor: int = 1,
    ) -> QdrantClientIndex:
        """Shards and replication apply when the collection is created (cluster mode)."""
        client = QdrantClient(url=url, api_key=api_key or None, prefer_grpc=True, timeout=10)
        return cls(client, collection, dimensions, "qdrant-server", shards, replication_factor)

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        stored = {
            memory_id(record.id): int((record.payload or {}).get("version", 0))
            for record in self._client.retrieve(
                self._collection,
                [point_id(p.id) for p in points],
                with_payload=["version"],
                with_vectors=False,
            )
        }
        fresh = [p for p in points if stored.get(p.id, -1) < p.version]
        if fresh:
            # One conditional upsert per point: a concurrent writer with a newer version wins.
            self._client.batch_update_points(
                self._collection,
                [
                    models.UpsertOperation(
                        upsert=models.PointsList(
                            points=[
                                models.PointStruct(
                                    id=point_id(p.id), vector=p.vector, payload=p.payload()
                                )
                            ],
                            update_filter=models.Filter(
                                must=[
                                    models.FieldCondition(
                                        key="version", range=models.Range(lt=p.version)
                                    )
                                ]
                            ),
                        )
                    )
                    for p in fresh
                ],
            )
        return len(fresh), len(points) - len(fresh)

    def delete(self, tenant_id: str, ids: Sequence[str]) -> None:
        if ids:
            self._client.delete(
                self._collection,
                models.Filter(
                    must=[
                        _match("tenant_id", tenant_id),
                        models.HasIdCondition(has_id=[point_id(i) for i in ids]),
                    ]
                ),
            )

    def delete_tenant(self, tenant_id: str) -> None:
        self._client.delete(self._collection, models.Filter(must=[_match("tenant_id", tenant_id)]))

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        must: list[Any] = [_match("tenant_id", tenant_id)]
        if scopes:
            must.append(models.Filter(should=[_scope_filter(s) for s in scopes]))
        response = self._client.query_points(
            self._collection,
            query=vector,
            query_filter=models.Filter(must=must),
            limit=limit,
            with_payload=["version", "revision_number"],
        )
        return [
            Hit(
                memory_id(point.id),
                float(point.score),
                int((point.payload or {}).get("version", 0)),
                int((point.payload or {}).get("revision_number", 0)),
            )
            for point in response.points
        ]

    def count(self) -> int:
        return int(self._client.count(self._collection, exact=True).count)

    def close(self) -> None:
        self._client.close()


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _scope_filter(scope: ScopeSelector) -> models.Filter:
    must: list[Any] = [_match("scope_type", scope.scope_type)]
    if scope.scope_id:
        must.append(_match("scope_id", scope.scope_id))
    return models.Filter(must=must)
