"""No flooding: every repeated request field has a bound, BuildContext checks customer grants in
one query, and nobody can bury a caller's own task override under overrides of their own."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2

from tests.e2e.helpers import SCOPE_CUSTOMER, SCOPE_USER, create_memory, expect_invalid
from tests.support.servers import Client, ServerProcess

MAX_CUSTOMERS = 100
RESOLVED = ctx_pb.REFERENCE_STATUS_RESOLVED
UNAUTHORIZED = ctx_pb.REFERENCE_STATUS_UNAUTHORIZED


def _context(client: Client, **kwargs: object) -> ctx_pb.BuildContextResponse:
    return client.context.BuildContext(
        ctx_pb.BuildContextRequest(**kwargs),  # type: ignore[arg-type]
        timeout=30,
    )


def _ids(count: int) -> list[ctx_pb.CustomerReference]:
    return [ctx_pb.CustomerReference(customer_id=f"cust-{n}") for n in range(count)]


def test_build_context_refuses_an_unbounded_customer_list_at_once(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    started = time.monotonic()
    expect_invalid(lambda: _context(mara, customers=_ids(40_000)), "customers")
    assert time.monotonic() - started < 5
    expect_invalid(lambda: _context(mara, customers=_ids(MAX_CUSTOMERS + 1)), "customers")


def test_build_context_at_the_bound_resolves_every_reference(
    memory_server: ServerProcess, tenant: str
) -> None:
    admin = memory_server.client(tenant, "ada", ["admin"])
    mara = memory_server.client(tenant, "mara")
    for customer in ("cust-3", "cust-97"):
        admin.access.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id="mara", customer_id=customer), timeout=10
        )
    create_memory(
        mara, "payment_terms", "pays by wire", scope_type=SCOPE_CUSTOMER, scope_id="cust-97"
    )
    context = _context(mara, customers=_ids(MAX_CUSTOMERS))
    statuses = {r.reference.customer_id: r.status for r in context.customers}
    assert len(statuses) == MAX_CUSTOMERS
    assert {c for c, s in statuses.items() if s == RESOLVED} == {"cust-3", "cust-97"}
    assert {s for c, s in statuses.items() if c not in ("cust-3", "cust-97")} == {UNAUTHORIZED}
    assert [m.memory.applicable_revision.value for m in context.memories] == ["pays by wire"]


def _override(client: Client, parent: str, value: str) -> ctx_pb.Override:
    return client.context.CreateOverride(
        ctx_pb.CreateOverrideRequest(
            parent=parent,
            override=ctx_pb.Override(
                key="answer_style", scope=memory_pb2.Scope(type=SCOPE_USER), value=value
            ),
            expiry=ctx_pb.OverrideExpiry(ttl_seconds=3600),
        ),
        timeout=30,
    ).override


def test_a_flood_of_foreign_task_overrides_does_not_hide_the_callers_own(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    sam = memory_server.client(tenant, "sam")
    task = f"tasks/t-{uuid.uuid4().hex[:8]}"
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: _override(sam, task, f"sam {n}"), range(1_001)))
    time.sleep(0.01)
    mine = _override(mara, task, "mara's way")  # ids sort by age: hers comes after all of his
    context = _context(mara, task=task)
    assert [o.override.value for o in context.overrides] == ["mara's way"]
    for page_size in (1, 0):
        listed = mara.context.ListOverrides(
            ctx_pb.ListOverridesRequest(parent=task, page_size=page_size), timeout=30
        )
        assert [o.name for o in listed.overrides] == [mine.name]
        assert listed.next_page_token == ""


def test_proposals_keep_their_evidence_bound(memory_server: ServerProcess, tenant: str) -> None:
    mara = memory_server.client(tenant, "mara")
    request = ctx_pb.ProposeMemoryRequest(
        memory=memory_pb2.Memory(
            scope=memory_pb2.Scope(type=SCOPE_USER), key="k", kind=memory_pb2.MEMORY_KIND_FACT
        ),
        value="v",
        method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
        evidence_messages=[f"conversations/c/messages/{uuid.uuid4().hex}" for _ in range(21)],
    )
    expect_invalid(lambda: mara.context.ProposeMemory(request, timeout=10), "evidence_messages")
