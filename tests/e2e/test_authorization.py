"""Identity is server-side (I6), scope and authorization (I7), randomized isolation (A16)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import jwt
import pytest
from crmmem.memory.v1 import (
    access_service_pb2,
    access_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    transcript_service_pb2,
    transcript_service_pb2_grpc,
)

from tests.e2e.helpers import (
    ACTIVE,
    ASSISTANT,
    ASSISTANT_INFERENCE,
    CANDIDATE,
    FACT,
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    SCOPE_USER,
    USER,
    USER_STATEMENT,
    append,
    confirm,
    correct,
    create_memory,
    create_pref,
    delete,
    draft,
    error_info,
    expect_error,
    get,
    list_all,
    messages,
    missing_memory_name,
    names,
    new_conversation,
    not_found_signature,
    reject,
    revision_name,
    revisions,
    say,
)
from tests.support.servers import (
    JWT_AUDIENCE,
    JWT_ISSUER,
    TEST_JWT_SECRET,
    Client,
    ServerProcess,
    mint_token,
)

pytestmark = pytest.mark.timeout(180)

NOT_FOUND = grpc.StatusCode.NOT_FOUND
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED


# --------------------------------------------------------------------------- authentication


def _claims(tenant_id: str, /, **overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        "sub": "alice",
        "tenant": tenant_id,
        "roles": [],
        "iat": now,
        "exp": now + 3600,
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


BAD_CREDENTIALS: dict[str, Callable[[str], list[tuple[str, str]]]] = {
    "no_token": lambda tenant: [],
    "not_a_jwt": lambda tenant: [("authorization", "Bearer not.a.jwt")],
    "empty_bearer": lambda tenant: [("authorization", "Bearer ")],
    "wrong_scheme": lambda tenant: [("authorization", f"Basic {mint_token(tenant, 'alice')}")],
    "wrong_secret": lambda tenant: [
        ("authorization", f"Bearer {mint_token(tenant, 'alice', secret='another-' + 'y' * 40)}")
    ],
    "expired": lambda tenant: [
        ("authorization", f"Bearer {mint_token(tenant, 'alice', ttl_seconds=-3600)}")
    ],
    "no_tenant_claim": lambda tenant: [
        (
            "authorization",
            "Bearer " + jwt.encode(_claims(tenant, tenant=None), TEST_JWT_SECRET, "HS256"),
        )
    ],
    "empty_tenant_claim": lambda tenant: [("authorization", f"Bearer {mint_token('', 'alice')}")],
    "no_subject": lambda tenant: [
        (
            "authorization",
            "Bearer " + jwt.encode(_claims(tenant, sub=None), TEST_JWT_SECRET, "HS256"),
        )
    ],
    "wrong_audience": lambda tenant: [
        ("authorization", f"Bearer {mint_token(tenant, 'alice', aud='another-service')}")
    ],
    "wrong_issuer": lambda tenant: [
        ("authorization", f"Bearer {mint_token(tenant, 'alice', iss='someone-else')}")
    ],
    "unsigned_alg_none": lambda tenant: [
        ("authorization", "Bearer " + jwt.encode(_claims(tenant), None, algorithm="none"))
    ],
}


def _calls(channel: grpc.Channel) -> dict[str, Callable[[list[tuple[str, str]]], Any]]:
    memories = memory_service_pb2_grpc.MemoryServiceStub(channel)
    transcript = transcript_service_pb2_grpc.TranscriptServiceStub(channel)
    access = access_service_pb2_grpc.AccessServiceStub(channel)
    return {
        "GetCaller": lambda md: access.GetCaller(
            access_service_pb2.GetCallerRequest(), metadata=md, timeout=10
        ),
        "ListMemories": lambda md: memories.ListMemories(
            memory_service_pb2.ListMemoriesRequest(), metadata=md, timeout=10
        ),
        "GetMemory": lambda md: memories.GetMemory(
            memory_service_pb2.GetMemoryRequest(name=missing_memory_name()), metadata=md, timeout=10
        ),
        "AppendMessage": lambda md: transcript.AppendMessage(
            transcript_service_pb2.AppendMessageRequest(
                parent=new_conversation(),
                message=transcript_service_pb2.Message(speaker=USER, text="hello"),
            ),
            metadata=md,
            timeout=10,
        ),
    }


@pytest.mark.parametrize("credential", sorted(BAD_CREDENTIALS))
def test_bad_credentials_are_unauthenticated(
    memory_server: ServerProcess, tenant: str, credential: str
) -> None:
    channel = memory_server.channel()
    metadata = BAD_CREDENTIALS[credential](tenant)
    for call in _calls(channel).values():
        expect_error(
            lambda call=call: call(metadata), grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID"
        )
    # Nothing was written under the tenant the bad token named.
    assert list_all(memory_server.client(tenant, "alice")) == []


def test_get_caller_reads_the_token(memory_server: ServerProcess, tenant: str) -> None:
    client = memory_server.client(tenant, "ada", ["admin", "sales"])
    caller = client.access.GetCaller(access_service_pb2.GetCallerRequest(), timeout=10)
    assert caller.tenant_id == tenant
    assert caller.user_id == "ada"
    assert sorted(caller.roles) == ["admin", "sales"]


def test_identity_metadata_from_the_client_is_ignored(
    alice: Client, bob: Client, tenant: str, other_tenant: str
) -> None:
    bobs = create_pref(bob, "meeting_time", "bob-only afternoons")
    spoofed = [
        ("x-tenant-id", other_tenant),
        ("tenant", other_tenant),
        ("x-user-id", "bob"),
        ("user", "bob"),
        ("x-roles", "admin"),
        ("roles", "admin"),
    ]
    caller = alice.access.GetCaller(
        access_service_pb2.GetCallerRequest(), metadata=spoofed, timeout=10
    )
    assert (caller.tenant_id, caller.user_id, list(caller.roles)) == (tenant, "alice", [])
    listed = alice.memories.ListMemories(
        memory_service_pb2.ListMemoriesRequest(), metadata=spoofed, timeout=10
    )
    assert list(listed.memories) == []
    expect_error(
        lambda: alice.memories.GetMemory(
            memory_service_pb2.GetMemoryRequest(name=bobs.name), metadata=spoofed, timeout=10
        ),
        NOT_FOUND,
        "NOT_FOUND",
    )
    # Roles claimed in metadata grant nothing either.
    expect_error(
        lambda: alice.access.GrantCustomerAccess(
            access_service_pb2.GrantCustomerAccessRequest(user_id="alice", customer_id="c1"),
            metadata=spoofed,
            timeout=10,
        ),
        PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )


# --------------------------------------------------------------------------- by-name probes


def _probes(attacker: Client, etag: str) -> dict[str, Callable[[str], Callable[[], Any]]]:
    """Each by-name RPC, as a function of the memory name, run by `attacker`."""
    evidence = say(attacker, None, "I want to change this")
    return {
        "get": lambda name: lambda: get(attacker, name),
        "list_revisions": lambda name: lambda: revisions(attacker, name),
        "correct": lambda name: (
            lambda: attacker.memories.CorrectMemory(
                memory_service_pb2.CorrectMemoryRequest(
                    name=name,
                    etag=etag,
                    revision=draft("hijacked value", evidence),
                ),
                timeout=10,
            )
        ),
        "delete": lambda name: lambda: delete(attacker, name),
        "confirm": lambda name: lambda: confirm(attacker, revision_name(name, 1)),
        "reject": lambda name: lambda: reject(attacker, revision_name(name, 1)),
    }


def assert_invisible(attacker: Client, memory_name: str, etag: str, rpcs: Any = None) -> None:
    """Every by-name call on `memory_name` fails exactly like one on a missing memory."""
    probes = _probes(attacker, etag)
    for rpc in rpcs or probes:
        make = probes[rpc]
        missing = missing_memory_name()
        foreign = not_found_signature(make(memory_name), memory_name)
        absent = not_found_signature(make(missing), missing)
        assert foreign == absent, (rpc, foreign, absent)


def test_other_users_and_tenants_see_nothing_by_name(
    alice: Client, bob: Client, carol: Client, alice_elsewhere: Client, other_admin: Client
) -> None:
    memory = create_pref(alice, "meeting_time", "alice secret mornings")
    suggestion = say(alice, None, "Would you like evening meetings?", ASSISTANT)
    memory = correct(
        alice, memory, "alice secret evenings", evidence=suggestion, method=ASSISTANT_INFERENCE
    ).memory
    for attacker in (bob, carol, alice_elsewhere, other_admin):
        assert_invisible(attacker, memory.name, memory.etag)
        assert "secret" not in str(list_all(attacker, show_deleted=True))
    # Nothing changed.
    after = get(alice, memory.name)
    assert after.etag == memory.etag
    assert [r.value for r in revisions(alice, memory.name)] == [
        "alice secret mornings",
        "alice secret evenings",
    ]


def test_user_scope_for_another_user_is_refused(alice: Client, bob: Client) -> None:
    expect_error(
        lambda: create_pref(alice, "meeting_time", "bob likes mornings", scope_id="bob"),
        [PERMISSION_DENIED, NOT_FOUND],
    )
    assert list_all(bob) == []
    assert list_all(alice) == []


def test_list_filtered_on_another_users_scope_shows_nothing(alice: Client, bob: Client) -> None:
    create_pref(bob, "meeting_time", "bob mornings")
    outcome: Any
    try:
        outcome = list_all(alice, scope_type=SCOPE_USER, scope_id="bob")
    except grpc.RpcError as err:
        outcome = error_info(err).code
    assert outcome in ([], PERMISSION_DENIED, NOT_FOUND), outcome


def test_conversation_ids_are_per_tenant(alice: Client, alice_elsewhere: Client) -> None:
    conversation = new_conversation()
    append(alice, conversation, "alice private words", USER)
    # The same conversation id in another tenant is another conversation.
    theirs = append(alice_elsewhere, conversation, "other tenant words", USER)
    assert [m.text for m in messages(alice_elsewhere, conversation)] == ["other tenant words"]
    assert [m.text for m in messages(alice, conversation)] == ["alice private words"]
    expect_error(
        lambda: create_pref(alice, "meeting_time", "x", evidence=theirs.name),
        grpc.StatusCode.INVALID_ARGUMENT,
        "EVIDENCE_NOT_FOUND",
    )


# --------------------------------------------------------------------------- admins


def test_admin_reviews_and_deletes_user_memories_of_their_tenant_only(
    admin: Client, alice: Client, bob: Client, carol: Client
) -> None:
    conversation = new_conversation()
    alices = create_pref(alice, "meeting_time", "alice mornings", conversation=conversation)
    bobs = create_pref(bob, "meeting_time", "bob afternoons")
    carols = create_pref(carol, "meeting_time", "carol evenings")

    assert get(admin, alices.name).applicable_revision.value == "alice mornings"
    assert get(admin, bobs.name).applicable_revision.value == "bob afternoons"
    assert [r.value for r in revisions(admin, alices.name)] == ["alice mornings"]
    assert names(list_all(admin, scope_type=SCOPE_USER, scope_id="alice")) == [alices.name]
    assert names(list_all(admin, scope_type=SCOPE_USER)) == [alices.name, bobs.name]
    assert "carol" not in str(list_all(admin, show_deleted=True))
    assert_invisible(admin, carols.name, carols.etag)

    # Admins can read transcripts for review.
    assert [m.text for m in messages(admin, conversation)] == ["alice mornings"]

    deleted = delete(admin, alices.name)
    assert deleted.memory.HasField("delete_time")
    expect_error(lambda: get(alice, alices.name), NOT_FOUND, "NOT_FOUND")
    assert names(list_all(alice)) == []
    assert get(bob, bobs.name).applicable_revision.value == "bob afternoons"
    assert get(carol, carols.name).applicable_revision.value == "carol evenings"


def test_admin_may_not_write_or_confirm_for_a_user(admin: Client, alice: Client) -> None:
    memory = create_pref(alice, "meeting_time", "mornings")
    expect_error(
        lambda: correct(admin, memory, "admin says afternoons"),
        PERMISSION_DENIED,
        "WRITE_NOT_ALLOWED",
    )
    suggestion = say(alice, None, "Shall I book afternoons?", ASSISTANT)
    candidate = correct(
        alice, memory, "afternoons", evidence=suggestion, method=ASSISTANT_INFERENCE
    ).revision
    expect_error(
        lambda: confirm(admin, candidate.name),
        [grpc.StatusCode.FAILED_PRECONDITION, PERMISSION_DENIED],
        ["SUBJECT_CONFIRMATION_REQUIRED", "WRITE_NOT_ALLOWED"],
    )
    history = revisions(alice, memory.name)
    assert [r.state for r in history] == [ACTIVE, CANDIDATE]
    assert get(alice, memory.name).applicable_revision.value == "mornings"


def test_page_tokens_carry_no_authority(
    alice: Client, bob: Client, carol: Client, alice_elsewhere: Client
) -> None:
    conversation = new_conversation()
    mine = [
        create_pref(alice, f"note_{i}", f"alice private note {i}", conversation=conversation).name
        for i in range(4)
    ]
    first = alice.memories.ListMemories(
        memory_service_pb2.ListMemoriesRequest(page_size=1), timeout=10
    )
    assert first.next_page_token
    assert names(first.memories) == mine[:1]
    for other in (bob, carol, alice_elsewhere):
        outcome: Any
        try:
            outcome = other.memories.ListMemories(
                memory_service_pb2.ListMemoriesRequest(
                    page_size=10, page_token=first.next_page_token
                ),
                timeout=10,
            )
        except grpc.RpcError as err:
            outcome = error_info(err)
        if isinstance(outcome, memory_service_pb2.ListMemoriesResponse):
            assert list(outcome.memories) == [], other.user
        else:
            assert outcome.code == grpc.StatusCode.INVALID_ARGUMENT, outcome
        assert "alice private" not in str(outcome)


# --------------------------------------------------------------------------- customers


def _grant(admin: Client, user: str, customer: str) -> access_service_pb2.CustomerGrant:
    return admin.access.GrantCustomerAccess(
        access_service_pb2.GrantCustomerAccessRequest(user_id=user, customer_id=customer),
        timeout=10,
    ).grant


def _revoke(admin: Client, user: str, customer: str) -> bool:
    return admin.access.RevokeCustomerAccess(
        access_service_pb2.RevokeCustomerAccessRequest(
            name=f"users/{user}/customerGrants/{customer}"
        ),
        timeout=10,
    ).revoked


def _grants(client: Client, user_id: str = "") -> list[tuple[str, str]]:
    reply = client.access.ListCustomerGrants(
        access_service_pb2.ListCustomerGrantsRequest(user_id=user_id), timeout=10
    )
    return sorted((g.user_id, g.customer_id) for g in reply.grants)


def test_customer_memory_needs_a_grant(
    admin: Client,
    alice: Client,
    bob: Client,
    other_admin: Client,
    carol: Client,
) -> None:
    customer = "cust-42"
    grant = _grant(admin, "alice", customer)
    assert grant.name == f"users/alice/customerGrants/{customer}"
    assert (grant.user_id, grant.customer_id, grant.granted_by_user_id) == (
        "alice",
        customer,
        "ada",
    )
    assert grant.HasField("create_time")
    assert _grant(admin, "alice", customer) == grant, "granting twice returns the existing grant"

    created = create_memory(
        alice,
        "shirt_color",
        "This customer now prefers blue shirts",
        scope_type=SCOPE_CUSTOMER,
        scope_id=customer,
    )
    memory = created.memory
    assert (memory.scope.type, memory.scope.id) == (SCOPE_CUSTOMER, customer)
    assert created.revision.state == ACTIVE
    assert names(list_all(alice, scope_type=SCOPE_CUSTOMER, scope_id=customer)) == [memory.name]
    assert names(list_all(alice)) == [memory.name]

    # Bob has no grant: the customer's memory does not exist for him.
    assert_invisible(bob, memory.name, memory.etag, ["get", "list_revisions", "correct", "delete"])
    assert list_all(bob) == []
    expect_error(
        lambda: create_pref(bob, "shirt_size", "L", scope_type=SCOPE_CUSTOMER, scope_id=customer),
        [PERMISSION_DENIED, NOT_FOUND],
    )

    # With a grant he sees it and may correct it.
    _grant(admin, "bob", customer)
    assert (
        get(bob, memory.name).applicable_revision.value == "This customer now prefers blue shirts"
    )
    assert names(list_all(bob)) == [memory.name]
    corrected = correct(bob, memory, "Prefers navy shirts")
    assert corrected.revision.author_user_id == "bob"
    assert get(alice, memory.name).applicable_revision.value == "Prefers navy shirts"

    # Grants: admins list all, users their own.
    assert _grants(admin) == [("alice", customer), ("bob", customer)]
    assert _grants(admin, "bob") == [("bob", customer)]
    assert _grants(alice) == [("alice", customer)]
    expect_error(lambda: _grants(alice, "bob"), PERMISSION_DENIED)

    # Revoked: gone again.
    assert _revoke(admin, "bob", customer) is True
    assert _revoke(admin, "bob", customer) is False
    expect_error(lambda: get(bob, memory.name), NOT_FOUND, "NOT_FOUND")
    assert list_all(bob) == []

    # Another tenant's grant for the same customer id reaches nothing here.
    _grant(other_admin, "carol", customer)
    assert_invisible(carol, memory.name, corrected.memory.etag, ["get", "list_revisions"])
    assert list_all(carol) == []


def test_only_admins_manage_grants(alice: Client) -> None:
    expect_error(lambda: _grant(alice, "alice", "cust-1"), PERMISSION_DENIED, "ROLE_REQUIRED")
    expect_error(lambda: _revoke(alice, "alice", "cust-1"), PERMISSION_DENIED, "ROLE_REQUIRED")
    assert _grants(alice) == []


# --------------------------------------------------------------------------- organization


def test_organization_memory_is_read_by_the_tenant_and_written_by_admins(
    admin: Client, alice: Client, bob: Client, carol: Client
) -> None:
    created = create_memory(
        admin,
        "holiday_policy",
        "The office is closed on December 24",
        scope_type=SCOPE_ORG,
        kind=FACT,
    )
    memory = created.memory
    assert memory.scope.type == SCOPE_ORG
    assert memory.scope.id == ""

    for reader in (alice, bob, admin):
        assert get(reader, memory.name).applicable_revision.value == (
            "The office is closed on December 24"
        )
        assert names(list_all(reader, scope_type=SCOPE_ORG)) == [memory.name]
        assert memory.name in names(list_all(reader))

    # Non-admins may not write it.
    expect_error(
        lambda: create_pref(alice, "dress_code", "casual", scope_type=SCOPE_ORG),
        PERMISSION_DENIED,
        ["WRITE_NOT_ALLOWED", "ROLE_REQUIRED"],
    )
    expect_error(
        lambda: correct(alice, memory, "The office is open on December 24"),
        PERMISSION_DENIED,
        ["WRITE_NOT_ALLOWED", "ROLE_REQUIRED"],
    )
    expect_error(
        lambda: delete(alice, memory.name),
        PERMISSION_DENIED,
        ["WRITE_NOT_ALLOWED", "ROLE_REQUIRED"],
    )
    assert len(revisions(admin, memory.name)) == 1
    assert get(bob, memory.name).etag == memory.etag

    # Another tenant sees nothing.
    assert_invisible(carol, memory.name, memory.etag)
    assert list_all(carol) == []

    # The admin may correct it.
    corrected = correct(admin, memory, "The office closes at noon on December 24")
    assert get(alice, memory.name).applicable_revision.value == corrected.revision.value


# --------------------------------------------------------------------------- A16


@dataclass
class Actor:
    client: Client
    tenant: int
    conversation: str = field(default_factory=new_conversation)
    live: dict[str, str] = field(default_factory=dict)  # name -> applicable value ("" = none)
    etags: dict[str, str] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)  # name -> candidate revision name
    deleted: set[str] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)


@pytest.mark.parametrize("seed", [7, 1234, 99991])
def test_a16_randomized_isolation(
    seed: int, alice: Client, bob: Client, carol: Client, admin: Client
) -> None:
    rng = random.Random(seed)
    actors = {"A": Actor(alice, 1), "B": Actor(bob, 1), "C": Actor(carol, 2)}
    org_token = f"org-{seed}-{rng.getrandbits(32):08x}"
    org = create_memory(admin, "org_policy", f"policy {org_token}", scope_type=SCOPE_ORG).memory
    counter = 0

    def foreign_tokens(me: str) -> set[str]:
        out = {t for k, a in actors.items() if k != me for t in a.tokens}
        if actors[me].tenant != 1:
            out.add(org_token)
        return out

    def check_clean(me: str, reply: Any) -> None:
        text = str(reply)
        leaked = [t for t in foreign_tokens(me) if t in text]
        assert not leaked, (me, leaked, text[:2000])

    def expected_visible(me: str) -> set[str]:
        own = set(actors[me].live)
        return own | {org.name} if actors[me].tenant == 1 else own

    for step in range(60):
        me = rng.choice("ABC")
        actor = actors[me]
        op = rng.choices(
            ["create", "correct", "get", "list", "delete", "confirm", "attack"],
            weights=[25, 15, 10, 10, 8, 7, 25],
        )[0]
        where = f"seed={seed} step={step} {me} {op}"

        if op == "create" or (op in ("correct", "get", "delete") and not actor.live):
            counter += 1
            token = f"{me}-{seed}-{counter}-{rng.getrandbits(32):08x}"
            actor.tokens.add(token)
            inferred = rng.random() < 0.3
            evidence = say(
                actor.client, actor.conversation, f"value {token}", ASSISTANT if inferred else USER
            )
            reply = create_memory(
                actor.client,
                f"k{counter}",
                f"value {token}",
                evidence=evidence,
                method=ASSISTANT_INFERENCE if inferred else USER_STATEMENT,
            )
            check_clean(me, reply)
            name = reply.memory.name
            actor.live[name] = "" if inferred else f"value {token}"
            actor.etags[name] = reply.memory.etag
            if inferred:
                actor.pending[name] = reply.revision.name
        elif op == "correct":
            choices = sorted(n for n in actor.live if n not in actor.pending)
            if not choices:
                continue
            name = rng.choice(choices)
            counter += 1
            token = f"{me}-{seed}-{counter}-{rng.getrandbits(32):08x}"
            actor.tokens.add(token)
            evidence = say(actor.client, actor.conversation, f"value {token}")
            reply = correct(
                actor.client,
                get(actor.client, name),
                f"value {token}",
                evidence=evidence,
            )
            check_clean(me, reply)
            actor.live[name] = f"value {token}"
            actor.etags[name] = reply.memory.etag
        elif op == "get":
            name = rng.choice(sorted(actor.live))
            memory = get(actor.client, name)
            check_clean(me, memory)
            assert memory.applicable_revision.value == actor.live[name], where
        elif op == "list":
            listed = list_all(actor.client, page_size=rng.choice([0, 1, 2, 5]))
            check_clean(me, listed)
            assert set(names(listed)) == expected_visible(me), where
            assert len(listed) == len(set(names(listed))), where
        elif op == "delete":
            name = rng.choice(sorted(actor.live))
            reply = delete(actor.client, name)
            check_clean(me, reply)
            del actor.live[name]
            actor.pending.pop(name, None)
            actor.deleted.add(name)
        elif op == "confirm":
            if not actor.pending:
                continue
            name = rng.choice(sorted(actor.pending))
            reply = confirm(actor.client, actor.pending.pop(name))
            check_clean(me, reply)
            actor.live[name] = reply.revision.value
            actor.etags[name] = reply.memory.etag
        else:  # attack someone else's memory by name
            victims = [
                (k, n, a.etags.get(n, ""))
                for k, a in actors.items()
                if k != me
                for n in sorted(set(a.live) | a.deleted)
            ]
            if not victims:
                continue
            _, name, etag = rng.choice(victims)
            rpc = rng.choice(["get", "list_revisions", "correct", "delete", "confirm", "reject"])
            assert_invisible(actor.client, name, etag or "W/0", [rpc])

    # Every list, at the end, shows exactly what each may see.
    for me, actor in actors.items():
        listed = list_all(actor.client)
        check_clean(me, listed)
        assert set(names(listed)) == expected_visible(me), me
        for name, value in actor.live.items():
            assert get(actor.client, name).applicable_revision.value == value

    # The tenant's admin sees A's and B's memories, never C's.
    for_admin = list_all(admin, scope_type=SCOPE_USER)
    assert set(names(for_admin)) == set(actors["A"].live) | set(actors["B"].live)
    assert not any(t in str(for_admin) for t in actors["C"].tokens)
    for name in list(actors["A"].live) + list(actors["B"].live):
        get(admin, name)
    for name, etag in actors["C"].etags.items():
        assert_invisible(admin, name, etag, ["get", "list_revisions"])
