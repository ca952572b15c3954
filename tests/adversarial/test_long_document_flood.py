"""One tenant's longest memories must not hold up another tenant's recall.

Every model call of the sidecar starts from one lane, where queries go before the next chunk of
documents. A chunk used to be up to 64 documents whatever their length: 64 memories at the
longest (8,000 characters, truncated to the model's 256 tokens) took the model seconds, and a
search that arrived after a quiet second waited for all of it. A signed-in stranger who writes
the longest memories in bulk could so slow every other tenant's recall towards its deadline.
Chunks are sized by model time per token now, a query after a quiet spell waiting for at most
a quarter of a second of documents. Real sidecar process, real model, at default settings.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from pathlib import Path

import pytest
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb

from tests.conftest import start_retrieval
from tests.support.servers import sidecar_stub

LATIN = ("Priya at ACME asked for net-30 on order PO-2024-118 before the Q3 renewal. " * 110)[:8000]
# A token a character: the slowest text to count (seconds for 256 of them), counted off the
# model thread so that counting holds up no query either.
CJK = ("日本語のテキストと中文の顧客メモ" * 500)[:8000]
# 100-letter words the vocabulary lacks: 256 tokens a text, and the slowest text to tokenize
# (most of a second for 32 of them), however the tokenizer is called.
_letters = random.Random(5)
SLOW_TO_COUNT = " ".join(
    "".join(_letters.choice("bcdfghjklmnpqrstvwxz") for _ in range(100)) for _ in range(79)
)
QUIET = 1.2  # seconds: longer than the lane's quiet spell, so each search finds large chunks


def flood(tenant: str, count: int, longest: str) -> rpb.UpsertDocumentsRequest:
    return rpb.UpsertDocumentsRequest(
        documents=[
            rpb.Document(
                id=uuid.uuid4().hex,
                tenant_id=tenant,
                version=1,
                revision_number=1,
                text=f"{index:05d} {longest}"[:8000],
                scope_type="USER",
                scope_id="mallory",
            )
            for index in range(count)
        ]
    )


@pytest.mark.parametrize(
    ("longest", "count"),
    [(LATIN, 256), (CJK, 128)],  # the CJK flood as large as a 4 MiB message allows
    ids=["latin", "cjk"],
)
def test_a_flood_of_the_longest_documents_holds_another_tenants_search_briefly(
    tmp_path: Path, longest: str, count: int
) -> None:
    sidecar = start_retrieval(tmp_path)
    try:
        stub = sidecar_stub(sidecar.address)
        answers: list[int] = []
        writer = threading.Thread(
            target=lambda: answers.append(
                stub.UpsertDocuments(
                    flood("mallory-inc", count, longest), timeout=600
                ).upserted_count
            )
        )
        writer.start()
        waits = []
        time.sleep(QUIET)
        while writer.is_alive() and len(waits) < 4:
            started = time.monotonic()
            stub.Search(
                rpb.SearchRequest(tenant_id="acme", query="aisle seats", limit=5), timeout=30
            )
            waits.append(time.monotonic() - started)
            time.sleep(QUIET)
        writer.join(600)
        assert answers == [count]
        assert len(waits) >= 3, "the flood was embedded before the searches could run into it"
        assert max(waits) < 1.0, [round(wait, 2) for wait in waits]
    finally:
        sidecar.stop()


def test_a_second_flood_being_counted_holds_no_search_up(tmp_path: Path) -> None:
    """The memory service keeps two upserts in flight: the second is counted while the first
    embeds. Counting used tokenizers' process-wide thread pool, and any batch of two texts on the
    model thread (a chunk, two searches batched) queued behind the whole count: one search waited
    9.9 s. Searches every half second, as a busy tenant's recall would."""
    sidecar = start_retrieval(tmp_path)
    try:
        stub = sidecar_stub(sidecar.address)
        medium = "Priya at ACME asked for net-30 on order PO-2024-118 before the Q3 renewal. " * 4
        writers = [
            threading.Thread(
                target=lambda text=text: stub.UpsertDocuments(
                    flood("mallory-inc", 256, text), timeout=600
                )
            )
            for text in (medium, SLOW_TO_COUNT)
        ]
        writers[0].start()
        time.sleep(0.3)
        writers[1].start()
        waits = []
        began = time.monotonic()
        while any(w.is_alive() for w in writers) and time.monotonic() - began < 45:
            started = time.monotonic()
            stub.Search(
                rpb.SearchRequest(tenant_id="acme", query="aisle seats", limit=5), timeout=60
            )
            waits.append(time.monotonic() - started)
            time.sleep(0.5)
        for writer in writers:
            writer.join(600)
        assert len(waits) >= 5
        assert max(waits) < 1.0, [round(wait, 2) for wait in waits]
    finally:
        sidecar.stop()
