"""all-MiniLM-L6-v2 on ONNX Runtime: the exported graph (`export.py`) and the model's own
tokenizer, without torch.

The graph already pools (mean over the attention mask) and L2-normalises, as sentence-transformers
does, so its vectors are the torch embedder's (cosine >= 0.9999,
tests/integration/test_onnx_embedding.py) and both share one collection. The int8 variant's
vectors differ a little more (docs/behaviour.md), so it gets a collection of its own: switching
rebuilds the index from the records.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from retrieval_service.embedding import hugepages
from retrieval_service.embedding.cores import usable_cores
from retrieval_service.embedding.model_files import model_name

if TYPE_CHECKING:
    from tokenizers import Encoding

# Bumped when the exported graph or manifest changes meaning: older exports are redone (2: the
# fp32 graph's attention is fused: `export._fuse_attention`).
EXPORT_FORMAT = 2
MANIFEST = "manifest.json"
Precision = Literal["fp32", "int8"]
_SMALL = 1 << 20
# Padded tokens per forward pass: about 30 memory-sized texts (7-10 tokens), one text of the
# model's 256. A chunk of 64 memory-sized texts costs less CPU a text in passes of this size
# than in one pass, whose activations outgrow the cache; 192 or 384 do as well.
BATCH_TOKENS = 256
# `0` threads resolves to the usable cores, at most this many (each a pass buffer or an intra-op
# thread; `RETRIEVAL_DOCUMENT_THREADS` allows no more either).
MAX_RESOLVED_THREADS = 64
# Encodings `token_counts` keeps for the forward pass that follows: two jobs of the largest
# kind the sidecar takes (256 documents each) and room to spare.
ENCODINGS_KEPT = 1024


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
    the user's cache, one folder per source model and export format, shared by every checkout of
    the project (a checkout of an older format keeps its own export while a newer one is built)."""
    folder = f"{model_name(source)}-{source_fingerprint(source)}-f{EXPORT_FORMAT}"
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
        document_threads: int | None = None,
        batch_size: int = 64,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        from tokenizers import Tokenizer

        manifest = read_manifest(folder)
        model = str(folder / manifest["files"][precision])
        before = hugepages.writable_anonymous()
        # Documents run `document_threads` forward passes side by side, each on one thread: no
        # operator waits for a second thread, so they embed documents faster and for less CPU
        # than one pass on two threads, and a neighbour taking part of a core slows a pass of its
        # own rather than a second thread every operator of the other waits for. A query's pass
        # gains nothing from a second thread either. 0 threads: one per usable core.
        self.threads = _resolved(threads)
        self.document_threads = (
            self.threads if document_threads is None else _resolved(document_threads)
        )
        self._session = _open_session(model, self.threads, spin)
        self._document_session = (
            self._session if self.threads == 1 else _open_session(model, 1, spin)
        )
        # Threads start on first use: with one document thread, none ever does.
        self._helpers = ThreadPoolExecutor(
            max(1, self.document_threads - 1), thread_name_prefix="embed-documents"
        )
        # The sessions' memory (their weights) in 2 MiB pages: fewer TLB misses in every pass.
        self.huge_pages = hugepages.advise_in_background(before)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(folder / manifest["files"]["tokenizer"]))
        self._tokenizer.enable_truncation(max_length=int(manifest["max_seq_length"]))
        self._tokenizer.no_padding()  # each forward pass pads its own texts (`_forward`)
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        self._lock = threading.Lock()
        self._encoded: OrderedDict[str, Encoding] = OrderedDict()  # by `token_counts`
        self._encoded_lock = threading.Lock()
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self.precision = precision
        suffix = "" if precision == "fp32" else f"-{precision}"
        self.model_name = f"{manifest['model_name']}{suffix}"
        self.dimensions = int(manifest["dimensions"])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Texts of similar token length share a forward pass, at most `batch_tokens` padded
        tokens each (`_batches`); the vectors come back in the caller's order."""
        return self._embed(texts, self._session)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` on a one-thread session, `document_threads` forward passes at a time: the
        same vectors, to float rounding (the very same ones when queries run on one thread)."""
        return self._embed(texts, self._document_session, self.document_threads)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Counted off the model thread (the lane's worker); the encodings are kept for
        `embed_documents`, so a chunk of the longest texts is not tokenized again where queries
        wait (tokenizing can cost more than the forward pass)."""
        encodings = self._tokenizer.encode_batch(list(texts))
        with self._encoded_lock:
            for text, encoding in zip(texts, encodings, strict=True):
                self._encoded[text] = encoding
                self._encoded.move_to_end(text)
            while len(self._encoded) > ENCODINGS_KEPT:
                self._encoded.popitem(last=False)
        return [len(encoding.ids) for encoding in encodings]

    def _encodings(self, texts: Sequence[str]) -> list[Encoding]:
        with self._encoded_lock:
            kept = [self._encoded.pop(text, None) for text in texts]
        missing = [text for text, encoding in zip(texts, kept, strict=True) if encoding is None]
        fresh = iter(self._tokenizer.encode_batch(missing) if missing else [])
        return [encoding if encoding is not None else next(fresh) for encoding in kept]

    def _embed(
        self, texts: Sequence[str], session: Any, side_by_side: int = 1
    ) -> list[list[float]]:
        if not texts:
            return []
        encodings = self._encodings(texts)
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        passes = self._batches([len(e.ids) for e in encodings], side_by_side)
        helpers = min(side_by_side, len(passes)) - 1
        batches = iter(passes)
        taking = threading.Lock()
        failed = False

        def work() -> None:
            """Takes the next pass until none is left or one failed: a helper descheduled by a
            neighbour holds up only its own pass, never the others' operators."""
            nonlocal failed
            while True:
                with taking:
                    batch = None if failed else next(batches, None)
                if batch is None:
                    return
                try:
                    vectors[batch] = self._forward([encodings[i] for i in batch], session)
                except BaseException:
                    failed = True  # the caller gets the error: no pass left is worth running
                    raise

        with self._lock:
            # The calling thread works too (one hop fewer); onnxruntime runs one session's
            # passes concurrently and releases the interpreter while it computes.
            working = [self._helpers.submit(work) for _ in range(helpers)]
            try:
                work()
            finally:
                wait(working)  # none still writing when the caller gets an error
            for helper in working:
                helper.result()
        return vectors.tolist()

    def _batches(self, lengths: list[int], side_by_side: int = 1) -> list[list[int]]:
        """Positions grouped shortest first, each group's count times its longest length (the
        padded tokens its forward pass computes) within `batch_tokens`. One batch padded to its
        longest text would spend much of its work on padding for memory-sized texts, and one large
        pass costs more per token than a few smaller ones (its activations outgrow the cache).
        Texts that fit in fewer passes than `side_by_side` are dealt into that many passes of
        about equal tokens instead: a chunk cut short because queries keep coming (a few
        documents) would otherwise run on one thread and leave the other idle."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        batches: list[list[int]] = []
        batch: list[int] = []
        for position in order:
            longest = lengths[position]  # sorted: the newcomer is the longest
            if batch and (
                len(batch) >= self._batch_size or (len(batch) + 1) * longest > self._batch_tokens
            ):
                batches.append(batch)
                batch = []
            batch.append(position)
        if batch:
            batches.append(batch)
        if len(batches) >= side_by_side or len(lengths) < 2:
            return batches
        return _dealt(order, lengths, min(side_by_side, len(lengths)))

    def _forward(
        self, encodings: list[Encoding], session: Any
    ) -> np.ndarray[Any, np.dtype[np.float32]]:
        """One forward pass, right-padded to the longest text as the tokenizer would pad: the
        attention mask keeps padding out of every real token's vector."""
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            ids[row, :length] = encoding.ids
            mask[row, :length] = encoding.attention_mask
            types[row, :length] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        output = session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return np.asarray(output[0], dtype=np.float32)


def _dealt(order: list[int], lengths: list[int], count: int) -> list[list[int]]:
    """`order` cut into `count` runs of about equal tokens, none empty."""
    total = sum(lengths)
    groups: list[list[int]] = []
    group: list[int] = []
    taken = 0
    for index, position in enumerate(order):
        group.append(position)
        taken += lengths[position]
        left = len(order) - index - 1  # positions still to deal
        groups_after = count - len(groups) - 1  # groups still to fill after this one
        if groups_after and (taken * count >= total * (len(groups) + 1) or left == groups_after):
            groups.append(group)
            group = []
    if group:
        groups.append(group)
    return groups


def _resolved(threads: int) -> int:
    return threads or min(usable_cores(), MAX_RESOLVED_THREADS)


def _open_session(model: str, threads: int, spin: bool) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning waiters take cores the memory service needs and, on busy cores, turn
    # milliseconds into seconds (as OMP_WAIT_POLICY=ACTIVE does to torch).
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
