"""Get, List and Delete for overrides, customers, grants and messages (AIP-131/132/135), under
the same rules as the methods that create them: whoever may not see a resource gets NOT_FOUND
exactly as for a name that does not exist, whether they are another user or another tenant."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb

from tests.e2e.helpers import (
    append,
    expect_error,
    new_conversation,
    not_found_signature,
    request_id,
)
from tests.support.servers import Client

pytestmark = pytest.mark.timeout(120)

USER_SCOPE = memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER)


def hidden_like_missing(
    callers: list[Client], call: Callable[[Client, str], Any], name: str, missing: str
) -> None:
    """Each caller gets the NOT_FOUND a missing name gets, and nothing else."""
    for caller in callers:
        seen = not_found_signature(lambda c=caller: call(c, name), name)
        assert seen == not_found_signature(lambda c=caller: call(c, missing), missing)


# --------------------------------------------------------------------------- overrides


def create_override(client: Client, parent: str, value: str = "blue shirts") -> ctx_pb.Override:
    return client.context.CreateOverride(
        ctx_pb.CreateOverrideRequest(
            parent=parent,
            override=ctx_pb.Override(key="shirt_color", scope=USER_SCOPE, value=value),
            expiry=ctx_pb.OverrideExpiry(ttl_seconds=3600),
            request_id=request_id(),
        ),
        timeout=10,
    ).override


def get_override(client: Client, name: str) -> ctx_pb.Override:
    return client.context.GetOverride(ctx_pb.GetOverrideRequest(name=name), timeout=10).override


def delete_override(client: Client, name: str, rid: str = "") -> ctx_pb.DeleteOverrideResponse:
    return client.context.DeleteOverride(
        ctx_pb.DeleteOverrideRequest(name=name, request_id=rid), timeout=10
    )


def listed_overrides(client: Client, parent: str) -> list[str]:
    reply = client.context.ListOverrides(ctx_pb.ListOverridesRequest(parent=parent), timeout=10)
    return [o.name for o in reply.overrides]


def test_override_get_and_delete_follow_the_conversation_owner(
    alice: Client, bob: Client, admin: Client, carol: Client
) -> None:
    conversation = new_conversation()
    append(alice, conversation, "blue shirts for today's order")
    override = create_override(alice, conversation)
    assert get_override(alice, override.name) == override

    # Bob uses the same conversation id for his own call: that grants nothing.
    append(bob, conversation, "hello")
    missing = f"{conversation}/overrides/{uuid.uuid4().hex}"
    hidden_like_missing([bob, admin, carol], get_override, override.name, missing)
    hidden_like_missing([bob, admin, carol], delete_override, override.name, missing)
    assert get_override(alice, override.name) == override

    rid = request_id()
    deleted = delete_override(alice, override.name, rid)
    assert deleted.override == override
    assert delete_override(alice, override.name, rid) == deleted, "a replay answers the same"
    assert listed_overrides(alice, conversation) == []
    assert not_found_signature(
        lambda: get_override(alice, override.name), override.name
    ) == not_found_signature(lambda: get_override(alice, missing), missing)
    expect_error(
        lambda: delete_override(alice, override.name), grpc.StatusCode.NOT_FOUND, "NOT_FOUND"
    )


def test_task_overrides_are_their_authors_and_the_admins(
    alice: Client, bob: Client, admin: Client, other_admin: Client
) -> None:
    task = f"tasks/t-{uuid.uuid4().hex[:12]}"
    override = create_override(alice, task)
    assert get_override(admin, override.name) == override
    missing = f"{task}/overrides/{uuid.uuid4().hex}"
    hidden_like_missing([bob, other_admin], get_override, override.name, missing)
    hidden_like_missing([bob, other_admin], delete_override, override.name, missing)

    # The name must be the override's own: the same id under another parent is missing.
    elsewhere = override.name.replace(task, f"{task}-x")
    hidden_like_missing([alice], get_override, elsewhere, missing)

    assert delete_override(admin, override.name).override == override
    assert listed_overrides(alice, task) == []


def test_racing_deletes_of_one_override_delete_it_once(alice: Client, alice_phone: Client) -> None:
    override = create_override(alice, f"tasks/t-{uuid.uuid4().hex[:12]}")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def run(client: Client) -> None:
        barrier.wait()
        try:
            delete_override(client, override.name, request_id())
            outcomes.append("deleted")
        except grpc.RpcError as error:
            outcomes.append(error.code().name)

    threads = [threading.Thread(target=run, args=(c,)) for c in (alice, alice_phone)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["NOT_FOUND", "deleted"]


def test_override_names_are_validated(alice: Client) -> None:
    for name in ("overrides/x", "tasks/t/overrides/", "conversations//overrides/x", "x" * 300):
        expect_error(
            lambda n=name: get_override(alice, n),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
            field="name",
        )


# --------------------------------------------------------------------------- customers


def register(admin: Client, customer_id: str, display_name: str) -> access_pb.Customer:
    return admin.access.RegisterCustomer(
        access_pb.RegisterCustomerRequest(
            customer=access_pb.Customer(customer_id=customer_id, display_name=display_name),
            request_id=request_id(),
        ),
        timeout=10,
    ).customer


def grant(admin: Client, user_id: str, customer_id: str) -> access_pb.CustomerGrant:
    return admin.access.GrantCustomerAccess(
        access_pb.GrantCustomerAccessRequest(
            user_id=user_id, customer_id=customer_id, request_id=request_id()
        ),
        timeout=10,
    ).grant


def get_customer(client: Client, name: str) -> access_pb.Customer:
    return client.access.GetCustomer(access_pb.GetCustomerRequest(name=name), timeout=10).customer


def delete_customer(client: Client, name: str) -> access_pb.DeleteCustomerResponse:
    return client.access.DeleteCustomer(
        access_pb.DeleteCustomerRequest(name=name, request_id=request_id()), timeout=10
    )


def listed_customers(client: Client, page_size: int = 0) -> list[str]:
    names: list[str] = []
    token = ""
    while True:
        reply = client.access.ListCustomers(
            access_pb.ListCustomersRequest(page_size=page_size, page_token=token), timeout=10
        )
        names.extend(c.name for c in reply.customers)
        token = reply.next_page_token
        if not token:
            return names


def test_customers_are_seen_by_admins_and_the_users_granted_them(
    alice: Client, bob: Client, admin: Client, other_admin: Client, carol: Client
) -> None:
    acme = register(admin, "acme", "Acme Corp")
    globex = register(admin, "globex", "Globex")
    initech = register(admin, "initech", "Initech")
    assert acme.name == "customers/acme"
    assert get_customer(admin, acme.name) == acme
    grant(admin, "alice", "acme")
    grant(admin, "alice", "initech")
    grant(admin, "alice", "unregistered")

    assert get_customer(alice, acme.name) == acme
    assert listed_customers(alice) == [acme.name, initech.name]
    assert listed_customers(alice, page_size=1) == [acme.name, initech.name]
    assert listed_customers(admin, page_size=2) == [acme.name, globex.name, initech.name]
    assert listed_customers(bob) == []
    assert listed_customers(other_admin) == []

    missing = f"customers/{uuid.uuid4().hex}"
    hidden_like_missing([alice, bob, carol, other_admin], get_customer, globex.name, missing)
    hidden_like_missing([alice], get_customer, "customers/unregistered", missing)


def test_deleting_a_customer_removes_its_name_not_its_grants(
    alice: Client, bob: Client, admin: Client, other_admin: Client
) -> None:
    acme = register(admin, "acme", "Acme Corp")
    grant(admin, "alice", "acme")
    missing = f"customers/{uuid.uuid4().hex}"
    hidden_like_missing([other_admin], delete_customer, acme.name, missing)
    for caller in (alice, bob):  # not admins: refused whether or not the customer exists
        for name in (acme.name, missing):
            expect_error(
                lambda c=caller, n=name: delete_customer(c, n),
                grpc.StatusCode.PERMISSION_DENIED,
                "ROLE_REQUIRED",
            )
    assert get_customer(admin, acme.name) == acme

    assert delete_customer(admin, acme.name).customer == acme
    hidden_like_missing([admin, alice], get_customer, acme.name, missing)
    expect_error(lambda: delete_customer(admin, acme.name), grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    assert listed_customers(admin) == []
    grants = alice.access.ListCustomerGrants(access_pb.ListCustomerGrantsRequest(), timeout=10)
    assert [g.customer_id for g in grants.grants] == ["acme"]
    assert register(admin, "acme", "Acme Corp").name == acme.name, "it can be registered again"


# --------------------------------------------------------------------------- grants


def get_grant(client: Client, name: str) -> access_pb.CustomerGrant:
    return client.access.GetCustomerGrant(
        access_pb.GetCustomerGrantRequest(name=name), timeout=10
    ).grant


def test_a_grant_is_seen_by_its_user_and_admins(
    alice: Client, bob: Client, admin: Client, other_admin: Client, alice_elsewhere: Client
) -> None:
    granted = grant(admin, "alice", "acme")
    assert granted.name == "users/alice/customerGrants/acme"
    assert get_grant(alice, granted.name) == granted
    assert get_grant(admin, granted.name) == granted

    missing = f"users/alice/customerGrants/{uuid.uuid4().hex}"
    hidden_like_missing([bob, other_admin, alice_elsewhere], get_grant, granted.name, missing)
    hidden_like_missing([alice], get_grant, missing.replace("alice", "bob"), missing)

    admin.access.RevokeCustomerAccess(
        access_pb.RevokeCustomerAccessRequest(name=granted.name, request_id=request_id()),
        timeout=10,
    )
    hidden_like_missing([alice, admin], get_grant, granted.name, missing)


# --------------------------------------------------------------------------- messages


def get_message(client: Client, name: str) -> transcript_pb.Message:
    return client.transcript.GetMessage(
        transcript_pb.GetMessageRequest(name=name), timeout=10
    ).message


def test_a_message_is_read_by_its_author_and_admins_only(
    alice: Client, bob: Client, admin: Client, carol: Client, alice_elsewhere: Client
) -> None:
    conversation = new_conversation()
    said = append(alice, conversation, "I prefer email")
    assert get_message(alice, said.name) == said
    assert get_message(admin, said.name) == said

    append(bob, conversation, "my own call of the same id")
    missing = f"{conversation}/messages/{uuid.uuid4().hex}"
    hidden_like_missing([bob, carol, alice_elsewhere], get_message, said.name, missing)

    # The message id alone does not find it: the conversation in the name must be its own.
    elsewhere = said.name.replace(conversation, new_conversation())
    hidden_like_missing([alice, admin], get_message, elsewhere, missing)
    for name in ("messages/x", f"{conversation}/messages/", f"{conversation}/messages/a/b"):
        expect_error(
            lambda n=name: get_message(alice, n),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
            field="name",
        )
