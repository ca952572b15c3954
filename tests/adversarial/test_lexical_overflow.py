"""A number written as shorthand ("120k") too long for a float: the lexical tokenizer turned it
into infinity and failed on it, so such a recall query failed the sidecar's Search. Any caller
could send it, and the failures counted against the breaker every tenant of the service shares:
a few a second kept recall degraded for everyone."""

from __future__ import annotations

from tests.e2e.helpers import create_pref
from tests.e2e.test_recall import recall, until_recalled
from tests.support.servers import ServerProcess

HUGE = "1" * 400 + "k"  # beyond a float's range once scaled: 1.1e399 * 1,000


def test_a_query_of_a_huge_shorthand_number_is_answered(
    recall_server: ServerProcess, tenant: str
) -> None:
    eve = recall_server.client(tenant, "eve")
    create_pref(eve, "budget", "budget is 120k for the pilot")
    until_recalled(eve, "budget 120k", "budget is 120k for the pilot")
    for query in (HUGE, f"budget {HUGE}", f"budget 1,{HUGE}", f"{HUGE}-x"):
        reply = recall(eve, query, limit=5)
        assert not reply.degraded, (query[-12:], reply.degraded_reason)


def test_another_tenants_crafted_queries_keep_no_one_from_searching(
    recall_server: ServerProcess, tenant: str
) -> None:
    mara = recall_server.client(tenant, "mara")
    create_pref(mara, "renewal", "renewal plan agreed in March")
    until_recalled(mara, "renewal plan", "renewal plan agreed in March")
    eve = recall_server.client(f"{tenant}-other", "eve")
    for _ in range(12):
        recall(eve, f"budget {HUGE}", limit=5)
    reply = recall(mara, "renewal plan", limit=5)
    assert not reply.degraded, reply.degraded_reason
    assert "renewal plan agreed in March" in [
        r.memory.applicable_revision.value for r in reply.memories
    ]
