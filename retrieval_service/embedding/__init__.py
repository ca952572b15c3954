"""Text embedding behind one small protocol: all-MiniLM-L6-v2 on ONNX Runtime by default
(`onnx_runtime.py`, exported once by `export.py`), or on torch through sentence-transformers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from retrieval_service.embedding.model_files import packaged_model_path

if TYPE_CHECKING:
    from retrieval_service.config import RetrievalSettings

# tokenizers spreads a batch over one thread pool for the whole process: a query's two-text batch
# on the model thread would queue behind a worker counting a stranger's 256 longest texts
# (seconds). Each call tokenizes on its own thread instead. Set before any embedder (all in this
# package) loads a tokenizer; a deployment that sets it otherwise takes that risk knowingly.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Embedder(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order: for queries, one short pass each."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` for the documents being indexed, which may run on more threads."""

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text as the model sees it (truncated): what its forward pass costs."""


def open_embedder(settings: RetrievalSettings) -> Embedder:
    """The embedder the settings choose. Only `torch` imports torch: the ONNX ones need the
    export (raises onnx_runtime.ExportMissing without one) and onnxruntime."""
    if settings.embedder == "torch":
        from retrieval_service.embedding.sentence_transformer import SentenceTransformerEmbedder

        source = Path(settings.model_path) if settings.model_path else packaged_model_path()
        return SentenceTransformerEmbedder(source, threads=settings.model_threads)
    from retrieval_service.embedding.onnx_runtime import OnnxEmbedder, default_export_dir

    if settings.onnx_dir:
        folder = Path(settings.onnx_dir)
    else:
        source = Path(settings.model_path) if settings.model_path else packaged_model_path()
        folder = default_export_dir(source.resolve())
    return OnnxEmbedder(
        folder,
        "int8" if settings.embedder == "onnx-int8" else "fp32",
        threads=settings.model_threads,
        spin=settings.omp_wait_policy == "ACTIVE",
        document_threads=settings.document_threads,
    )
