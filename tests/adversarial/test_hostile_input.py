"""Client input never yields INTERNAL: each case below answered INTERNAL (or stored what
PostgreSQL then refused) before; now it is INVALID_ARGUMENT naming the field, or an import batch
that FAILED saying where. The same answers on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr_pb
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from tests.e2e.helpers import (
    create_pref,
    expect_invalid,
    memory_spec,
    new_conversation,
    provenance,
    request_id,
    say,
)
from tests.support import exports, servers
from tests.support.fuzzing import SIDECAR_SECRET_KEY
from tests.support.servers import Client, ServerProcess, mint_token

MARKER = "hostile-marker-7f3a"


def old_style_token(request: Message, after: Any) -> str:
    """A token as the service minted them before they were signed: base64 JSON anyone can
    write, bound only to a hash of the query that the caller can compute too."""
    query = type(request)()
    query.CopyFrom(request)
    query.ClearField("page_token")
    query.ClearField("page_size")
    fingerprint = hashlib.sha256(query.SerializeToString(deterministic=True)).hexdigest()[:16]
    payload = json.dumps({"q": fingerprint, "a": after}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def list_calls(client: Client, memory: str, batch: str) -> list[tuple[Message, Callable[..., Any]]]:
    return [
        (svc.ListMemoriesRequest(), client.memories.ListMemories),
        (svc.ListMemoryRevisionsRequest(parent=memory), client.memories.ListMemoryRevisions),
        (tr_pb.ListMessagesRequest(parent="conversations/hostile"), client.transcript.ListMessages),
        (imp_pb.ListImportItemsRequest(parent=batch), client.imports.ListImportItems),
        (ctx_pb.ListOverridesRequest(parent="tasks/hostile"), client.context.ListOverrides),
        (access_pb.ListCustomerGrantsRequest(), client.access.ListCustomerGrants),
    ]


@pytest.mark.parametrize(
    "after",
    [["zzz"], [None], [2**70], [-1], [1.5], [[]], ["a", "b", "c"], [{}], "zzz"],
    ids=["zzz", "null", "2^70", "negative", "float", "list", "three", "object", "not-a-list"],
)
def test_forged_page_tokens_are_invalid_argument_on_every_list(
    alice: Client, admin: Client, after: Any
) -> None:
    say(alice, "conversations/hostile", "I prefer email")
    memory = create_pref(alice, "contact.channel", "email").name
    batch = alice.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY, archive=b"- prefers email\n"
        ),
        timeout=10,
    ).batch.name
    for request, method in list_calls(alice, memory, batch):
        request.page_token = old_style_token(request, after)
        expect_invalid(lambda m=method, r=request: m(r, timeout=10), "page_token")


def test_a_page_token_only_continues_its_own_callers_query(alice: Client, admin: Client) -> None:
    for key in ("a.one", "a.two", "a.three"):
        create_pref(alice, key, "value")
    first = alice.memories.ListMemories(svc.ListMemoriesRequest(page_size=1), timeout=10)
    assert first.next_page_token
    rest = alice.memories.ListMemories(
        svc.ListMemoriesRequest(page_size=5, page_token=first.next_page_token), timeout=10
    )
    assert len(rest.memories) == 2
    expect_invalid(
        lambda: admin.memories.ListMemories(
            svc.ListMemoriesRequest(page_token=first.next_page_token), timeout=10
        ),
        "page_token",
    )
    edited = first.next_page_token[:-2] + ("AA" if first.next_page_token[-2:] != "AA" else "BB")
    expect_invalid(
        lambda: alice.memories.ListMemories(svc.ListMemoriesRequest(page_token=edited), timeout=10),
        "page_token",
    )


@pytest.mark.parametrize(
    ("expiry", "field"),
    [
        *[
            (ctx_pb.OverrideExpiry(ttl_seconds=ttl), "expiry.ttl_seconds")
            for ttl in (2**63 - 1, -(2**63), 10**15)
        ],
        *[
            (ctx_pb.OverrideExpiry(end_of_day_time_zone=zone), "expiry.end_of_day_time_zone")
            for zone in ("America", "Europe/", "a" * 120, "../../../etc")
        ],
    ],
)
def test_huge_ttls_and_odd_time_zones_are_invalid_argument(
    alice: Client, expiry: ctx_pb.OverrideExpiry, field: str
) -> None:
    expect_invalid(
        lambda: alice.context.CreateOverride(
            ctx_pb.CreateOverrideRequest(
                parent="tasks/t1",
                override=ctx_pb.Override(
                    key="tone", scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER), value="x"
                ),
                expiry=expiry,
            ),
            timeout=10,
        ),
        field,
    )


def strings_that_cannot_be_stored(client: Client) -> list[tuple[str, Callable[[], Any]]]:
    """(field, call) where the field holds NUL or more characters than its column."""
    message = say(client, None, f"I prefer email {MARKER}")
    long_ref = "conversations/" + "c" * 300 + "/messages/" + "m" * 32

    def create(value: str = "email", quote: str = "", ref: str = message) -> Callable[[], Any]:
        prov = provenance(ref, quote=quote)
        return lambda: client.memories.CreateMemory(
            svc.CreateMemoryRequest(
                memory=memory_spec("contact.channel"),
                revision=memory_pb2.RevisionDraft(value=value, provenance=prov),
            ),
            timeout=10,
        )

    def append(text: str) -> Callable[[], Any]:
        return lambda: client.transcript.AppendMessage(
            tr_pb.AppendMessageRequest(
                parent=new_conversation(),
                message=tr_pb.Message(speaker=memory_pb2.SPEAKER_USER, text=text),
            ),
            timeout=10,
        )

    def register(display_name: str) -> Callable[[], Any]:
        return lambda: client.access.RegisterCustomer(
            access_pb.RegisterCustomerRequest(
                customer=access_pb.Customer(customer_id="cust-1", display_name=display_name)
            ),
            timeout=10,
        )

    return [
        ("revision.value", create(value=f"email\x00{MARKER}")),
        ("revision.provenance.quote", create(quote=f"I prefer\x00{MARKER}")),
        ("revision.provenance.transcript_message", create(ref=message + "\x00")),
        ("revision.provenance.transcript_message", create(ref=long_ref)),
        ("message.text", append(f"hello\x00{MARKER}")),
        ("customer.display_name", register(f"Acme\x00{MARKER}")),
        (
            "request_id",
            lambda: client.transcript.AppendMessage(
                tr_pb.AppendMessageRequest(
                    parent=new_conversation(),
                    message=tr_pb.Message(speaker=memory_pb2.SPEAKER_USER, text="hi"),
                    request_id="-" * 80 + request_id().replace("-", ""),
                ),
                timeout=10,
            ),
        ),
        (
            "evidence_messages[0]",
            lambda: client.context.ProposeMemory(
                ctx_pb.ProposeMemoryRequest(
                    memory=memory_spec("tone"),
                    value="short",
                    method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
                    evidence_messages=[long_ref],
                ),
                timeout=10,
            ),
        ),
        (
            "transcript_message",
            lambda: client.memories.ConfirmMemoryRevision(
                svc.ConfirmMemoryRevisionRequest(
                    name="memories/" + "0" * 32 + "/revisions/1", transcript_message=long_ref
                ),
                timeout=10,
            ),
        ),
        (
            "override.transcript_message",
            lambda: client.context.CreateOverride(
                ctx_pb.CreateOverrideRequest(
                    parent="tasks/t1",
                    override=ctx_pb.Override(
                        key="tone",
                        scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER),
                        value="x",
                        transcript_message=long_ref,
                    ),
                    expiry=ctx_pb.OverrideExpiry(ttl_seconds=3600),
                ),
                timeout=10,
            ),
        ),
        (
            "customers[0].name",
            lambda: build_context_for(client, ctx_pb.CustomerReference(name=f"Acme\x00{MARKER}")),
        ),
    ]


def build_context_for(client: Client, reference: ctx_pb.CustomerReference) -> Any:
    return client.context.BuildContext(
        ctx_pb.BuildContextRequest(customers=[reference]), timeout=10
    )


def test_nul_and_over_long_strings_are_invalid_argument_and_never_logged(
    alice: Client, memory_server: ServerProcess
) -> None:
    """On PostgreSQL each of these was INTERNAL, with the SQL parameters in the log."""
    for field, call in strings_that_cannot_be_stored(alice):
        expect_invalid(call, field)
    log = memory_server.log()
    assert MARKER not in log.replace(f"I prefer email {MARKER}", "")
    assert "[parameters:" not in log


def test_timestamps_out_of_range_are_invalid_argument(alice: Client) -> None:
    for seconds in (2**62, -(2**62), 253_402_300_800):
        expect_invalid(
            lambda s=seconds: alice.memories.ListMemories(
                svc.ListMemoriesRequest(as_of=Timestamp(seconds=s)), timeout=10
            ),
            "as_of",
        )


def test_undecodable_request_bytes_are_invalid_argument(memory_server: ServerProcess) -> None:
    """gRPC itself answered INTERNAL when the bytes did not parse as the request message."""
    channel = memory_server.channel()
    metadata = (("authorization", f"Bearer {mint_token('t-raw', 'alice')}"),)
    for path in (
        "/crmmem.memory.v1.MemoryService/GetMemory",
        "/crmmem.memory.v1.ContextService/ProposeMemory",
        "/crmmem.memory.v1.AccessService/GetCaller",
    ):
        for payload in (b"\x12\x06", b"\xff\xff\xff", b"\x0a\x05ab"):
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary(path)(payload, metadata=metadata, timeout=10)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (path, payload)
    stream = channel.unary_stream("/crmmem.memory.v1.MemoryService/ExportMemories")
    with pytest.raises(grpc.RpcError) as caught:
        list(stream(b"\xff\xff", metadata=metadata, timeout=10))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def submit(client: Client, archive: bytes, fmt: int) -> imp_pb.ImportBatch:
    return client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=fmt, archive=archive), timeout=30
    ).batch


def chatgpt(message: dict[str, Any], **conversation: Any) -> bytes:
    return json.dumps(
        [
            {
                "conversation_id": "c1",
                "current_node": "n1",
                "mapping": {"n1": {"parent": None, "message": {"id": "m1", **message}}},
                **conversation,
            }
        ]
    ).encode()


USER_SAYS = {"author": {"role": "user"}, "content": {"parts": ["I prefer email"]}}


@pytest.mark.parametrize(
    ("archive", "where"),
    [
        (b'[{"mapping": {}, "x": ' + b"9" * 5000 + b"}]", "$[0]"),
        (chatgpt({**USER_SAYS, "metadata": {"attachments": 7}}), "metadata.attachments"),
        (chatgpt({**USER_SAYS, "metadata": {"attachments": True}}), "metadata.attachments"),
        (
            chatgpt({**USER_SAYS, "metadata": {"attachments": [{"name": {"a": 1}}]}}),
            "attachments[0]",
        ),
        (
            chatgpt({"author": {"role": "user"}, "content": {"parts": [{"name": ["x"]}]}}),
            "parts[0]",
        ),
        (chatgpt({**USER_SAYS, "metadata": {"attachments": [{"name": "f" * 600}]}}), "[0]"),
        (
            chatgpt({"author": {"role": "user"}, "content": {"parts": ["hi\u0000there"]}}),
            "parts[0]",
        ),
        (chatgpt(USER_SAYS, conversation_id="c" * 600), "$[0]"),
    ],
    ids=[
        "int-over-4300-digits",
        "attachments-int",
        "attachments-bool",
        "attachment-name-object",
        "asset-name-list",
        "attachment-name-600",
        "nul-in-text",
        "conversation-id-600",
    ],
)
def test_hostile_chatgpt_archives_fail_the_batch_saying_where(
    alice: Client, archive: bytes, where: str
) -> None:
    batch = submit(alice, archive, imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS)
    assert batch.state == imp_pb.IMPORT_STATE_FAILED, batch
    assert where in batch.error


def export_line(**fields: Any) -> bytes:
    """One crafted memory after a valid header: `fields` replace the revision's."""
    revision = exports.revision("email", author_user_id="alice")
    for name, value in fields.items():
        if name in revision["temporal"]:
            revision["temporal"][name] = value
        else:
            revision[name] = value
    if "content" in fields:
        revision["content_hash"] = exports.content_hash(str(fields["content"]))
    return exports.archive(exports.memory(revisions=[revision]))


@pytest.mark.parametrize(
    ("archive", "where"),
    [
        (export_line(number=2**40), "revisions[0].number"),
        (export_line(number=2**31), "revisions[0].number"),
        (export_line(replaces=2**63), "line 2"),  # past 64 bits: the JSON reader refuses it
        (export_line(superseded_by=-1), "revisions[0].temporal.superseded_by"),
        (export_line(content="email\u0000"), "revisions[0].content"),
        (export_line(author_user_id="a" * 200), "revisions[0].author_user_id"),
        (export_line(created_at="0001-01-01T00:00:00+14:00"), "revisions[0].temporal.created_at"),
        (
            exports.archive()
            + b'{"schema": "crmmem.memory-export/v2", "id": '
            + b"1" * 5000
            + b"}",
            "line 2",
        ),
    ],
    ids=[
        "number-2^40",
        "number-2^31",
        "replaces-2^63",
        "superseded-negative",
        "nul-value",
        "author-200",
        "before-year-1-in-utc",
        "int-over-4300-digits",
    ],
)
def test_hostile_restores_fail_the_batch_saying_where(
    admin: Client, archive: bytes, where: str
) -> None:
    batch = submit(admin, archive, imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT)
    assert batch.state == imp_pb.IMPORT_STATE_FAILED, batch
    assert where in batch.error


def test_undecodable_bytes_to_the_sidecar_are_invalid_argument(
    retrieval_server: ServerProcess,
) -> None:
    """The sidecar's aio server answered UNKNOWN when the bytes did not parse."""
    channel = retrieval_server.channel()
    secret = getattr(servers, "TEST_RETRIEVAL_SECRET", "")
    metadata = ((SIDECAR_SECRET_KEY, secret),) if secret else ()
    for method in ("UpsertDocuments", "DeleteDocuments", "Search", "GetStats"):
        for payload in (b"\x12\x06", b"\xff\xff\xff", b"\x0a\x05ab"):
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary(f"/crmmem.retrieval.v1.RetrievalService/{method}")(
                    payload, metadata=metadata, timeout=30
                )
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, payload)


def test_a_display_name_that_grows_when_case_folded_is_invalid_argument(admin: Client) -> None:
    """256 characters of ß fold to 512 of ss, past the column that keeps the folded name."""
    expect_invalid(
        lambda: admin.access.RegisterCustomer(
            access_pb.RegisterCustomerRequest(
                customer=access_pb.Customer(customer_id="cust-ss", display_name="ß" * 200)
            ),
            timeout=10,
        ),
        "customer.display_name",
    )
