"""Conversation ids are per user: appending first to an id takes nothing from anybody, a foreign
id answers like a fresh one, and evidence keeps resolving for its owner and for admins."""

from __future__ import annotations

import uuid

import grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2

from tests.e2e.helpers import (
    SCOPE_ORG,
    SCOPE_USER,
    append,
    create_memory,
    create_pref,
    expect_error,
    get,
    messages,
)
from tests.support.servers import Client, ServerProcess


def _id() -> str:
    return f"conversations/call-{uuid.uuid4().hex[:8]}"


def _shape(message: object) -> tuple[object, ...]:
    """What an append answers, without what differs between any two appends."""
    assert hasattr(message, "sequence")
    return (message.sequence, message.author_user_id, message.status)  # type: ignore[attr-defined]


def _users(server: ServerProcess, tenant: str) -> tuple[Client, Client, Client]:
    return (
        server.client(tenant, "alice"),
        server.client(tenant, "bob"),
        server.client(tenant, "ada", ["admin"]),
    )


def test_appending_first_to_an_id_does_not_lock_its_owner_out(
    memory_server: ServerProcess, tenant: str
) -> None:
    alice, bob, _ = _users(memory_server, tenant)
    conversation = _id()
    append(bob, conversation, "squatting on alice's call id")
    mine = append(alice, conversation, "notes of my call")
    assert mine.sequence == 1
    assert mine.name.startswith(f"{conversation}/messages/")
    assert [m.text for m in messages(alice, conversation)] == ["notes of my call"]
    assert [m.text for m in messages(bob, conversation)] == ["squatting on alice's call id"]


def test_a_foreign_id_answers_like_a_fresh_one(memory_server: ServerProcess, tenant: str) -> None:
    alice, bob, _ = _users(memory_server, tenant)
    used = _id()
    append(alice, used, "alice's call")
    append(alice, used, "alice's call, second message")
    foreign = append(bob, used, "hello")
    fresh = append(bob, _id(), "hello")
    assert _shape(foreign) == _shape(fresh) == (1, "bob", fresh.status)


def test_context_and_overrides_stay_with_the_owner_of_the_id(
    memory_server: ServerProcess, tenant: str
) -> None:
    alice, bob, _ = _users(memory_server, tenant)
    conversation = _id()
    append(alice, conversation, "alice speaking")
    append(bob, conversation, "bob speaking")
    bob.context.CreateOverride(
        ctx_pb.CreateOverrideRequest(
            parent=conversation,
            override=ctx_pb.Override(
                key="answer_style", scope=memory_pb2.Scope(type=SCOPE_USER), value="bob's way"
            ),
            expiry=ctx_pb.OverrideExpiry(ttl_seconds=600),
        ),
        timeout=10,
    )
    context = alice.context.BuildContext(
        ctx_pb.BuildContextRequest(conversation=conversation), timeout=10
    )
    assert [m.text for m in context.recent_messages] == ["alice speaking"]
    assert list(context.overrides) == []
    listed = alice.context.ListOverrides(ctx_pb.ListOverridesRequest(parent=conversation))
    assert list(listed.overrides) == []


def test_evidence_resolves_for_its_owner_and_admins_when_ids_collide(
    memory_server: ServerProcess, tenant: str
) -> None:
    alice, bob, admin = _users(memory_server, tenant)
    conversation = _id()
    alices = append(alice, conversation, "I prefer morning meetings").name
    bobs = append(bob, conversation, "I prefer afternoon meetings").name
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings", evidence=alices)
    his = create_pref(bob, "meeting_time", "I prefer afternoon meetings", evidence=bobs)
    assert get(admin, mine.name).applicable_revision.provenance.transcript_message == alices
    assert get(admin, his.name).applicable_revision.provenance.transcript_message == bobs
    # An admin may cite either user's message (organization memory rests on it).
    for evidence, key in ((alices, "mornings"), (bobs, "afternoons")):
        made = create_memory(admin, key, "noted", scope_type=SCOPE_ORG, evidence=evidence)
        assert made.revision.provenance.transcript_message == evidence
    # Nobody else may cite them, and a message named under another conversation id is no evidence.
    expect_error(
        lambda: create_pref(bob, "lunch", "x", evidence=alices),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )
    renamed = alices.replace(conversation, _id())
    expect_error(
        lambda: create_pref(alice, "lunch", "x", evidence=renamed),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )


def test_admins_review_a_transcript_by_its_id_unless_several_users_share_it(
    memory_server: ServerProcess, tenant: str
) -> None:
    alice, bob, admin = _users(memory_server, tenant)
    only_alice = _id()
    append(alice, only_alice, "alice alone")
    assert [m.text for m in messages(admin, only_alice)] == ["alice alone"]
    shared = _id()
    append(alice, shared, "alice here")
    append(bob, shared, "bob here")
    expect_error(lambda: messages(admin, shared), grpc.StatusCode.INVALID_ARGUMENT, field="parent")
    expect_error(lambda: messages(alice, _id()), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")


def test_an_admin_reads_a_users_transcript_but_never_acts_in_it(
    memory_server: ServerProcess, tenant: str
) -> None:
    """Reading evidence is owner-or-admin; acting in a conversation is owner-only, so an admin
    who may read alice's call can neither write into it nor speak in alice's voice."""
    alice, _, admin = _users(memory_server, tenant)
    conversation = _id()
    said = append(alice, conversation, "I prefer morning meetings").name
    assert [m.text for m in messages(admin, conversation)] == ["I prefer morning meetings"]
    expect_error(
        lambda: admin.context.BuildContext(
            ctx_pb.BuildContextRequest(conversation=conversation), timeout=10
        ),
        grpc.StatusCode.NOT_FOUND,
        "NOT_FOUND",
    )
    expect_error(
        lambda: admin.context.CreateOverride(
            ctx_pb.CreateOverrideRequest(
                parent=conversation,
                override=ctx_pb.Override(
                    key="answer_style", scope=memory_pb2.Scope(type=SCOPE_USER), value="short"
                ),
                expiry=ctx_pb.OverrideExpiry(ttl_seconds=600),
            ),
            timeout=10,
        ),
        grpc.StatusCode.NOT_FOUND,
        "NOT_FOUND",
    )
    # Appending under that id writes the admin's own conversation, never alice's.
    assert append(admin, conversation, "I prefer evening meetings").author_user_id == "ada"
    assert [m.text for m in messages(alice, conversation)] == ["I prefer morning meetings"]
    # Alice's words cited for the admin's own memory are somebody else's: a candidate only.
    made = create_memory(admin, "meeting_time", "I prefer morning meetings", evidence=said)
    assert made.revision.state == memory_pb2.REVISION_STATE_CANDIDATE
    assert made.revision.status_reason == "somebody else's words are not the subject's"
