"""all-MiniLM-L6-v2 on ONNX Runtime: the exported graph (`export.py`) and the model's own
tokenizer, without torch.

The graph already pools (mean over the attention mask) and L2-normalises, as sentence-transformers
does, so its vectors are the torch embedder's (cosine >= 0.9999, tests/unit/test_onnx_embedder.py)
and both share one collection. The int8 variant's vectors differ a little more (README), so it
gets a collection of its own: switching rebuilds the index from the records.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from retrieval_service.embedding import model_name

# Bumped when the exported graph or manifest changes meaning: older exports are redone.
EXPORT_FORMAT = 1
MANIFEST = "manifest.json"
Precision = Literal["fp32", "int8"]
_SMALL = 1 << 20


class ExportMissing(RuntimeError):
    """The sidecar was asked for ONNX but finds no usable export."""


def source_fingerprint(source: Path) -> str:
    """Identifies a model folder's contents without reading its weights: small files by content,
    large ones by size and modification time (a reinstalled package gets a new export)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(str(path.relative_to(source)).encode() + b"\0")
        if stat.st_size <= _SMALL:
            digest.update(path.read_bytes())
        else:
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def default_export_dir(source: Path) -> Path:
    """Where `make onnx` puts the export of `source` and the sidecar looks for it by default:
    the user's cache, one folder per source model, shared by every checkout of the project."""
    folder = f"{model_name(source)}-{source_fingerprint(source)}"
    return Path.home() / ".cache" / "crmmem" / "onnx" / folder


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text())
    except OSError as error:
        raise ExportMissing(
            f"no ONNX export in {folder} ({error.strerror}): run `make onnx` or "
            "`python -m retrieval_service.embedding.export`"
        ) from None
    if manifest.get("format") != EXPORT_FORMAT:
        raise ExportMissing(f"the ONNX export in {folder} is of an older format: run `make onnx`")
    return manifest


class OnnxEmbedder:
    def __init__(
        self,
        folder: Path,
        precision: Precision = "fp32",
        threads: int = 0,
        spin: bool = False,
        batch_size: int = 64,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        manifest = read_manifest(folder)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0: one per core
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Spinning waiters take cores the memory service needs and, on busy cores, turn
        # milliseconds into seconds (as OMP_WAIT_POLICY=ACTIVE does to torch).
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        self._session = onnxruntime.InferenceSession(
            str(folder / manifest["files"][precision]),
            options,
            providers=["CPUExecutionProvider"],
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(folder / manifest["files"]["tokenizer"]))
        self._tokenizer.enable_truncation(max_length=int(manifest["max_seq_length"]))
        self._tokenizer.enable_padding(
            pad_id=self._tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]"
        )
        self._lock = threading.Lock()
        self._batch_size = batch_size
        self.precision = precision
        suffix = "" if precision == "fp32" else f"-{precision}"
        self.model_name = f"{manifest['model_name']}{suffix}"
        self.dimensions = int(manifest["dimensions"])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        with self._lock:
            for start in range(0, len(texts), self._batch_size):
                vectors.extend(self._forward(texts[start : start + self._batch_size]).tolist())
        return vectors

    def _forward(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        encodings = self._tokenizer.encode_batch(list(texts))
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        output = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return np.asarray(output[0], dtype=np.float32)
