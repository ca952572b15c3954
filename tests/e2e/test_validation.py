"""INVALID_ARGUMENT for every RPC: code, ErrorInfo reason and the BadRequest field path."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import (
    access_service_pb2,
    context_service_pb2,
    memory_pb2,
    memory_service_pb2,
    transcript_service_pb2,
)

from tests.e2e.helpers import (
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    SCOPE_USER,
    USER,
    create_pref,
    draft,
    expect_error,
    list_all,
    memory_spec,
    names,
    new_conversation,
    now,
    request_id,
    revision_name,
    revisions,
    say,
    ts,
)
from tests.support.servers import Client

pytestmark = pytest.mark.timeout(120)

INVALID = grpc.StatusCode.INVALID_ARGUMENT
FIELD_INVALID = "FIELD_INVALID"
TOMORROW = now() + dt.timedelta(days=1)


@dataclass
class Ctx:
    client: Client
    admin: Client
    conversation: str
    evidence: str
    memory: memory_pb2.Memory


@pytest.fixture
def ctx(alice: Client, admin: Client) -> Ctx:
    conversation = new_conversation()
    evidence = say(alice, conversation, "I prefer morning meetings", USER)
    memory = create_pref(alice, "meeting_time", "mornings", evidence=evidence)
    return Ctx(alice, admin, conversation, evidence, memory)


Mutation = Callable[[Any], None]


def _set(path: str, value: Any) -> Mutation:
    """A mutation setting `a.b.c = value` on the request."""
    *parents, leaf = path.split(".")

    def mutate(request: Any) -> None:
        target = request
        for part in parents:
            target = getattr(target, part)
        setattr(target, leaf, value)

    return mutate


def _clear(path: str) -> Mutation:
    *parents, leaf = path.split(".")

    def mutate(request: Any) -> None:
        target = request
        for part in parents:
            target = getattr(target, part)
        target.ClearField(leaf)

    return mutate


def _stamp(path: str, moment: dt.datetime) -> Mutation:
    *parents, leaf = path.split(".")

    def mutate(request: Any) -> None:
        target = request
        for part in parents:
            target = getattr(target, part)
        getattr(target, leaf).CopyFrom(ts(moment))

    return mutate


def _both(*mutations: Mutation) -> Mutation:
    def mutate(request: Any) -> None:
        for m in mutations:
            m(request)

    return mutate


Case = tuple[str, Mutation, str | set[str], str | set[str] | None]


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(mutate, reason, fld, id=case_id) for case_id, mutate, reason, fld in cases]


def _check(call: Callable[[], Any], reason: str | set[str], fld: str | set[str] | None) -> None:
    expect_error(call, INVALID, reason, fld)


# Revision draft cases shared by CreateMemory and CorrectMemory.
DRAFT_CASES: list[Case] = [
    ("empty_value", _set("revision.value", ""), FIELD_INVALID, "revision.value"),
    ("blank_value", _set("revision.value", "   \n\t "), FIELD_INVALID, "revision.value"),
    ("oversized_value", _set("revision.value", "x" * 4001), FIELD_INVALID, "revision.value"),
    (
        "empty_interval",
        _both(_stamp("revision.valid_from", TOMORROW), _stamp("revision.valid_until", TOMORROW)),
        FIELD_INVALID,
        "revision.valid_until",
    ),
    (
        "inverted_interval",
        _both(
            _stamp("revision.valid_from", TOMORROW),
            _stamp("revision.valid_until", TOMORROW - dt.timedelta(hours=1)),
        ),
        FIELD_INVALID,
        "revision.valid_until",
    ),
    ("no_provenance", _clear("revision.provenance"), FIELD_INVALID, "revision.provenance"),
    (
        "unspecified_method",
        _set("revision.provenance.method", 0),
        FIELD_INVALID,
        "revision.provenance.method",
    ),
    (
        "unknown_method",
        _set("revision.provenance.method", 99),
        FIELD_INVALID,
        "revision.provenance.method",
    ),
    (
        "unknown_speaker",
        _set("revision.provenance.speaker", 99),
        FIELD_INVALID,
        "revision.provenance.speaker",
    ),
    (
        "no_evidence",
        _clear("revision.provenance.transcript_message"),
        FIELD_INVALID,
        {
            "revision.provenance",
            "revision.provenance.evidence",
            "revision.provenance.transcript_message",
        },
    ),
    (
        "malformed_evidence_name",
        _set("revision.provenance.transcript_message", "foo"),
        {FIELD_INVALID, "EVIDENCE_NOT_FOUND"},
        None,
    ),
    (
        "unresolvable_evidence",
        _set(
            "revision.provenance.transcript_message",
            f"conversations/never-used-0000/messages/{uuid.uuid4().hex}",
        ),
        "EVIDENCE_NOT_FOUND",
        None,
    ),
    (
        "oversized_quote",
        _set("revision.provenance.quote", "q" * 2001),
        FIELD_INVALID,
        "revision.provenance.quote",
    ),
    ("request_id_not_uuid", _set("request_id", "not-a-uuid"), FIELD_INVALID, "request_id"),
    ("request_id_number", _set("request_id", "12345"), FIELD_INVALID, "request_id"),
]

CREATE_CASES: list[Case] = [
    ("empty_key", _set("memory.key", ""), FIELD_INVALID, "memory.key"),
    ("uppercase_key", _set("memory.key", "Meeting_Time"), FIELD_INVALID, "memory.key"),
    ("key_with_space", _set("memory.key", "meeting time"), FIELD_INVALID, "memory.key"),
    ("key_starting_with_digit", _set("memory.key", "1meeting"), FIELD_INVALID, "memory.key"),
    ("key_starting_with_dot", _set("memory.key", ".meeting"), FIELD_INVALID, "memory.key"),
    ("key_with_slash", _set("memory.key", "meeting/time"), FIELD_INVALID, "memory.key"),
    ("key_too_long", _set("memory.key", "a" * 129), FIELD_INVALID, "memory.key"),
    ("key_non_ascii", _set("memory.key", "réunion"), FIELD_INVALID, "memory.key"),
    ("bad_key_context", _set("memory.key_context", "Work!"), FIELD_INVALID, "memory.key_context"),
    (
        "key_context_too_long",
        _set("memory.key_context", "w" * 129),
        FIELD_INVALID,
        "memory.key_context",
    ),
    ("unspecified_scope", _set("memory.scope.type", 0), FIELD_INVALID, "memory.scope.type"),
    ("unknown_scope", _set("memory.scope.type", 99), FIELD_INVALID, "memory.scope.type"),
    ("unspecified_kind", _set("memory.kind", 0), FIELD_INVALID, "memory.kind"),
    ("unknown_kind", _set("memory.kind", 99), FIELD_INVALID, "memory.kind"),
    (
        "customer_scope_without_id",
        _set("memory.scope.type", SCOPE_CUSTOMER),
        FIELD_INVALID,
        "memory.scope.id",
    ),
    (
        "customer_id_bad_chars",
        _both(_set("memory.scope.type", SCOPE_CUSTOMER), _set("memory.scope.id", "acme corp/1")),
        FIELD_INVALID,
        "memory.scope.id",
    ),
    (
        "customer_id_too_long",
        _both(_set("memory.scope.type", SCOPE_CUSTOMER), _set("memory.scope.id", "c" * 129)),
        FIELD_INVALID,
        "memory.scope.id",
    ),
    *DRAFT_CASES,
]

CORRECT_CASES: list[Case] = [
    ("name_not_a_memory", _set("name", "foo"), FIELD_INVALID, "name"),
    ("empty_name", _set("name", ""), FIELD_INVALID, "name"),
    ("revision_name", _set("name", "memories/abc/revisions/1"), FIELD_INVALID, "name"),
    ("empty_etag", _set("etag", ""), FIELD_INVALID, "etag"),
    ("malformed_etag", _set("etag", "garbage"), FIELD_INVALID, "etag"),
    *DRAFT_CASES,
]


def _valid_create(ctx: Ctx) -> memory_service_pb2.CreateMemoryRequest:
    return memory_service_pb2.CreateMemoryRequest(
        memory=memory_spec("lunch_time", scope_type=SCOPE_USER),
        revision=draft("noon", ctx.evidence),
        request_id=request_id(),
    )


def _valid_correct(ctx: Ctx) -> memory_service_pb2.CorrectMemoryRequest:
    return memory_service_pb2.CorrectMemoryRequest(
        name=ctx.memory.name,
        etag=ctx.memory.etag,
        revision=draft("afternoons", ctx.evidence),
        request_id=request_id(),
    )


def test_valid_requests_used_by_the_table_succeed(ctx: Ctx) -> None:
    """The mutations below are the only reason their requests fail."""
    ctx.client.memories.CreateMemory(_valid_create(ctx), timeout=10)
    ctx.client.memories.CorrectMemory(_valid_correct(ctx), timeout=10)


@pytest.mark.parametrize(("mutate", "reason", "fld"), _params(CREATE_CASES))
def test_create_memory_rejects(ctx: Ctx, mutate: Mutation, reason: Any, fld: Any) -> None:
    request = _valid_create(ctx)
    mutate(request)
    _check(lambda: ctx.client.memories.CreateMemory(request, timeout=10), reason, fld)
    assert names(list_all(ctx.client)) == [ctx.memory.name], "nothing was created"


@pytest.mark.parametrize(("mutate", "reason", "fld"), _params(CORRECT_CASES))
def test_correct_memory_rejects(ctx: Ctx, mutate: Mutation, reason: Any, fld: Any) -> None:
    request = _valid_correct(ctx)
    mutate(request)
    _check(lambda: ctx.client.memories.CorrectMemory(request, timeout=10), reason, fld)
    assert len(revisions(ctx.client, ctx.memory.name)) == 1, "nothing was written"


BAD_MEMORY_NAMES = ["foo", "", "memories/", "memories/a/b", "conversations/x", "memories/a b"]


@pytest.mark.parametrize("name", BAD_MEMORY_NAMES)
def test_get_memory_rejects_malformed_names(ctx: Ctx, name: str) -> None:
    _check(
        lambda: ctx.client.memories.GetMemory(
            memory_service_pb2.GetMemoryRequest(name=name), timeout=10
        ),
        FIELD_INVALID,
        "name",
    )


@pytest.mark.parametrize("name", BAD_MEMORY_NAMES)
def test_delete_memory_rejects_malformed_names(ctx: Ctx, name: str) -> None:
    _check(
        lambda: ctx.client.memories.DeleteMemory(
            memory_service_pb2.DeleteMemoryRequest(name=name), timeout=10
        ),
        FIELD_INVALID,
        "name",
    )


@pytest.mark.parametrize(
    ("mutate", "fld"),
    [
        pytest.param(_set("etag", "garbage"), "etag", id="malformed_etag"),
        pytest.param(_set("request_id", "not-a-uuid"), "request_id", id="request_id_not_uuid"),
    ],
)
def test_delete_memory_rejects(ctx: Ctx, mutate: Mutation, fld: str) -> None:
    request = memory_service_pb2.DeleteMemoryRequest(name=ctx.memory.name)
    mutate(request)
    _check(lambda: ctx.client.memories.DeleteMemory(request, timeout=10), FIELD_INVALID, fld)
    assert names(list_all(ctx.client)) == [ctx.memory.name], "nothing was deleted"


LIST_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("negative_page_size", {"page_size": -1}, "page_size"),
    ("bad_page_token", {"page_token": "!!!not-a-page-token!!!"}, "page_token"),
    ("unknown_scope_type", {"scope_type": 99}, "scope_type"),
    ("unknown_kind", {"kind": 99}, "kind"),
    ("unknown_revision_state", {"revision_state": 99}, "revision_state"),
    ("oversized_value_contains", {"value_contains": "v" * 201}, "value_contains"),
    ("scope_id_without_scope_type", {"scope_id": "alice"}, "scope_id"),
]


@pytest.mark.parametrize(("kwargs", "fld"), [pytest.param(k, f, id=i) for i, k, f in LIST_CASES])
def test_list_memories_rejects(ctx: Ctx, kwargs: dict[str, Any], fld: str) -> None:
    _check(
        lambda: ctx.client.memories.ListMemories(
            memory_service_pb2.ListMemoriesRequest(**kwargs), timeout=10
        ),
        FIELD_INVALID,
        fld,
    )


@pytest.mark.parametrize(
    ("kwargs", "fld"),
    [
        pytest.param({"parent": "x"}, "parent", id="parent_x"),
        pytest.param({"parent": ""}, "parent", id="empty_parent"),
        pytest.param({"parent": "memories/"}, "parent", id="parent_without_id"),
        pytest.param({"parent": "memories/a/revisions/1"}, "parent", id="parent_is_revision"),
        pytest.param({"page_size": -5}, "page_size", id="negative_page_size"),
        pytest.param({"page_token": "!!!not-a-page-token!!!"}, "page_token", id="bad_page_token"),
    ],
)
def test_list_memory_revisions_rejects(ctx: Ctx, kwargs: dict[str, Any], fld: str) -> None:
    request = memory_service_pb2.ListMemoryRevisionsRequest(parent=ctx.memory.name)
    for key, value in kwargs.items():
        setattr(request, key, value)
    _check(lambda: ctx.client.memories.ListMemoryRevisions(request, timeout=10), FIELD_INVALID, fld)


REVISION_CASES: list[tuple[str, Callable[[Ctx], dict[str, Any]], str]] = [
    ("name_foo", lambda c: {"name": "foo"}, "name"),
    ("empty_name", lambda c: {"name": ""}, "name"),
    ("memory_not_revision", lambda c: {"name": c.memory.name}, "name"),
    ("revision_not_a_number", lambda c: {"name": f"{c.memory.name}/revisions/abc"}, "name"),
    (
        "malformed_etag",
        lambda c: {"name": revision_name(c.memory.name, 1), "etag": "garbage"},
        "etag",
    ),
    (
        "request_id_not_uuid",
        lambda c: {"name": revision_name(c.memory.name, 1), "request_id": "nope"},
        "request_id",
    ),
]


@pytest.mark.parametrize(("build", "fld"), [pytest.param(b, f, id=i) for i, b, f in REVISION_CASES])
@pytest.mark.parametrize("rpc", ["ConfirmMemoryRevision", "RejectMemoryRevision"])
def test_confirm_and_reject_reject_bad_requests(
    ctx: Ctx, rpc: str, build: Callable[[Ctx], dict[str, Any]], fld: str
) -> None:
    request_type = getattr(memory_service_pb2, f"{rpc}Request")
    request = request_type(**build(ctx))
    _check(lambda: getattr(ctx.client.memories, rpc)(request, timeout=10), FIELD_INVALID, fld)


APPEND_CASES: list[Case] = [
    ("parent_bad_chars", _set("parent", "conversations/bad id!"), FIELD_INVALID, "parent"),
    ("parent_foo", _set("parent", "foo"), FIELD_INVALID, "parent"),
    ("parent_empty", _set("parent", ""), FIELD_INVALID, "parent"),
    ("parent_without_id", _set("parent", "conversations/"), FIELD_INVALID, "parent"),
    ("parent_id_too_long", _set("parent", "conversations/" + "c" * 129), FIELD_INVALID, "parent"),
    ("parent_nested", _set("parent", "conversations/a/messages/1"), FIELD_INVALID, "parent"),
    ("empty_text", _set("message.text", ""), FIELD_INVALID, "message.text"),
    ("oversized_text", _set("message.text", "t" * 32001), FIELD_INVALID, "message.text"),
    ("unspecified_speaker", _set("message.speaker", 0), FIELD_INVALID, "message.speaker"),
    ("unknown_speaker", _set("message.speaker", 99), FIELD_INVALID, "message.speaker"),
    ("unknown_status", _set("message.status", 99), FIELD_INVALID, "message.status"),
    ("request_id_not_uuid", _set("request_id", "abc"), FIELD_INVALID, "request_id"),
]


@pytest.mark.parametrize(("mutate", "reason", "fld"), _params(APPEND_CASES))
def test_append_message_rejects(ctx: Ctx, mutate: Mutation, reason: Any, fld: Any) -> None:
    request = transcript_service_pb2.AppendMessageRequest(
        parent=ctx.conversation,
        message=transcript_service_pb2.Message(speaker=USER, text="hello"),
        request_id=request_id(),
    )
    mutate(request)
    _check(lambda: ctx.client.transcript.AppendMessage(request, timeout=10), reason, fld)
    listed = ctx.client.transcript.ListMessages(
        transcript_service_pb2.ListMessagesRequest(parent=ctx.conversation), timeout=10
    )
    assert len(listed.messages) == 1, "nothing was appended"


@pytest.mark.parametrize(
    ("kwargs", "fld"),
    [
        pytest.param({"parent": "x"}, "parent", id="parent_x"),
        pytest.param({"parent": "conversations/bad id!"}, "parent", id="parent_bad_chars"),
        pytest.param({"page_size": -1}, "page_size", id="negative_page_size"),
        pytest.param({"page_token": "!!!not-a-page-token!!!"}, "page_token", id="bad_page_token"),
    ],
)
def test_list_messages_rejects(ctx: Ctx, kwargs: dict[str, Any], fld: str) -> None:
    request = transcript_service_pb2.ListMessagesRequest(parent=ctx.conversation)
    for key, value in kwargs.items():
        setattr(request, key, value)
    _check(lambda: ctx.client.transcript.ListMessages(request, timeout=10), FIELD_INVALID, fld)


@pytest.mark.parametrize(
    ("rpc", "kwargs", "fld"),
    [
        pytest.param(
            "GrantCustomerAccess", {"customer_id": "c1"}, "user_id", id="grant_without_user"
        ),
        pytest.param(
            "GrantCustomerAccess", {"user_id": "alice"}, "customer_id", id="grant_without_customer"
        ),
        pytest.param(
            "GrantCustomerAccess",
            {"user_id": "alice", "customer_id": "bad customer/1"},
            "customer_id",
            id="grant_bad_customer_id",
        ),
        pytest.param(
            "GrantCustomerAccess",
            {"user_id": "alice", "customer_id": "c1", "request_id": "nope"},
            "request_id",
            id="grant_request_id_not_uuid",
        ),
        pytest.param("RevokeCustomerAccess", {"name": "foo"}, "name", id="revoke_malformed_name"),
        pytest.param("ListCustomerGrants", {"page_size": -1}, "page_size", id="list_grants_size"),
        pytest.param(
            "ListCustomerGrants",
            {"page_token": "!!!not-a-page-token!!!"},
            "page_token",
            id="list_grants_token",
        ),
    ],
)
def test_access_service_rejects(ctx: Ctx, rpc: str, kwargs: dict[str, Any], fld: str) -> None:
    request = getattr(access_service_pb2, f"{rpc}Request")(**kwargs)
    _check(lambda: getattr(ctx.admin.access, rpc)(request, timeout=10), FIELD_INVALID, fld)


def test_several_violations_name_offending_fields_only(ctx: Ctx) -> None:
    request = _valid_create(ctx)
    request.memory.key = ""
    request.memory.kind = 0
    request.revision.value = ""
    info = expect_error(
        lambda: ctx.client.memories.CreateMemory(request, timeout=10), INVALID, FIELD_INVALID
    )
    # Whether every violation or only the first is reported is the server's choice; whatever
    # is reported must be one of the offending fields.
    assert info.fields, info
    assert set(info.fields) <= {"memory.key", "memory.kind", "revision.value"}, info.fields


@pytest.mark.parametrize(
    ("scope_type", "scope_id"),
    [
        pytest.param(SCOPE_ORG, "acme", id="organization_with_id"),
        pytest.param(SCOPE_USER, "bad id!", id="user_id_bad_chars"),
    ],
)
def test_create_memory_rejects_bad_scope_ids_even_for_admins(
    ctx: Ctx, scope_type: int, scope_id: str
) -> None:
    evidence = say(ctx.admin, None, "The office is closed on Fridays")
    request = memory_service_pb2.CreateMemoryRequest(
        memory=memory_spec("office_days", scope_type=scope_type, scope_id=scope_id),
        revision=draft("closed on Fridays", evidence),
    )
    _check(
        lambda: ctx.admin.memories.CreateMemory(request, timeout=10),
        FIELD_INVALID,
        "memory.scope.id",
    )


def test_propose_memory_and_overrides_refuse_an_organization_scope_with_an_id(ctx: Ctx) -> None:
    """Fails on 9285535: ProposeMemory kept the id it was sent, so an organization memory
    with an id was stored that no context or caller's listing could find."""
    evidence = say(ctx.admin, None, "We invoice in euros")
    proposal = context_service_pb2.ProposeMemoryRequest(
        memory=memory_spec("invoice_currency", scope_type=SCOPE_ORG, scope_id="hq"),
        value="invoices in euros",
        method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
        evidence_messages=[evidence],
        request_id=request_id(),
    )
    _check(
        lambda: ctx.admin.context.ProposeMemory(proposal, timeout=10),
        FIELD_INVALID,
        "memory.scope.id",
    )
    override = context_service_pb2.CreateOverrideRequest(
        parent=evidence.rsplit("/messages/", 1)[0],
        override=context_service_pb2.Override(
            key="invoice_currency",
            scope=memory_pb2.Scope(type=SCOPE_ORG, id="hq"),
            value="dollars this call",
            transcript_message=evidence,
        ),
        expiry=context_service_pb2.OverrideExpiry(ttl_seconds=60),
        request_id=request_id(),
    )
    _check(
        lambda: ctx.admin.context.CreateOverride(override, timeout=10),
        FIELD_INVALID,
        "override.scope.id",
    )
