"""Sidecar settings from the environment (listed in the README)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memory_service.config import shared_secret

TRUE_VALUES = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class RetrievalSettings:
    listen: str
    port_file: str
    data_dir: Path
    model_path: str
    qdrant_url: str
    qdrant_api_key: str
    qdrant_shards: int
    qdrant_replication_factor: int
    torch_threads: int
    query_batch_wait_ms: float
    document_chunk_ms: float
    shared_secret: str
    qdrant_https: bool
    shutdown_drain_seconds: float
    shutdown_grace_seconds: float

    @classmethod
    def from_env(cls) -> RetrievalSettings:
        """Raises ConfigError without a shared secret, unless RETRIEVAL_DEV_MODE is set."""
        data_dir = Path(os.environ.get("RETRIEVAL_DATA_DIR", "data/retrieval")).resolve()
        dev_mode = os.environ.get("RETRIEVAL_DEV_MODE", "").strip().lower() in TRUE_VALUES
        return cls(
            listen=os.environ.get("RETRIEVAL_LISTEN", "127.0.0.1:50052"),
            port_file=os.environ.get("PORT_FILE", ""),
            data_dir=data_dir,
            model_path=os.environ.get("RETRIEVAL_MODEL_PATH", ""),
            qdrant_url=os.environ.get("QDRANT_URL", ""),
            qdrant_api_key=os.environ.get("QDRANT_API_KEY", ""),
            qdrant_shards=int(os.environ.get("QDRANT_SHARDS", "1")),
            qdrant_replication_factor=int(os.environ.get("QDRANT_REPLICATION_FACTOR", "1")),
            torch_threads=int(os.environ.get("RETRIEVAL_TORCH_THREADS", "0")),
            query_batch_wait_ms=float(os.environ.get("RETRIEVAL_QUERY_BATCH_WAIT_MS", "0")),
            document_chunk_ms=float(os.environ.get("RETRIEVAL_DOCUMENT_CHUNK_MS", "25")),
            shared_secret=shared_secret(dev_mode, data_dir / "shared-secret"),
            qdrant_https=os.environ.get("QDRANT_HTTPS", "").strip().lower() in TRUE_VALUES,
            shutdown_drain_seconds=float(os.environ.get("RETRIEVAL_SHUTDOWN_DRAIN_SECONDS", "2")),
            shutdown_grace_seconds=float(os.environ.get("RETRIEVAL_SHUTDOWN_GRACE_SECONDS", "5")),
        )
