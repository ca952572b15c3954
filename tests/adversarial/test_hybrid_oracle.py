"""Hybrid search is no oracle either: the lexical scores of a tenant's memories depend on their
own text and the query only, never on what other tenants wrote. (With the engine's IDF counted
over the whole collection, `RETRIEVAL_SPARSE_IDF=1`, another tenant writing a term moves this
tenant's scores and order: that setting is for one-tenant deployments.)"""

from __future__ import annotations

import random

from tests.e2e.helpers import create_pref
from tests.e2e.test_recall import recall, recalled_values, until_recalled
from tests.support.polling import eventually
from tests.support.servers import ServerProcess


def test_another_tenant_writing_a_term_moves_no_score_of_this_tenant(
    recall_server: ServerProcess, tenant: str
) -> None:
    rng = random.Random()
    first, second = (f"ORD-{rng.randrange(10**7, 10**8)}" for _ in range(2))
    mara = recall_server.client(tenant, "mara")
    create_pref(mara, "last_order", f"last order {first} shipped")
    create_pref(mara, "open_order", f"open order {second} shipped")
    query = f"{first} or {second}?"
    until_recalled(mara, query, f"open order {second} shipped")
    until_recalled(mara, query, f"last order {first} shipped")

    def answer() -> list[tuple[str, float]]:
        reply = recall(mara, query, limit=5)
        return [(m.memory.applicable_revision.value, m.score) for m in reply.memories]

    before = answer()
    eve = recall_server.client(f"{tenant}-other", "eve")
    notes = [f"{first} came back damaged, note {n}" for n in range(12)]
    for n, note in enumerate(notes):
        create_pref(eve, f"note_{n}", note)
    eventually(
        lambda: set(recalled_values(recall(eve, first, limit=20))) == set(notes),
        message="the other tenant's notes were never all indexed",
    )
    assert answer() == before
