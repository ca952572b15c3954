"""Context for a new call, proposals and overrides through gRPC (SPEC §4, I5, I7, I12-I14;
A1, A2 via as_of, A4, A9, A10, A11, A12 for statements)."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import grpc
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2

from tests.e2e.helpers import (
    ASSISTANT,
    ASSISTANT_INFERENCE,
    PREFERENCE,
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    SCOPE_USER,
    THIRD_PARTY,
    USER_STATEMENT,
    append,
    confirm,
    correct,
    create_memory,
    create_pref,
    list_all,
    next_monday,
    now,
    ts,
)
from tests.support.servers import Client, ServerProcess

Decision = ctx_pb.ProposalDecision


def conversation() -> str:
    return f"conversations/c-{uuid.uuid4().hex[:8]}"


def propose(
    client: Client,
    evidence: list[str],
    value: str,
    key: str = "meeting_time",
    *,
    key_context: str = "",
    method: int = USER_STATEMENT,
    scope_type: int = SCOPE_USER,
    scope_id: str = "",
    request_id: str = "",
) -> ctx_pb.ProposeMemoryResponse:
    return client.context.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=memory_pb2.Memory(
                scope=memory_pb2.Scope(type=scope_type, id=scope_id),
                key=key,
                key_context=key_context,
                kind=PREFERENCE,
            ),
            value=value,
            method=method,
            evidence_messages=evidence,
            request_id=request_id,
        ),
        timeout=10,
    )


def build(client: Client, conv: str = "", **kwargs: object) -> ctx_pb.BuildContextResponse:
    return client.context.BuildContext(
        ctx_pb.BuildContextRequest(conversation=conv, **kwargs),  # type: ignore[arg-type]
        timeout=10,
    )


def values(context: ctx_pb.BuildContextResponse) -> set[str]:
    return {m.memory.applicable_revision.value for m in context.memories}


def exclusions(context: ctx_pb.BuildContextResponse) -> dict[str, int]:
    return {e.subject: e.reason for e in context.excluded}


@pytest.fixture
def mara(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "mara")


def test_context_carries_the_recent_window_oldest_first(mara: Client) -> None:
    conv = conversation()
    for n in range(13):
        append(mara, conv, f"message {n}")
    context = build(mara, conv)
    assert [m.text for m in context.recent_messages] == [f"message {n}" for n in range(3, 13)]
    assert len(build(mara, conv, window_size=3).recent_messages) == 3


def test_a1_candidate_stays_out_until_confirmed_for_work(mara: Client) -> None:
    old = conversation()
    said = append(mara, old, "I prefer morning meetings").name
    proposed = propose(mara, [said], "prefers morning meetings", key_context="work")
    assert proposed.decision == Decision.PROPOSAL_DECISION_CANDIDATE
    assert proposed.revision.provenance.transcript_message == said
    context = build(mara)
    assert "prefers morning meetings" not in values(context)
    assert exclusions(context)[proposed.revision.name] == ctx_pb.EXCLUSION_REASON_CANDIDATE
    confirm(mara, proposed.revision.name)
    context = build(mara)
    assert "prefers morning meetings" in values(context)
    entry = next(m for m in context.memories if m.memory.key_context == "work")
    assert entry.reason == ctx_pb.APPLICABILITY_REASON_USER
    assert entry.memory.applicable_revision.confirmation.user_id == "mara"


def test_a2_sunday_shows_mornings_and_monday_afternoons(mara: Client) -> None:
    morning = create_pref(mara, "meeting_time", "prefers morning meetings", key_context="work")
    monday = next_monday()
    correct(mara, morning, "prefers afternoon meetings", valid_from=monday)
    sunday = monday - dt.timedelta(hours=12)
    assert values(build(mara, as_of=ts(sunday))) == {"prefers morning meetings"}
    on_monday = build(mara, as_of=ts(monday))
    assert values(on_monday) == {"prefers afternoon meetings"}
    assert ctx_pb.EXCLUSION_REASON_SUPERSEDED in exclusions(on_monday).values()
    assert ctx_pb.EXCLUSION_REASON_NOT_YET_EFFECTIVE in exclusions(build(mara)).values()


def test_a4_an_old_transcript_cannot_bring_back_the_superseded_value(mara: Client) -> None:
    old = append(mara, conversation(), "I prefer morning meetings").name
    morning = create_pref(mara, "meeting_time", "prefers morning meetings", evidence=old)
    correct(mara, morning, "prefers afternoon meetings")
    late = propose(mara, [old], "prefers morning meetings")
    assert late.decision == Decision.PROPOSAL_DECISION_REFUSED_STALE
    assert "predates" in late.reason
    assert values(build(mara)) == {"prefers afternoon meetings"}
    inferred_again = propose(
        mara,
        [append(mara, conversation(), "mornings were nice, weren't they", ASSISTANT).name],
        "prefers morning meetings",
        method=ASSISTANT_INFERENCE,
    )
    assert inferred_again.decision == Decision.PROPOSAL_DECISION_REFUSED_STALE


def test_a11_suggestions_and_quotes_are_not_the_users_preference(mara: Client) -> None:
    conv = conversation()
    suggestion = append(mara, conv, "Shall I book your meetings in the morning?", ASSISTANT).name
    quote = append(mara, conv, "My colleague Dana only does mornings", THIRD_PARTY).name
    for evidence, method in ((suggestion, ASSISTANT_INFERENCE), (quote, USER_STATEMENT)):
        outcome = propose(mara, [evidence], "prefers morning meetings", method=method)
        assert outcome.decision == Decision.PROPOSAL_DECISION_CANDIDATE, outcome.reason
        assert outcome.revision.inferred
        assert outcome.revision.state == memory_pb2.REVISION_STATE_CANDIDATE
        assert "not the user" in outcome.reason
    assert values(build(mara)) == set()


@pytest.mark.parametrize(
    "text",
    [
        "my password is Hunter2!",
        "the API key is sk-live-abcdefghijklmnopqrstu",
        "here are my recovery codes: 8812-4410 9921-0032",
        "charge card 4111 1111 1111 1111 please",
    ],
)
def test_a12_secrets_are_refused_and_not_kept(mara: Client, text: str) -> None:
    said = append(mara, conversation(), text).name
    outcome = propose(mara, [said], text, key="login_detail")
    assert outcome.decision == Decision.PROPOSAL_DECISION_REFUSED_SECRET
    assert text not in outcome.reason
    assert not outcome.HasField("memory")
    assert list_all(mara, key="login_detail") == []


def test_proposals_are_idempotent_by_request_id(mara: Client) -> None:
    said = append(mara, conversation(), "I like tea in meetings").name
    request_id = str(uuid.uuid4())
    first = propose(mara, [said], "likes tea", key="drink", request_id=request_id)
    again = propose(mara, [said], "likes tea", key="drink", request_id=request_id)
    assert first == again
    assert len(list_all(mara, key="drink")) == 1


def test_an_explicit_correction_is_a_candidate_by_default(mara: Client) -> None:
    create_pref(mara, "meeting_time", "prefers morning meetings")
    said = append(mara, conversation(), "Actually I prefer afternoon meetings now").name
    outcome = propose(mara, [said], "prefers afternoon meetings")
    assert outcome.decision == Decision.PROPOSAL_DECISION_CANDIDATE
    assert "correction candidate" in outcome.reason
    assert outcome.revision.replaces_revision_number == 1
    assert values(build(mara)) == {"prefers morning meetings"}


def test_a9_for_now_is_an_override_from_now_on_is_customer_memory(
    memory_server: ServerProcess, tenant: str
) -> None:
    admin = memory_server.client(tenant, "ada", ["admin"])
    rep, colleague, outsider = (memory_server.client(tenant, u) for u in ("rep1", "rep2", "rep3"))
    stranger = memory_server.client(f"{tenant}-other", "rep2")
    for user in ("rep1", "rep2"):
        admin.access.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id=user, customer_id="cust-42")
        )
    order_chat, other_chat = conversation(), conversation()
    said = append(rep, order_chat, "Use blue shirts for today's order").name
    outcome = propose(
        rep, [said], "blue shirts", key="shirt_color", scope_type=SCOPE_CUSTOMER, scope_id="cust-42"
    )
    assert outcome.decision == Decision.PROPOSAL_DECISION_OVERRIDE
    assert outcome.override.name.startswith(order_chat + "/overrides/")
    assert list_all(rep, key="shirt_color") == []  # durable memory unchanged
    append(rep, other_chat, "hello")
    assert len(build(rep, order_chat).overrides) == 1
    assert len(build(rep, other_chat).overrides) == 0

    durable = create_memory(
        rep,
        "shirt_color",
        "This customer now prefers blue shirts",
        scope_type=SCOPE_CUSTOMER,
        scope_id="cust-42",
    ).memory
    assert durable.applicable_revision.state == memory_pb2.REVISION_STATE_ACTIVE
    with_override = build(
        rep, order_chat, customers=[ctx_pb.CustomerReference(customer_id="cust-42")]
    )
    label = with_override.overrides[0]
    assert (label.shadowed_memory, label.shadowed_value) == (
        durable.name,
        "This customer now prefers blue shirts",
    )
    seen = build(colleague, customers=[ctx_pb.CustomerReference(customer_id="cust-42")])
    assert [m.memory.name for m in seen.memories] == [durable.name]
    assert seen.memories[0].reason == ctx_pb.APPLICABILITY_REASON_CUSTOMER
    refused = build(outsider, customers=[ctx_pb.CustomerReference(customer_id="cust-42")])
    assert refused.memories == []
    assert refused.customers[0].status == ctx_pb.REFERENCE_STATUS_UNAUTHORIZED
    foreign = build(stranger, customers=[ctx_pb.CustomerReference(customer_id="cust-42")])
    assert foreign.memories == []


def test_a10_an_ambiguous_customer_grants_nothing(
    memory_server: ServerProcess, tenant: str
) -> None:
    admin = memory_server.client(tenant, "ada", ["admin"])
    rep = memory_server.client(tenant, "rep1")
    for customer_id, name in (("c-1", "Acme Corp"), ("c-2", "Globex"), ("c-3", "Globex")):
        admin.access.RegisterCustomer(
            access_pb.RegisterCustomerRequest(
                customer=access_pb.Customer(customer_id=customer_id, display_name=name)
            )
        )
        admin.access.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id="rep1", customer_id=customer_id)
        )
        create_memory(
            rep, "delivery", f"{name} {customer_id} wants morning delivery",
            scope_type=SCOPE_CUSTOMER, scope_id=customer_id,
        )  # fmt: skip
    context = build(
        rep,
        customers=[
            ctx_pb.CustomerReference(name="acme corp"),
            ctx_pb.CustomerReference(name="Globex"),
        ],
    )
    assert values(context) == {"Acme Corp c-1 wants morning delivery"}
    acme, globex = context.customers
    assert (acme.status, acme.customer_id) == (ctx_pb.REFERENCE_STATUS_RESOLVED, "c-1")
    assert globex.status == ctx_pb.REFERENCE_STATUS_AMBIGUOUS
    assert sorted(globex.candidate_ids) == ["c-2", "c-3"]
    assert exclusions(context)["customer 'Globex'"] == ctx_pb.EXCLUSION_REASON_AMBIGUOUS_REFERENCE


def test_i12_disagreeing_memories_are_surfaced_not_resolved(
    memory_server: ServerProcess, tenant: str
) -> None:
    admin = memory_server.client(tenant, "ada", ["admin"])
    mara = memory_server.client(tenant, "mara")
    mine = create_pref(mara, "meeting_time", "prefers morning meetings")
    company = create_memory(
        admin, "meeting_time", "meetings only after 1 pm", scope_type=SCOPE_ORG
    ).memory
    context = build(mara)
    assert values(context) == {"prefers morning meetings", "meetings only after 1 pm"}
    [conflict] = context.conflicts
    assert conflict.key == "meeting_time"
    assert set(conflict.memories) == {mine.name, company.name}


def test_i13_an_override_expires_by_itself_and_never_touches_memory(mara: Client) -> None:
    conv = conversation()
    append(mara, conv, "for this call, keep it short")
    durable = create_pref(mara, "answer_style", "detailed answers")
    made = mara.context.CreateOverride(
        ctx_pb.CreateOverrideRequest(
            parent=conv,
            override=ctx_pb.Override(
                key="answer_style", scope=memory_pb2.Scope(type=SCOPE_USER), value="short answers"
            ),
            expiry=ctx_pb.OverrideExpiry(ttl_seconds=120),
        )
    ).override
    active = build(mara, conv)
    assert [o.override.value for o in active.overrides] == ["short answers"]
    assert active.overrides[0].shadowed_value == "detailed answers"
    assert values(active) == {"detailed answers"}
    later = build(mara, conv, as_of=ts(now() + dt.timedelta(minutes=3)))
    assert later.overrides == []
    assert values(later) == {"detailed answers"}
    listed = mara.context.ListOverrides(ctx_pb.ListOverridesRequest(parent=conv)).overrides
    assert [o.name for o in listed] == [made.name]
    assert durable.applicable_revision.value == "detailed answers"


def test_a_conversation_id_grants_nothing(memory_server: ServerProcess, tenant: str) -> None:
    mara = memory_server.client(tenant, "mara")
    sam = memory_server.client(tenant, "sam")
    conv = conversation()
    append(mara, conv, "private words")
    with pytest.raises(grpc.RpcError) as error:
        build(sam, conv)
    assert error.value.code() is grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as error:
        sam.context.ListOverrides(ctx_pb.ListOverridesRequest(parent=conv))
    assert error.value.code() is grpc.StatusCode.NOT_FOUND


def test_query_without_search_is_flagged_degraded(mara: Client) -> None:
    create_pref(mara, "meeting_time", "prefers morning meetings")
    context = build(mara, query="when does she like meetings?")
    assert context.recall_degraded
    assert list(context.recalled) == []
    assert values(context) == {"prefers morning meetings"}  # known keys keep working


def test_query_recalls_within_the_contexts_scopes(
    recall_server: ServerProcess, tenant: str
) -> None:
    rep = recall_server.client(tenant, "rep1")
    admin = recall_server.client(tenant, "ada", ["admin"])
    for customer in ("c-a", "c-b"):
        admin.access.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id="rep1", customer_id=customer)
        )
        create_memory(
            rep, "packaging", f"customer {customer} wants recycled packaging",
            scope_type=SCOPE_CUSTOMER, scope_id=customer,
        )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        context = build(
            rep,
            query="what packaging do they want?",
            customers=[ctx_pb.CustomerReference(customer_id="c-a")],
        )
        recalled = {r.memory.applicable_revision.value for r in context.recalled}
        if recalled or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not context.recall_degraded
    assert recalled == {"customer c-a wants recycled packaging"}
