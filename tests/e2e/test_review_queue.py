"""The review queue through gRPC on both databases: its filters and order, conflict resolution
(one applicable revision, full history, the resolver as provenance) and who sees what."""

from __future__ import annotations

import grpc
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    FACT,
    REJECTED,
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    SUPERSEDED,
    create_memory,
    create_pref,
    error_info,
    get,
    request_id,
    revisions,
)
from tests.e2e.test_document_facts import PLAN, document_fact, report
from tests.support.servers import Client, ServerProcess

CONFLICT = memory_service_pb2.REVIEW_REASON_CONFLICT
SOURCE_CHANGED = memory_service_pb2.REVIEW_REASON_SOURCE_CHANGED
CANDIDATE = memory_service_pb2.REVIEW_REASON_CANDIDATE
IMPORT_PENDING = memory_service_pb2.REVIEW_REASON_IMPORT_PENDING
UNUSED = memory_service_pb2.REVIEW_REASON_UNUSED


def queue(client: Client, *reasons: int, page_size: int = 0, unused_days: int = 0) -> list:
    """Every item, following next_page_token to the end."""
    items: list[memory_service_pb2.ReviewItem] = []
    token = ""
    for _ in range(100):
        reply = client.memories.ListReviewItems(
            memory_service_pb2.ListReviewItemsRequest(
                reasons=list(reasons),
                page_size=page_size,
                page_token=token,
                unused_days=unused_days,
            ),
            timeout=10,
        )
        items.extend(reply.items)
        token = reply.next_page_token
        if not token:
            return items
    raise AssertionError("ListReviewItems never ended")


def subjects(items: list) -> list[tuple[int, str]]:
    return [(i.reason, i.memory.name or i.import_item) for i in items]


def resolve(
    client: Client, memory: str, kept: str, **kw: str
) -> memory_service_pb2.ResolveConflictResponse:
    return client.memories.ResolveConflict(
        memory_service_pb2.ResolveConflictRequest(memory=memory, kept_memory=kept, **kw),
        timeout=10,
    )


def org_pref(admin: Client, key: str, value: str) -> memory_pb2.Memory:
    return create_memory(admin, key, value, scope_type=SCOPE_ORG).memory


@pytest.fixture
def connector(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "docs-sync", ["document-connector"])


@pytest.fixture
def seeded(alice: Client, admin: Client, connector: Client) -> dict[str, str]:
    """One item of each kind for alice, plus an organization conflict of her meeting time."""
    admin.access.GrantCustomerAccess(
        access_pb.GrantCustomerAccessRequest(user_id="alice", customer_id="acme"), timeout=10
    )
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings")
    house = org_pref(admin, "meeting_time", "Meetings are in the afternoon")
    sourced = document_fact(alice, "alpha.owner", scope_type=SCOPE_CUSTOMER, scope_id="acme")
    report(connector, PLAN, "v2")
    guess = create_memory(
        alice, "drink", "likes tea", method=ASSISTANT_INFERENCE, speaker=ASSISTANT
    ).memory
    batch = alice.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY,
            archive=b"- prefers window seats\n",
            request_id=request_id(),
        ),
        timeout=60,
    ).batch
    item = alice.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items[0]
    return {
        "mine": mine.name,
        "house": house.name,
        "sourced": sourced.name,
        "guess": guess.name,
        "item": item.name,
    }


def test_the_queue_puts_conflicts_first_then_changed_sources_candidates_and_imports(
    alice: Client, seeded: dict[str, str]
) -> None:
    items = queue(alice)
    assert subjects(items) == [
        (CONFLICT, min(seeded["mine"], seeded["house"])),
        (SOURCE_CHANGED, seeded["sourced"]),
        (CANDIDATE, seeded["guess"]),
        (IMPORT_PENDING, seeded["item"]),
    ]
    conflict = items[0]
    assert {conflict.memory.name, conflict.other_memory.name} == {seeded["mine"], seeded["house"]}
    assert "meeting_time" in conflict.detail
    assert items[3].import_text == "prefers window seats"
    assert all(i.HasField("since") for i in items)
    # Paging one at a time walks the same order with the shared page tokens.
    assert subjects(queue(alice, page_size=1)) == subjects(items)


@pytest.mark.parametrize(
    ("reason", "key"),
    [
        (CONFLICT, "mine"),
        (SOURCE_CHANGED, "sourced"),
        (CANDIDATE, "guess"),
        (IMPORT_PENDING, "item"),
    ],
)
def test_each_filter_lists_only_its_reason(
    alice: Client, seeded: dict[str, str], reason: int, key: str
) -> None:
    items = queue(alice, reason)
    assert [i.reason for i in items] == [reason]
    found = {items[0].memory.name, items[0].other_memory.name, items[0].import_item}
    assert seeded[key] in found


def test_unused_needs_a_number_of_days_and_fresh_memories_are_not_unused(
    alice: Client, seeded: dict[str, str]
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        queue(alice, UNUSED)
    assert error_info(caught.value).fields == ["unused_days"]
    assert queue(alice, UNUSED, unused_days=1) == []
    with pytest.raises(grpc.RpcError) as caught:
        queue(alice, unused_days=3651)
    assert error_info(caught.value).fields == ["unused_days"]
    with pytest.raises(grpc.RpcError) as caught:
        queue(alice, 0)
    assert error_info(caught.value).fields == ["reasons[0]"]


def test_strangers_and_other_tenants_see_none_of_it(
    alice: Client, bob: Client, carol: Client, other_admin: Client, seeded: dict[str, str]
) -> None:
    assert queue(bob) == []  # org memory alone conflicts with nobody of his
    assert queue(carol) == []
    assert queue(other_admin) == []
    for name in (seeded["mine"], seeded["guess"]):
        with pytest.raises(grpc.RpcError) as caught:
            resolve(bob, name, seeded["house"], request_id=request_id())
        assert error_info(caught.value).code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        resolve(carol, seeded["mine"], seeded["house"], request_id=request_id())
    assert error_info(caught.value).code == grpc.StatusCode.NOT_FOUND


def test_admins_see_the_tenants_items_but_not_its_users_imports(
    admin: Client, seeded: dict[str, str]
) -> None:
    reasons = [i.reason for i in queue(admin)]
    assert reasons == [CONFLICT, SOURCE_CHANGED, CANDIDATE]  # an import is its owner's alone


def test_organization_items_reach_admins_only(alice: Client, bob: Client, admin: Client) -> None:
    org = create_memory(
        admin, "holidays", "maybe closed in August", scope_type=SCOPE_ORG,
        method=ASSISTANT_INFERENCE, speaker=ASSISTANT,
    ).memory  # fmt: skip
    assert [i.memory.name for i in queue(admin, CANDIDATE)] == [org.name]
    assert queue(alice, CANDIDATE) == queue(bob, CANDIDATE) == []


def test_a_conflict_needs_two_scopes_that_meet(alice: Client, bob: Client, admin: Client) -> None:
    create_pref(alice, "lunch", "I prefer early lunch")
    create_pref(bob, "lunch", "I prefer late lunch")  # two users never meet in one context
    org_pref(admin, "desk", "Hot desks only")
    create_pref(alice, "desk", "hot desks only")  # agrees, ignoring case
    assert queue(admin, CONFLICT) == []


def test_resolving_leaves_one_applicable_revision_full_history_and_the_resolver(
    alice: Client, admin: Client, seeded: dict[str, str]
) -> None:
    mine, house = seeded["mine"], seeded["house"]
    with pytest.raises(grpc.RpcError) as caught:  # alice may not write organization memory
        resolve(alice, house, mine, request_id=request_id())
    assert error_info(caught.value).code == grpc.StatusCode.PERMISSION_DENIED

    rid = request_id()
    reply = resolve(admin, house, mine, request_id=rid)
    assert reply.kept_memory == mine
    assert not reply.memory.HasField("applicable_revision")
    closing = reply.revision
    assert closing.state == REJECTED
    assert closing.provenance.method == memory_pb2.PROVENANCE_METHOD_REVIEW_DECISION
    assert closing.provenance.kept_memory == mine
    assert closing.author_user_id == "ada"
    assert resolve(admin, house, mine, request_id=rid) == reply  # a retry replays

    history = revisions(admin, house)
    assert [(r.revision_number, r.state) for r in history] == [(1, SUPERSEDED), (2, REJECTED)]
    assert history[0].superseded_by_revision_number == 2
    assert history[0].value == "Meetings are in the afternoon"
    applicable = [
        m.applicable_revision.value
        for m in (get(admin, house), get(admin, mine))
        if m.HasField("applicable_revision")
    ]
    assert applicable == ["I prefer morning meetings"]
    assert get(alice, mine).applicable_revision.state == ACTIVE

    assert CONFLICT not in [i.reason for i in queue(alice)]
    context = alice.context.BuildContext(ctx_pb.BuildContextRequest(), timeout=10)
    assert list(context.conflicts) == []
    with pytest.raises(grpc.RpcError) as caught:
        resolve(admin, house, mine, request_id=request_id())
    assert error_info(caught.value).reason == "NOT_IN_CONFLICT"


def test_the_subject_may_give_way_to_the_organization(
    alice: Client, seeded: dict[str, str]
) -> None:
    mine, house = seeded["mine"], seeded["house"]
    current = get(alice, mine).etag
    reply = resolve(alice, mine, house, etag=current, request_id=request_id())
    assert reply.memory.name == mine
    assert not reply.memory.HasField("applicable_revision")
    assert get(alice, house).applicable_revision.value == "Meetings are in the afternoon"
    with pytest.raises(grpc.RpcError) as caught:
        resolve(alice, mine, mine, request_id=request_id())
    assert error_info(caught.value).fields == ["kept_memory"]


def test_a_stale_etag_aborts_the_resolution(alice: Client, seeded: dict[str, str]) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        resolve(alice, seeded["mine"], seeded["house"], etag="v99", request_id=request_id())
    error = error_info(caught.value)
    assert error.code == grpc.StatusCode.ABORTED
    # the memory as it stands now, shown as every answer shows one, to re-read from
    [current] = error.unpack(memory_pb2.Memory)
    assert current.name == seeded["mine"]
    assert current.etag == error.metadata["current_etag"]
    assert current.etag == get(alice, seeded["mine"]).etag


def test_a_customer_fact_meets_a_users_memory_only_when_the_user_may_use_the_customer(
    alice: Client, bob: Client, admin: Client
) -> None:
    admin.access.GrantCustomerAccess(
        access_pb.GrantCustomerAccessRequest(user_id="alice", customer_id="globex"), timeout=10
    )
    create_memory(
        admin, "invoice_day", "Invoices go out on Fridays", scope_type=SCOPE_CUSTOMER,
        scope_id="globex", kind=FACT,
    )  # fmt: skip
    create_memory(alice, "invoice_day", "Invoices go out on Mondays", kind=FACT)
    create_memory(bob, "invoice_day", "Invoices go out on Tuesdays", kind=FACT)
    conflicts = queue(admin, CONFLICT)
    assert len(conflicts) == 1
    scopes = {conflicts[0].memory.scope.id, conflicts[0].other_memory.scope.id}
    assert scopes == {"alice", "globex"}
