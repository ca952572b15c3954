"""Builders and assertions shared by the end-to-end tests.

Everything here talks to the real server through the generated stubs; nothing reaches into
`memory_service`.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2, memory_service_pb2, transcript_service_pb2
from google.protobuf import message as pb_message
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tests.support.servers import Client

DOMAIN = "crmmem.memory.v1"
UTC = dt.UTC

# Short aliases for the enums the tests use over and over.
USER = memory_pb2.SPEAKER_USER
ASSISTANT = memory_pb2.SPEAKER_ASSISTANT
THIRD_PARTY = memory_pb2.SPEAKER_THIRD_PARTY
TOOL = memory_pb2.SPEAKER_TOOL
NO_SPEAKER = memory_pb2.SPEAKER_UNSPECIFIED

USER_STATEMENT = memory_pb2.PROVENANCE_METHOD_USER_STATEMENT
USER_CONFIRMATION = memory_pb2.PROVENANCE_METHOD_USER_CONFIRMATION
ASSISTANT_INFERENCE = memory_pb2.PROVENANCE_METHOD_ASSISTANT_INFERENCE
IMPORT = memory_pb2.PROVENANCE_METHOD_IMPORT
RULE = memory_pb2.PROVENANCE_METHOD_RULE

SCOPE_USER = memory_pb2.SCOPE_TYPE_USER
SCOPE_CUSTOMER = memory_pb2.SCOPE_TYPE_CUSTOMER
SCOPE_ORG = memory_pb2.SCOPE_TYPE_ORGANIZATION

PREFERENCE = memory_pb2.MEMORY_KIND_PREFERENCE
FACT = memory_pb2.MEMORY_KIND_FACT

CANDIDATE = memory_pb2.REVISION_STATE_CANDIDATE
ACTIVE = memory_pb2.REVISION_STATE_ACTIVE
SUPERSEDED = memory_pb2.REVISION_STATE_SUPERSEDED
REJECTED = memory_pb2.REVISION_STATE_REJECTED
DELETED = memory_pb2.REVISION_STATE_DELETED

MEMORY_NAME = re.compile(r"^memories/[^/]+$")
MESSAGE_NAME = re.compile(r"^conversations/[^/]+/messages/[^/]+$")


# --------------------------------------------------------------------------- time


def now() -> dt.datetime:
    return dt.datetime.now(UTC)


def ts(moment: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def to_dt(stamp: Timestamp) -> dt.datetime:
    return stamp.ToDatetime(tzinfo=UTC)


def next_monday(at_least: dt.timedelta = dt.timedelta(days=1)) -> dt.datetime:
    """Midnight UTC of the first Monday that is at least `at_least` away.

    The margin keeps "the Sunday before" in the future too, whatever day the suite runs on.
    """
    earliest = now() + at_least
    day = earliest.date() + dt.timedelta(days=1)
    while day.weekday() != 0:
        day += dt.timedelta(days=1)
    return dt.datetime(day.year, day.month, day.day, tzinfo=UTC)


def close_in_time(a: Timestamp, b: Timestamp, tolerance: float = 0.002) -> bool:
    return abs((to_dt(a) - to_dt(b)).total_seconds()) <= tolerance


# --------------------------------------------------------------------------- ids


def request_id() -> str:
    return str(uuid.uuid4())


def new_conversation() -> str:
    return f"conversations/c-{uuid.uuid4().hex[:16]}"


def missing_memory_name() -> str:
    return f"memories/{uuid.uuid4().hex}"


def revision_name(memory_name: str, number: int) -> str:
    return f"{memory_name}/revisions/{number}"


# --------------------------------------------------------------------------- transcript


def append(
    client: Client,
    conversation: str,
    text: str,
    speaker: int = USER,
    **kwargs: Any,
) -> transcript_service_pb2.Message:
    reply = client.transcript.AppendMessage(
        transcript_service_pb2.AppendMessageRequest(
            parent=conversation,
            message=transcript_service_pb2.Message(speaker=speaker, text=text),
            **kwargs,
        ),
        timeout=10,
    )
    return reply.message


def say(client: Client, conversation: str | None, text: str, speaker: int = USER) -> str:
    """Append `text` to `conversation` (a fresh one when None) and return the message name."""
    return append(client, conversation or new_conversation(), text, speaker).name


# --------------------------------------------------------------------------- builders


def provenance(
    message: str,
    method: int = USER_STATEMENT,
    speaker: int = NO_SPEAKER,
    quote: str = "",
    source_time: dt.datetime | None = None,
) -> memory_pb2.Provenance:
    prov = memory_pb2.Provenance(
        method=method, speaker=speaker, transcript_message=message, quote=quote
    )
    if source_time is not None:
        prov.source_time.CopyFrom(ts(source_time))
    return prov


def draft(
    value: str,
    evidence: str | memory_pb2.Provenance,
    *,
    method: int = USER_STATEMENT,
    valid_from: dt.datetime | None = None,
    valid_until: dt.datetime | None = None,
) -> memory_pb2.RevisionDraft:
    prov = evidence if isinstance(evidence, memory_pb2.Provenance) else provenance(evidence, method)
    rev = memory_pb2.RevisionDraft(value=value, provenance=prov)
    if valid_from is not None:
        rev.valid_from.CopyFrom(ts(valid_from))
    if valid_until is not None:
        rev.valid_until.CopyFrom(ts(valid_until))
    return rev


def memory_spec(
    key: str,
    *,
    scope_type: int = SCOPE_USER,
    scope_id: str = "",
    kind: int = PREFERENCE,
    key_context: str = "",
) -> memory_pb2.Memory:
    return memory_pb2.Memory(
        scope=memory_pb2.Scope(type=scope_type, id=scope_id),
        key=key,
        key_context=key_context,
        kind=kind,
    )


def create_memory(
    client: Client,
    key: str,
    value: str,
    *,
    scope_type: int = SCOPE_USER,
    scope_id: str = "",
    kind: int = PREFERENCE,
    key_context: str = "",
    method: int = USER_STATEMENT,
    speaker: int = USER,
    evidence: str | memory_pb2.Provenance | None = None,
    conversation: str | None = None,
    valid_from: dt.datetime | None = None,
    valid_until: dt.datetime | None = None,
    request_id: str = "",
) -> memory_service_pb2.CreateMemoryResponse:
    """Create a memory; unless `evidence` is given, the value is first said by `speaker`."""
    if evidence is None:
        evidence = say(client, conversation, value, speaker)
    return client.memories.CreateMemory(
        memory_service_pb2.CreateMemoryRequest(
            memory=memory_spec(
                key,
                scope_type=scope_type,
                scope_id=scope_id,
                kind=kind,
                key_context=key_context,
            ),
            revision=draft(
                value, evidence, method=method, valid_from=valid_from, valid_until=valid_until
            ),
            request_id=request_id,
        ),
        timeout=10,
    )


def create_pref(
    client: Client, key: str = "meeting_time", value: str = "I prefer morning meetings", **kw: Any
) -> memory_pb2.Memory:
    """Create a user-scoped preference from the caller's own words; return the memory."""
    return create_memory(client, key, value, **kw).memory


def correct(
    client: Client,
    memory: memory_pb2.Memory | str,
    value: str,
    *,
    etag: str | None = None,
    method: int = USER_STATEMENT,
    speaker: int = USER,
    evidence: str | memory_pb2.Provenance | None = None,
    conversation: str | None = None,
    valid_from: dt.datetime | None = None,
    valid_until: dt.datetime | None = None,
    request_id: str = "",
) -> memory_service_pb2.CorrectMemoryResponse:
    """Correct a memory. With a name only, the current etag is read first."""
    if isinstance(memory, str):
        memory = get(client, memory)
    if evidence is None:
        evidence = say(client, conversation, value, speaker)
    return client.memories.CorrectMemory(
        memory_service_pb2.CorrectMemoryRequest(
            name=memory.name,
            etag=memory.etag if etag is None else etag,
            revision=draft(
                value, evidence, method=method, valid_from=valid_from, valid_until=valid_until
            ),
            request_id=request_id,
        ),
        timeout=10,
    )


def get(client: Client, name: str, as_of: dt.datetime | None = None) -> memory_pb2.Memory:
    request = memory_service_pb2.GetMemoryRequest(name=name)
    if as_of is not None:
        request.as_of.CopyFrom(ts(as_of))
    return client.memories.GetMemory(request, timeout=10).memory


def confirm(
    client: Client, name: str, **kw: Any
) -> memory_service_pb2.ConfirmMemoryRevisionResponse:
    return client.memories.ConfirmMemoryRevision(
        memory_service_pb2.ConfirmMemoryRevisionRequest(name=name, **kw), timeout=10
    )


def reject(client: Client, name: str, **kw: Any) -> memory_service_pb2.RejectMemoryRevisionResponse:
    return client.memories.RejectMemoryRevision(
        memory_service_pb2.RejectMemoryRevisionRequest(name=name, **kw), timeout=10
    )


def delete(client: Client, name: str, **kw: Any) -> memory_service_pb2.DeleteMemoryResponse:
    return client.memories.DeleteMemory(
        memory_service_pb2.DeleteMemoryRequest(name=name, **kw), timeout=10
    )


def list_page(client: Client, **kw: Any) -> memory_service_pb2.ListMemoriesResponse:
    as_of = kw.pop("as_of", None)
    request = memory_service_pb2.ListMemoriesRequest(**kw)
    if as_of is not None:
        request.as_of.CopyFrom(ts(as_of))
    return client.memories.ListMemories(request, timeout=10)


def list_all(client: Client, **kw: Any) -> list[memory_pb2.Memory]:
    """Every memory matching the filters, following next_page_token to the end."""
    memories: list[memory_pb2.Memory] = []
    token = ""
    for _ in range(1000):
        reply = list_page(client, page_token=token, **kw)
        memories.extend(reply.memories)
        token = reply.next_page_token
        if not token:
            return memories
    raise AssertionError("ListMemories never returned an empty next_page_token")


def names(memories: Iterable[memory_pb2.Memory]) -> list[str]:
    return [m.name for m in memories]


def revisions(client: Client, name: str, page_size: int = 0) -> list[memory_pb2.MemoryRevision]:
    out: list[memory_pb2.MemoryRevision] = []
    token = ""
    for _ in range(1000):
        reply = client.memories.ListMemoryRevisions(
            memory_service_pb2.ListMemoryRevisionsRequest(
                parent=name, page_size=page_size, page_token=token
            ),
            timeout=10,
        )
        out.extend(reply.revisions)
        token = reply.next_page_token
        if not token:
            return out
    raise AssertionError("ListMemoryRevisions never returned an empty next_page_token")


def messages(client: Client, conversation: str) -> list[transcript_service_pb2.Message]:
    return list(
        client.transcript.ListMessages(
            transcript_service_pb2.ListMessagesRequest(parent=conversation), timeout=10
        ).messages
    )


# --------------------------------------------------------------------------- errors


@dataclass
class ErrorDetails:
    """What a failed call told the client, decoded from `grpc-status-details-bin`."""

    code: grpc.StatusCode
    reason: str
    fields: list[str]
    metadata: dict[str, str]
    message: str
    domain: str
    details: list[Any] = field(default_factory=list)

    def unpack(self, cls: type[pb_message.Message]) -> list[Any]:
        out = []
        for any_msg in self.details:
            if any_msg.Is(cls.DESCRIPTOR):
                value = cls()
                any_msg.Unpack(value)
                out.append(value)
        return out


def error_info(err: grpc.RpcError) -> ErrorDetails:
    """Decode the rich error of a failed call, asserting it is well formed."""
    assert isinstance(err, grpc.Call), err
    status = rpc_status.from_call(err)
    assert status is not None, (
        f"{err.code()} {err.details()!r} carries no google.rpc.Status in grpc-status-details-bin"
    )
    reason, domain, metadata = "", "", {}
    fields: list[str] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields.extend(v.field for v in bad.field_violations)
    for text in (status.message, err.details() or ""):
        assert "Traceback" not in text, text
        assert 'File "' not in text, text
    return ErrorDetails(
        code=err.code(),
        reason=reason,
        fields=fields,
        metadata=metadata,
        message=status.message,
        domain=domain,
        details=list(status.details),
    )


def expect_error(
    call: Callable[[], Any],
    code: grpc.StatusCode | Iterable[grpc.StatusCode],
    reason: str | Iterable[str] | None = None,
    field: str | Iterable[str] | None = None,
) -> ErrorDetails:
    """Run `call`, assert it fails with `code` (one of them) and, when given, reason and field."""
    with pytest.raises(grpc.RpcError) as caught:
        call()
    info = error_info(caught.value)
    codes = {code} if isinstance(code, grpc.StatusCode) else set(code)
    assert info.code in codes, f"expected {codes}, got {info.code}: {info.message}"
    assert info.reason, f"{info.code} without ErrorInfo reason: {info.message}"
    assert info.domain == DOMAIN, info.domain
    assert not info.reason.startswith("ERROR_REASON_"), info.reason
    if reason is not None:
        reasons = {reason} if isinstance(reason, str) else set(reason)
        assert info.reason in reasons, f"expected reason {reasons}, got {info.reason}"
    if field is not None:
        wanted = {field} if isinstance(field, str) else set(field)
        assert wanted & set(info.fields), f"expected a violation of {wanted}, got {info.fields}"
    return info


def expect_invalid(call: Callable[[], Any], field: str | Iterable[str]) -> ErrorDetails:
    return expect_error(call, grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID", field)


def not_found_signature(call: Callable[[], Any], name: str) -> tuple[Any, ...]:
    """How a NOT_FOUND looks, with the requested name blanked out, for like-for-like comparison."""
    info = expect_error(call, grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    base = name.split("/revisions/")[0]

    def blank(text: str) -> str:
        return text.replace(name, "<name>").replace(base, "<name>")

    metadata = tuple(sorted((k, blank(v)) for k, v in info.metadata.items()))
    return (info.code, info.reason, blank(info.message), metadata, tuple(info.fields))
