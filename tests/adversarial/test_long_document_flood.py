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
