"""The ONNX Runtime embedder gives the torch embedder's vectors (same tokeniser limits, mean
pooling, L2 normalisation) from the export `make onnx` writes; the sidecar runs it without torch."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from retrieval_service.config import RetrievalSettings
from retrieval_service.embedding import Embedder, open_embedder
from retrieval_service.embedding.cores import usable_cores
from retrieval_service.embedding.export import is_current
from retrieval_service.embedding.export import main as export_main
from retrieval_service.embedding.model_files import packaged_model_path
from retrieval_service.embedding.onnx_runtime import (
    MANIFEST,
    MAX_RESOLVED_THREADS,
    ExportMissing,
    OnnxEmbedder,
    default_export_dir,
)
from retrieval_service.embedding.sentence_transformer import SentenceTransformerEmbedder
from tests.support.servers import ServerProcess

ROOT = Path(__file__).parents[2]
TORCH_MODULES = {"torch", "sentence_transformers", "transformers"}

VOCABULARY = (
    "Mara Priya Jonas ACME Globex Initech renewal invoice net-30 net-60 discount pricing quote "
    "Q3 forecast pipeline churn onboarding Berlin Lisbon Tuesday call email prefers budget "
    "€12,500 $4,999.99 #A-99812 SKU-77 PO-2024-118 CFO procurement legal redlines SLA 99.9% "
    "Kunde möchte anrufen café résumé naïve 日本語 中文 😀 📞 — … « » O'Brien e-mail x@y.io"
)
WORDS = VOCABULARY.split()


def varied_texts(count: int = 200) -> list[str]:
    """Short queries, CRM facts, punctuation, scripts the vocabulary lacks, the empty string,
    and texts past the model's 256-token limit (truncated the same way by both)."""
    rng = random.Random(13)
    fixed = [
        "",
        " ",
        "hi",
        "What did Mara say about pricing?",
        "net-30",
        "Order #A-99812 shipped on 2024-03-05",
        "ACME wants a 15% discount if they sign before Q3",
        "Der Kunde möchte am Dienstag angerufen werden",
        "日本語のテキストと中文",
        "😀😀😀",
        "word " * 300,
        "Priya (CFO) prefers email; never call before 10am CET. " * 30,
    ]
    texts = list(fixed)
    while len(texts) < count:
        length = rng.choice([1, 2, 3, 5, 8, 13, 21, 40])
        texts.append(" ".join(rng.choice(WORDS) for _ in range(length)))
    return texts


@pytest.fixture(scope="module")
def export_dir() -> Path:
    """The export `make onnx` wrote (the test run's prerequisite, like the generated stubs)."""
    folder = default_export_dir(packaged_model_path().resolve())
    assert is_current(folder, packaged_model_path().resolve()), "run `make onnx` first"
    return folder


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    embedder = SentenceTransformerEmbedder(packaged_model_path(), threads=1)
    return np.array(embedder.embed(varied_texts()))


def vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return np.array(embedder.embed(texts))


def test_fp32_vectors_are_the_torch_vectors(export_dir: Path, torch_vectors: np.ndarray) -> None:
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1)
    onnx.huge_pages.join(timeout=60)  # the weights' memory moved into huge pages meanwhile
    assert not onnx.huge_pages.is_alive()
    got = vectors(onnx, varied_texts())
    assert got.shape == torch_vectors.shape == (200, 384)
    cosines = (got * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines.argmin()
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_documents_side_by_side_get_the_query_sessions_vectors(export_dir: Path) -> None:
    """The sidecar indexes documents two forward passes at a time (`RETRIEVAL_DOCUMENT_THREADS`)
    and searches one text at a time: a document and the same text as a query must land on the
    same point of the space, or an exact repeat of a memory stops finding it first. With queries
    on one thread both share the session, and the vectors are the very same."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1, document_threads=2)
    texts = varied_texts()
    as_documents = np.array(onnx.embed_documents(texts))
    assert np.array_equal(as_documents, np.array(onnx.embed(texts)))
    as_queries = vectors(onnx, texts)
    assert (as_documents * as_queries).sum(axis=1).min() >= 0.99999
    # Queries on two threads: documents get a one-thread session of their own.
    wide = OnnxEmbedder(export_dir, "fp32", threads=2, document_threads=2)
    assert wide._document_session is not wide._session
    assert (np.array(wide.embed_documents(texts)) * as_queries).sum(axis=1).min() >= 0.99999


@pytest.mark.parametrize(("document_threads", "expected"), [(2, 2), (1, 1)])
def test_document_passes_run_side_by_side_on_one_session(
    export_dir: Path, monkeypatch: pytest.MonkeyPatch, document_threads: int, expected: int
) -> None:
    """Two document threads mean two forward passes at once, each on one thread; one means one
    at a time on the calling thread. Counted at the session: a pool that never overlaps (or a
    lock around each pass) fails here."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1, document_threads=document_threads)
    session = onnx._document_session
    guard = threading.Lock()
    running = 0
    most = 0
    callers: set[int] = set()

    class Counting:
        def run(self, *args: object) -> object:
            nonlocal running, most
            with guard:
                running += 1
                most = max(most, running)
                callers.add(threading.get_ident())
            try:
                time.sleep(0.02)  # long enough for a second pass to start beside it
                return session.run(*args)
            finally:
                with guard:
                    running -= 1

    monkeypatch.setattr(onnx, "_document_session", Counting())
    texts = varied_texts()
    got = np.array(onnx.embed_documents(texts))
    assert (most, len(callers)) == (expected, expected)
    assert np.array_equal(got, np.array(onnx.embed(texts)))


@pytest.mark.parametrize("failing", ["caller", "helper"])
def test_a_failing_pass_is_the_callers_error_once_every_pass_stopped(
    export_dir: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A pass that fails, on the calling thread or the helper, is the caller's error (rows never
    filled would otherwise go back as vectors), raised only once the other pass is done with the
    vectors being filled; and no pass starts after it: the lock that queries wait on is held for
    the passes already running, not for the rest of the call."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1, document_threads=2)
    session = onnx._document_session
    caller = threading.get_ident()
    other_running = threading.Event()
    started: list[float] = []  # when the other side's passes began
    failed_at: list[float] = []
    finished: list[float] = []

    class OneSideFails:
        def run(self, *args: object) -> object:
            if (threading.get_ident() == caller) == (failing == "caller"):
                # Fails while the other side is in a pass, whichever thread starts first.
                assert other_running.wait(timeout=10)
                failed_at.append(time.monotonic())
                raise RuntimeError("pass failed")
            started.append(time.monotonic())
            other_running.set()
            time.sleep(0.05)  # still running when the failing side raises
            try:
                return session.run(*args)
            finally:
                finished.append(time.monotonic())

    monkeypatch.setattr(onnx, "_document_session", OneSideFails())
    texts = varied_texts()
    assert len(onnx._batches([len(e.ids) for e in onnx._encodings(texts)], 2)) > 4
    with pytest.raises(RuntimeError, match="pass failed"):
        onnx.embed_documents(texts)
    raised = time.monotonic()
    assert finished
    assert max(finished) <= raised
    # At most one pass may slip in between the failure and the other side's next look.
    assert sum(at > failed_at[0] for at in started) <= 1
    monkeypatch.undo()
    assert np.array_equal(np.array(onnx.embed_documents(texts)), np.array(onnx.embed(texts)))


@pytest.mark.parametrize("count", [2, 3, 4, 7])
def test_a_few_documents_are_dealt_into_one_pass_per_document_thread(
    export_dir: Path, count: int
) -> None:
    """While queries keep coming, a chunk holds a few documents, all of which fit in one pass:
    on one thread that left the other core idle and halved indexing. They are dealt into one
    pass per document thread, of about equal tokens, and keep their vectors."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1, document_threads=2)
    texts = [f"Customer {n} prefers email on Tuesdays, never calls" for n in range(count)]
    lengths = [len(e.ids) for e in onnx._tokenizer.encode_batch(texts)]
    assert len(onnx._batches(lengths)) == 1  # one pass when not side by side
    passes = onnx._batches(lengths, 2)
    assert len(passes) >= 2
    assert sorted(p for batch in passes for p in batch) == list(range(count))
    assert len(onnx._batches([9], 2)) == 1  # a single document is a single pass
    as_documents = np.array(onnx.embed_documents(texts))
    assert ((as_documents * np.array(onnx.embed(texts))).sum(axis=1)).min() >= 0.99999


@pytest.mark.parametrize(
    ("environment", "threads", "sessions"),
    [
        ({}, (1, 2), 1),  # the defaults: one session, documents two passes at a time
        ({"RETRIEVAL_DOCUMENT_THREADS": "1"}, (1, 1), 1),
        # queries on every core: documents on a one-thread session of their own
        (
            {"RETRIEVAL_MODEL_THREADS": "0", "RETRIEVAL_DOCUMENT_THREADS": "0"},
            ("cores", "cores"),
            2 if usable_cores() > 1 else 1,
        ),
        ({"RETRIEVAL_EMBEDDER": "onnx-int8"}, (1, 2), 1),
        ({"RETRIEVAL_DOCUMENT_THREADS": "0"}, (1, "cores"), 1),
    ],
)
def test_the_settings_choose_the_threads_and_a_one_thread_query_session_is_shared(
    export_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    threads: tuple[object, object],
    sessions: int,
) -> None:
    """A second session costs about 110 MB of weights: only queries on more than one thread
    earn it (document passes always run on one)."""
    for name in ("RETRIEVAL_MODEL_THREADS", "RETRIEVAL_DOCUMENT_THREADS", "RETRIEVAL_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    embedder = open_embedder(RetrievalSettings())
    assert isinstance(embedder, OnnxEmbedder)
    cores = min(usable_cores(), MAX_RESOLVED_THREADS)
    expected = tuple(cores if count == "cores" else count for count in threads)
    assert (embedder.threads, embedder.document_threads) == expected
    assert len({id(embedder._session), id(embedder._document_session)}) == sessions


def test_the_fp32_graph_runs_each_layers_attention_as_one_operator(export_dir: Path) -> None:
    """The export fuses the attention of all six layers (a query's forward pass costs about a
    ninth less CPU); an optimiser that stops recognising the traced pattern fails here, not
    silently in the benchmarks. int8 keeps quantising the traced graph."""
    import onnx

    manifest = json.loads((export_dir / MANIFEST).read_text())
    assert manifest["fused_attention_layers"] == 6
    assert export_dir.name.endswith(f"-f{manifest['format']}")  # one folder per format
    operators = [n.op_type for n in onnx.load(export_dir / "model.onnx").graph.node]
    assert operators.count("MultiHeadAttention") == 6
    assert "Softmax" not in operators
    int8 = [n.op_type for n in onnx.load(export_dir / "model-int8.onnx").graph.node]
    assert "MultiHeadAttention" not in int8


def test_fp32_shares_the_torch_collection_and_int8_gets_its_own(export_dir: Path) -> None:
    """Same vectors may share an index; the int8 ones are further off, so switching to them
    rebuilds the index instead of mixing spaces."""
    torch_name = SentenceTransformerEmbedder(packaged_model_path(), threads=1).model_name
    assert OnnxEmbedder(export_dir, "fp32").model_name == torch_name == "all-MiniLM-L6-v2"
    assert OnnxEmbedder(export_dir, "int8").model_name == "all-MiniLM-L6-v2-int8"


def test_int8_vectors_stay_close_to_fp32(export_dir: Path) -> None:
    """docs/behaviour.md and docs/benchmarks.md quote these figures; a quantiser change that
    loses more fails here."""
    texts = varied_texts()
    fp32 = vectors(OnnxEmbedder(export_dir, "fp32", threads=1), texts)
    int8 = vectors(OnnxEmbedder(export_dir, "int8", threads=1), texts)
    cosines = (fp32 * int8).sum(axis=1)
    assert cosines.mean() >= 0.985, cosines.mean()
    assert cosines.min() >= 0.95, cosines.min()


def test_a_batch_gives_each_text_its_own_vector(export_dir: Path) -> None:
    """Padding to the longest text of a batch (outbox drains) changes no vector, and batches
    larger than one forward pass keep their order."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1, batch_size=7)
    texts = varied_texts(30)
    batched = vectors(onnx, texts)
    alone = np.array([onnx.embed([text])[0] for text in texts])
    assert ((batched * alone).sum(axis=1)).min() >= 0.99999
    assert onnx.embed([]) == []


def test_texts_embedded_shortest_first_come_back_in_the_callers_order(export_dir: Path) -> None:
    """A call's texts are regrouped by token length into forward passes of at most
    `batch_tokens` padded tokens; each text still gets the vector it gets alone, at its own
    position, however the texts were ordered."""
    onnx = OnnxEmbedder(export_dir, "fp32", threads=1)
    texts = varied_texts(120)
    random.Random(5).shuffle(texts)
    lengths = [len(e.ids) for e in onnx._tokenizer.encode_batch(texts)]
    batches = onnx._batches(lengths)
    assert len(batches) > 3  # the call really was regrouped
    assert sorted(p for batch in batches for p in batch) == list(range(len(texts)))
    for batch in batches:
        assert len(batch) * max(lengths[p] for p in batch) <= 256 or len(batch) == 1
    assert [lengths[p] for batch in batches for p in batch] == sorted(lengths)
    together = vectors(onnx, texts)
    alone = np.array([onnx.embed([text])[0] for text in texts])
    cosines = (together * alone).sum(axis=1)
    assert cosines.min() >= 0.99999, (cosines.argmin(), texts[int(cosines.argmin())])


def test_the_settings_choose_the_runtime(export_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RETRIEVAL_EMBEDDER", "RETRIEVAL_ONNX_DIR", "RETRIEVAL_MODEL_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RETRIEVAL_SHARED_SECRET", "r" * 40)
    default = open_embedder(RetrievalSettings.from_env())
    assert isinstance(default, OnnxEmbedder)
    assert default.precision == "fp32"
    monkeypatch.setenv("RETRIEVAL_EMBEDDER", "onnx-int8")
    monkeypatch.setenv("RETRIEVAL_ONNX_DIR", str(export_dir))
    int8 = open_embedder(RetrievalSettings.from_env())
    assert isinstance(int8, OnnxEmbedder)
    assert int8.precision == "int8"
    monkeypatch.setenv("RETRIEVAL_EMBEDDER", "torch")
    assert isinstance(open_embedder(RetrievalSettings.from_env()), SentenceTransformerEmbedder)


def test_an_empty_or_foreign_folder_is_refused_with_the_command(tmp_path: Path) -> None:
    with pytest.raises(ExportMissing, match="make onnx"):
        OnnxEmbedder(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"format": 0}))
    with pytest.raises(ExportMissing, match="older format"):
        OnnxEmbedder(tmp_path)


def test_the_export_is_a_no_op_when_current(
    export_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in export_dir.iterdir()}
    assert export_main([]) == 0
    assert "is current" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in export_dir.iterdir()} == before


def test_the_sidecar_embeds_without_loading_torch(retrieval_server: ServerProcess) -> None:
    """The running sidecar (default settings, after its warm-up embedding) has no torch
    library mapped, and a fresh interpreter doing what it does imports none of the torch stack."""
    maps = Path(f"/proc/{retrieval_server.process.pid}/maps").read_text()
    assert "onnxruntime" in maps
    assert "libtorch" not in maps
    probe = (
        "import retrieval_service.__main__, retrieval_service.server\n"
        "from retrieval_service.config import RetrievalSettings\n"
        "from retrieval_service.embedding import open_embedder\n"
        "open_embedder(RetrievalSettings()).embed(['hello'])\n"
        "import json, sys; print(json.dumps(sorted(sys.modules)))"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "RETRIEVAL_SHARED_SECRET": "s" * 32},
    ).stdout
    loaded = {name.split(".")[0] for name in json.loads(output.splitlines()[-1])}
    assert "onnxruntime" in loaded
    assert loaded & TORCH_MODULES == set()
