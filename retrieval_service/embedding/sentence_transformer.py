"""all-MiniLM-L6-v2 through sentence-transformers, loaded from disk only (never from a hub)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from retrieval_service.embedding.cores import usable_cores
from retrieval_service.embedding.model_files import model_name


class SentenceTransformerEmbedder:
    def __init__(self, model_path: Path, threads: int = 0, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # OpenMP's threads spin while they wait for work by default. On a machine whose cores
        # are busy with other processes the spinning waiters take the cores from the threads
        # that have work, and a query or a batch takes many times longer; sleeping waiters
        # leave the cores to the work. Read when torch loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import torch
        from sentence_transformers import SentenceTransformer

        # 0: the usable cores (torch's own count ignores a container's CPU quota), unless
        # OMP_NUM_THREADS says how many, which torch follows.
        if threads or "OMP_NUM_THREADS" not in os.environ:
            torch.set_num_threads(threads or usable_cores())
        self._model = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
        self._lock = threading.Lock()  # one forward pass at a time; torch uses the cores itself
        self._batch_size = batch_size
        self.model_name = model_name(model_path)
        dimensions = self._model.get_embedding_dimension()
        if dimensions is None:
            raise RuntimeError(f"{model_path} does not declare its embedding size")
        self.dimensions = int(dimensions)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Tokenize and run the model directly: `encode()` adds ~2 ms of bookkeeping a call,
        a quarter of a short query's cost on this machine."""
        import torch

        vectors: list[list[float]] = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(texts), self._batch_size):
                features = self._model.tokenize(list(texts[start : start + self._batch_size]))
                output = self._model.forward(dict(features))["sentence_embedding"]
                vectors.extend(torch.nn.functional.normalize(output, dim=1).tolist())
        return vectors

    # torch's intra-op threads are one setting for the whole process.
    embed_documents = embed

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        features = self._model.tokenize(list(texts))
        return [int(count) for count in features["attention_mask"].sum(dim=1).tolist()]
