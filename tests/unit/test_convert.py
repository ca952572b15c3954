"""Proto-to-domain validation: every rejection names the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from crmmem.memory.v1 import memory_pb2 as pb
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given
from hypothesis import strategies as st

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.etags import parse_etag
from memory_service.kernel.domain.model import ScopeType
from memory_service.kernel.transport.fields import (
    SCOPE_TYPES,
    check_request_id,
    key_field,
    set_time,
    subject_id,
)
from memory_service.memories.transport import convert
from tests.support import records


def violation(error: pytest.ExceptionInfo[InvalidArgument]) -> str:
    return error.value.violations[0].field


def test_unknown_enum_number_is_rejected_not_mapped() -> None:
    with pytest.raises(InvalidArgument) as error:
        SCOPE_TYPES.required(99, "memory.scope.type")
    assert violation(error) == "memory.scope.type"
    assert SCOPE_TYPES.required(pb.SCOPE_TYPE_USER, "x") is ScopeType.USER
    assert SCOPE_TYPES.optional(0, "x") is None


def test_inverted_interval_names_valid_until() -> None:
    draft = pb.RevisionDraft(
        value="x",
        provenance=pb.Provenance(
            method=pb.PROVENANCE_METHOD_USER_STATEMENT,
            transcript_message="conversations/c/messages/" + "0" * 32,
        ),
    )
    draft.valid_from.FromSeconds(2000)
    draft.valid_until.FromSeconds(1000)
    with pytest.raises(InvalidArgument) as error:
        convert.revision_draft(draft)
    assert violation(error) == "revision.valid_until"


def test_request_id_must_be_a_uuid() -> None:
    check_request_id("")
    check_request_id("0b0e7a44-3f5e-4f5e-9d5c-2b7c0c1d2e3f")
    with pytest.raises(InvalidArgument):
        check_request_id("retry-1")


def test_request_ids_have_one_canonical_spelling() -> None:
    canonical = "0f8fad5b-d9cb-469f-a165-70867728950e"
    for spelling in (
        canonical,
        canonical.upper(),
        canonical.replace("-", ""),
        f"{{{canonical}}}",
        f"urn:uuid:{canonical}",
    ):
        assert check_request_id(spelling) == canonical
    assert check_request_id("") == ""
    with pytest.raises(InvalidArgument):
        check_request_id("not-a-uuid")


@pytest.mark.parametrize(
    "parse",
    [
        lambda: parse_etag("v1\n", required=True),
        lambda: parse_etag('"v1"\n', required=True),
        lambda: subject_id("mara\n", "user_id", required=True),
        lambda: key_field("meeting_time\n", "key", required=True),
    ],
)
def test_ids_match_as_whole_strings(parse: object) -> None:
    with pytest.raises(InvalidArgument):
        parse()  # type: ignore[operator]


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)),
    st.booleans(),
)
def test_set_time_writes_what_from_datetime_writes(value: datetime, aware: bool) -> None:
    """The hand-rolled conversion agrees with protobuf's own, naive times read as UTC."""
    value = value.replace(tzinfo=UTC) if aware else value
    ours, theirs = Timestamp(), Timestamp()
    set_time(ours, value)
    theirs.FromDatetime(value)
    assert (ours.seconds, ours.nanos) == (theirs.seconds, theirs.nanos)


def test_the_latest_revision_is_the_applicable_one_when_it_applies() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    first = records.revision(1, now - timedelta(days=2))
    memory = records.memory(first, created=now - timedelta(days=2))
    out = convert.memory_proto(memory, now)
    assert out.latest_revision == out.applicable_revision
    assert out.latest_revision.revision_number == 1
    second = records.revision(2, now, valid_from=now + timedelta(days=1))
    memory.revisions.append(second)
    out = convert.memory_proto(memory, now)
    assert out.applicable_revision.revision_number == 1
    assert out.latest_revision.revision_number == 2
    assert out.latest_revision.state != 0


def test_an_organization_scope_names_no_subject_wherever_a_request_gives_one() -> None:
    """Fails on 98885d7 (hostile review) for the list filter and the recall hint: they took an
    organization id that no read would match."""
    from crmmem.memory.v1 import memory_service_pb2 as service_pb

    org = pb.SCOPE_TYPE_ORGANIZATION
    attempts = {
        "memory.scope.id": lambda: convert.scope(
            pb.Scope(type=org, id="hq"), "memory.scope", customer_id_required=False
        ),
        "scope_id": lambda: convert.memory_filter(
            service_pb.ListMemoriesRequest(scope_type=org, scope_id="hq")
        ),
    }
    for field, attempt in attempts.items():
        with pytest.raises(InvalidArgument) as error:
            attempt()
        assert violation(error) == field
    with pytest.raises(InvalidArgument) as error:
        convert.scope_hint(org, "hq")
    assert violation(error) == "scope_id"
    assert convert.scope_hint(org, "").scope_id == ""
