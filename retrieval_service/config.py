"""The sidecar's settings, read once at start-up from the environment.

Each field is one variable (its alias) with its type, default and bounds; its docstring is the
description in docs/settings.md (generated: `make settings-table`). A bad value stops the
process with one line naming the variable. Nothing here imports the memory service
(`crmmem_runtime` is shared).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, field_validator

from crmmem_runtime.process import ProcessSettings
from crmmem_runtime.redaction import url_secrets
from crmmem_runtime.settings import AbsolutePath, HostPort, load


class RetrievalSettings(ProcessSettings):
    """Everything `python -m retrieval_service` reads. `from_env` adds the shared secret."""

    listen: HostPort = Field("127.0.0.1:50052", validation_alias="RETRIEVAL_LISTEN")
    """Sidecar address (port 0 takes any free port)."""

    data_dir: AbsolutePath = Field(
        Path("data/retrieval"), validate_default=True, validation_alias="RETRIEVAL_DATA_DIR"
    )
    """Embedded engine files (one collection per model)."""

    dev_mode: bool = Field(
        False,
        validation_alias="RETRIEVAL_DEV_MODE",
        json_schema_extra={"shown_default": "`0` (`1` under `make run`)"},
    )
    """The sidecar may create its secret (in the `_FILE` path, else
    `RETRIEVAL_DATA_DIR/shared-secret`)."""

    model_path: str = Field(
        "",
        validation_alias="RETRIEVAL_MODEL_PATH",
        json_schema_extra={"shown_default": "the packaged all-MiniLM-L6-v2"},
    )
    """Another sentence-transformers model folder (for `onnx`, export it first:
    `python -m retrieval_service.embedding.export --source FOLDER`)."""

    embedder: Literal["onnx", "onnx-int8", "torch"] = Field(
        "onnx", validation_alias="RETRIEVAL_EMBEDDER"
    )
    """How the model runs: `onnx` (ONNX Runtime, fp32; no torch at run time), `onnx-int8`
    (dynamic int8 quantisation: faster, vectors a little further from the model's, an index of
    its own rebuilt on first start) or `torch` (sentence-transformers)."""

    onnx_dir: str = Field(
        "",
        validation_alias="RETRIEVAL_ONNX_DIR",
        json_schema_extra={"shown_default": "`make onnx`'s export in `~/.cache/crmmem/onnx`"},
    )
    """A folder written by `python -m retrieval_service.embedding.export` (the image's is
    `/opt/onnx`)."""

    qdrant_url: str = Field("", validation_alias="QDRANT_URL", repr=False)  # may hold a password
    """Use a Qdrant server or cluster (`http://qdrant:6334`, gRPC port) instead of the embedded
    engine."""

    qdrant_api_key: str = Field("", validation_alias="QDRANT_API_KEY", repr=False)
    """The key Qdrant requires (`QDRANT__SERVICE__API_KEY` on the server)."""

    qdrant_https: bool = Field(False, validation_alias="QDRANT_HTTPS")
    """Talk to Qdrant over TLS (also when `QDRANT_URL` starts with `https://`)."""

    qdrant_shards: int = Field(1, ge=1, le=1000, validation_alias="QDRANT_SHARDS")
    """Shards of a new collection on a Qdrant cluster."""

    qdrant_replication_factor: int = Field(
        1, ge=1, le=100, validation_alias="QDRANT_REPLICATION_FACTOR"
    )
    """Copies of each shard on a Qdrant cluster."""

    search_mode: Literal["hybrid", "dense", "sparse"] = Field(
        "hybrid", validation_alias="RETRIEVAL_SEARCH_MODE"
    )
    """`hybrid`: the sentence embedding and BM25 fused; `dense` or `sparse` (BM25) alone. Every
    point holds both vectors, so switching needs no re-index."""

    fusion: Literal["weighted", "rrf"] = Field("weighted", validation_alias="RETRIEVAL_FUSION")
    """How `hybrid` merges the two rankings: a weighted sum of the cosine and the normalised
    BM25 score (`RETRIEVAL_SPARSE_WEIGHT`), or reciprocal rank fusion."""

    sparse_weight: float = Field(0.3, ge=0, le=1, validation_alias="RETRIEVAL_SPARSE_WEIGHT")
    """BM25's share of the score under `RETRIEVAL_FUSION=weighted`."""

    sparse_idf: bool = Field(False, validation_alias="RETRIEVAL_SPARSE_IDF")
    """Weight BM25 terms by the engine's inverse document frequency, counted over the whole
    collection: then a tenant's scores and order depend on other tenants' texts, so only for
    one-tenant deployments. A separate collection (suffix `-thi`), rebuilt from the records."""

    index_optimize_points: int = Field(
        20_000, ge=0, le=100_000_000, validation_alias="RETRIEVAL_INDEX_OPTIMIZE_POINTS"
    )
    """Embedded engine only: once this many points (and a quarter of the optimised ones) were
    written since the last optimisation, a second engine process optimises (indexes,
    int8-quantises, merges) a copy of the shard while the first keeps serving, then takes over
    (docs/benchmarks.md, embedded engine); 0 never does."""

    model_threads: int = Field(
        1,
        ge=0,
        le=1024,
        validation_alias="RETRIEVAL_MODEL_THREADS",
    )
    """CPU threads of a query's forward pass (`0`: one per usable core, the CPU affinity capped
    by the cgroup's CPU quota, at most 64 on ONNX; on torch, `OMP_NUM_THREADS` when set). One
    leaves the other core of a 2-core host to the memory service."""

    document_threads: int = Field(
        2,
        ge=0,
        le=64,
        validation_alias="RETRIEVAL_DOCUMENT_THREADS",
    )
    """CPU threads embedding documents being indexed, ONNX embedders only (`0`: one per usable
    core, at most 64; the torch embedder uses `RETRIEVAL_MODEL_THREADS` for both): that many
    forward passes side by side, one thread each. One embeds about 320 memories a second on this
    project's 2-core reference machine, two about 600: the 400 a second of sustained ingest need
    two (docs/benchmarks.md). Queries still go first."""

    query_batch_wait_ms: float = Field(
        0, ge=0, le=1000, validation_alias="RETRIEVAL_QUERY_BATCH_WAIT_MS"
    )
    """How long a query waits for others to batch with."""

    document_chunk_ms: float = Field(
        25, gt=0, le=10000, validation_alias="RETRIEVAL_DOCUMENT_CHUNK_MS"
    )
    """Model time of one chunk of documents while queries come (counted in tokens: at least 64
    tokens or one document, at most 64 documents); after a quiet second, a quarter second."""

    omp_wait_policy: Literal["PASSIVE", "ACTIVE"] = Field(
        "PASSIVE",
        validation_alias="OMP_WAIT_POLICY",
        json_schema_extra={"shown_default": "`PASSIVE` (set by the sidecar)"},
    )
    """OpenMP's, read by torch, and applied to ONNX Runtime's threads: `ACTIVE` makes idle model
    threads spin, which on busy cores costs queries seconds."""

    shutdown_drain_seconds: float = Field(
        2, ge=0, validation_alias="RETRIEVAL_SHUTDOWN_DRAIN_SECONDS"
    )
    """On SIGTERM: health NOT_SERVING while calls are still served for this long."""

    shutdown_grace_seconds: float = Field(
        5, ge=0, validation_alias="RETRIEVAL_SHUTDOWN_GRACE_SECONDS"
    )
    """Then new calls are refused and in-flight calls get this long."""

    _shared_secret: str = PrivateAttr("")

    @field_validator("qdrant_url")
    @classmethod
    def _qdrant_url(cls, value: str) -> str:
        if value and not (value.startswith(("http://", "https://")) and _port_readable(value)):
            raise ValueError("expected http://host:port or https://host:port")
        return value

    @field_validator("omp_wait_policy", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("search_mode", "fusion", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @property
    def shared_secret(self) -> str:
        return self._shared_secret

    def secret_values(self) -> list[str]:
        """Every secret this process holds, for `crmmem_runtime.redaction.redact` to clean an
        error text of before it is printed."""
        return [
            *url_secrets(self.qdrant_url),
            self.qdrant_api_key,
            self.retrieval_shared_secret,
            self._shared_secret,
        ]

    @classmethod
    def from_env(cls) -> RetrievalSettings:
        """Raises ConfigError on a bad value, or without a shared secret unless
        RETRIEVAL_DEV_MODE is set."""
        settings = load(cls)
        settings._shared_secret = settings.resolve_shared_secret(
            settings.dev_mode, settings.data_dir / "shared-secret"
        )
        return settings


def _port_readable(url: str) -> bool:
    """The client would fail on a port that is not a number: refused with the other settings."""
    try:
        port = urlsplit(url).port
    except ValueError:
        return False
    return port is None or port > 0
