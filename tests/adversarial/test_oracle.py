"""Recall is no oracle: asking for a scope the caller may not see answers exactly like asking for
an empty scope of their own, and candidates the caller may not read are not even counted."""

from __future__ import annotations

import uuid

from crmmem.memory.v1 import access_service_pb2, memory_service_pb2

from tests.e2e.helpers import SCOPE_CUSTOMER, SCOPE_USER, create_memory, create_pref
from tests.e2e.test_recall import dropped, inject, recall, recalled_values, until_recalled
from tests.support.servers import ServerProcess


def _shape(reply: memory_service_pb2.RecallMemoriesResponse) -> tuple[object, ...]:
    return (recalled_values(reply), dropped(reply), reply.degraded, reply.degraded_reason)


def test_another_users_scope_answers_like_an_empty_one(
    recall_server: ServerProcess, tenant: str
) -> None:
    mara = recall_server.client(tenant, "mara")
    sam = recall_server.client(tenant, "sam")
    word = uuid.uuid4().hex[:6]
    create_pref(sam, "gift_idea", f"wants a turquoise fountain pen {word}")
    until_recalled(sam, "turquoise fountain pen", f"wants a turquoise fountain pen {word}")
    query = f"turquoise fountain pen {word}"
    foreign = recall(mara, query, scope_type=SCOPE_USER, scope_id="sam")
    nobody = recall(mara, query, scope_type=SCOPE_USER, scope_id="nobody-at-all")
    assert _shape(foreign) == _shape(nobody) == ([], {}, False, "")


def test_an_unauthorized_customers_scope_answers_like_an_unknown_one(
    recall_server: ServerProcess, tenant: str
) -> None:
    admin = recall_server.client(tenant, "ada", ["admin"])
    sam = recall_server.client(tenant, "sam")
    mara = recall_server.client(tenant, "mara")
    admin.access.GrantCustomerAccess(
        access_service_pb2.GrantCustomerAccessRequest(user_id="sam", customer_id="acme"),
        timeout=10,
    )
    value = f"acme pays invoices by wire {uuid.uuid4().hex[:6]}"
    create_memory(sam, "payment_terms", value, scope_type=SCOPE_CUSTOMER, scope_id="acme")
    until_recalled(sam, "how does acme pay invoices", value)
    query = "how does acme pay invoices"
    foreign = recall(mara, query, scope_type=SCOPE_CUSTOMER, scope_id="acme")
    unknown = recall(mara, query, scope_type=SCOPE_CUSTOMER, scope_id="no-such-customer")
    every_customer = recall(mara, query, scope_type=SCOPE_CUSTOMER)
    assert _shape(foreign) == _shape(unknown) == _shape(every_customer) == ([], {}, False, "")


def test_an_unreadable_candidate_is_not_counted(
    recall_server: ServerProcess, retrieval_server: ServerProcess, tenant: str
) -> None:
    """Even when the index proposes it (filed under the caller), it leaves no count behind."""
    mara = recall_server.client(tenant, "mara")
    sam = recall_server.client(tenant, "sam")
    secret = create_pref(sam, "gift_idea", "wants a saffron umbrella")
    until_recalled(sam, "saffron umbrella", "wants a saffron umbrella")
    inject(retrieval_server.address, tenant, [(secret, "saffron umbrella")])
    reply = recall(mara, "saffron umbrella")
    assert _shape(reply) == ([], {}, False, "")
