"""The API edge: every string and timestamp of every request is storable on every backend."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.storage import models
from memory_service.kernel.transport.edge import check_request, limit_of
from tests.support.fuzzing import MEMORY_MODULES, rpcs


def field_of(request: object) -> str:
    with pytest.raises(InvalidArgument) as error:
        check_request(request)  # type: ignore[arg-type]
    return error.value.violations[0].field


def test_nul_is_refused_in_any_string_with_its_proto_path() -> None:
    request = svc.CreateMemoryRequest(
        revision=pb.RevisionDraft(value="ok", provenance=pb.Provenance(quote="a\x00b"))
    )
    assert field_of(request) == "revision.provenance.quote"
    proposal = ctx.ProposeMemoryRequest(evidence_messages=["conversations/a/messages/b", "\x00"])
    assert field_of(proposal) == "evidence_messages[1]"


def test_lengths_follow_the_storage_columns() -> None:
    assert field_of(svc.ListMemoriesRequest(scope_id="a" * 129)) == "scope_id"
    check_request(svc.ListMemoriesRequest(scope_id="a" * 128))
    long_ref = "c" * (rules.MAX_EVIDENCE_REF_CHARS + 1)
    assert field_of(svc.ConfirmMemoryRevisionRequest(transcript_message=long_ref)) == (
        "transcript_message"
    )
    assert models.RevisionRow.__table__.c.evidence_ref.type.length == rules.MAX_EVIDENCE_REF_CHARS
    assert models.MemoryRow.__table__.c.scope_id.type.length == rules.MAX_ID_CHARS
    assert models.CustomerRow.__table__.c.display_name.type.length == (rules.MAX_DISPLAY_NAME_CHARS)


def test_every_string_field_of_every_request_has_a_limit_no_wider_than_text() -> None:
    def strings(descriptor: object, seen: frozenset[str]) -> list[FieldDescriptor]:
        found = []
        for field in descriptor.fields:  # type: ignore[attr-defined]
            if field.type == FieldDescriptor.TYPE_STRING:
                found.append(field)
            elif field.message_type is not None and field.message_type.full_name not in seen:
                found += strings(field.message_type, seen | {field.message_type.full_name})
        return found

    for rpc in rpcs(MEMORY_MODULES):
        for field in strings(rpc.request, frozenset()):
            assert 0 < limit_of(field) <= rules.MAX_MESSAGE_CHARS, field.full_name


def test_timestamps_outside_years_1_to_9999_are_refused_anywhere() -> None:
    for seconds, nanos in ((2**62, 0), (-(2**62), 0), (0, -1), (0, 10**9)):
        request = svc.GetMemoryRequest(as_of=Timestamp(seconds=seconds, nanos=nanos))
        assert field_of(request) == "as_of"
    nested = svc.CreateMemoryRequest(memory=pb.Memory(create_time=Timestamp(seconds=2**40)))
    assert field_of(nested) == "memory.create_time"


def test_repeated_fields_are_bounded_before_their_items_are_read() -> None:
    def customers(count: int) -> ctx.BuildContextRequest:
        return ctx.BuildContextRequest(
            customers=[ctx.CustomerReference(customer_id="\x00") for _ in range(count)]
        )

    assert field_of(customers(rules.MAX_CONTEXT_CUSTOMERS + 1)) == "customers"
    assert field_of(customers(rules.MAX_CONTEXT_CUSTOMERS)) == "customers[0].customer_id"
    evidence = ["conversations/a/messages/b"] * (rules.MAX_EVIDENCE_MESSAGES + 1)
    assert field_of(ctx.ProposeMemoryRequest(evidence_messages=evidence)) == "evidence_messages"
    flood = ctx.BuildContextRequest(
        customers=[ctx.CustomerReference(customer_id=f"c-{n}") for n in range(40_000)]
    )
    assert field_of(flood) == "customers"
    # Refused before its items are read: cheaper than reading the items of one at the bound
    # (whose last item is refused), measured in CPU so that neither a busy nor a faster
    # machine decides it. Read item by item, the flood would cost 400 times as much.
    last_refused = ctx.BuildContextRequest(
        customers=[
            ctx.CustomerReference(customer_id=f"c-{n}") for n in range(rules.MAX_CONTEXT_CUSTOMERS)
        ]
    )
    last_refused.customers[-1].customer_id = "\x00"
    read_all = f"customers[{rules.MAX_CONTEXT_CUSTOMERS - 1}].customer_id"
    assert field_of(last_refused) == read_all
    assert cpu_of(lambda: field_of(flood)) < cpu_of(lambda: field_of(last_refused))


def cpu_of(call: Callable[[], object], rounds: int = 5) -> float:
    """The least CPU time `call` took in `rounds` runs (this thread's: others do not count)."""
    least = float("inf")
    for _ in range(rounds):
        started = time.thread_time()
        call()
        least = min(least, time.thread_time() - started)
    return least
