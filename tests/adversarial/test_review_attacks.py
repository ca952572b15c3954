"""Attacks on document facts and the review queue, through gRPC on both databases: a signed-in
stranger, another tenant and a hostile user of the same tenant try to report versions, smuggle
secrets or odd bytes in document references, settle conflicts they may not touch, read other
people's queue items, and tamper with page tokens and request ids."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    FACT,
    SCOPE_ORG,
    create_memory,
    create_pref,
    delete,
    error_info,
    get,
    request_id,
)
from tests.e2e.test_document_facts import EXCERPT, PLAN, document_fact, report
from tests.support.servers import Client, ServerProcess

SECRET = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
CONFLICT = memory_service_pb2.REVIEW_REASON_CONFLICT
CANDIDATE_REASON = memory_service_pb2.REVIEW_REASON_CANDIDATE
SOURCE_CHANGED = memory_service_pb2.REVIEW_REASON_SOURCE_CHANGED


@pytest.fixture
def connector(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "docs-sync", ["document-connector"])


@pytest.fixture
def other_connector(memory_server: ServerProcess, other_tenant: str) -> Client:
    return memory_server.client(other_tenant, "docs-sync", ["document-connector"])


def cited(uri: str, version: str = "v1", excerpt: str = EXCERPT) -> memory_pb2.Provenance:
    return memory_pb2.Provenance(
        method=memory_pb2.PROVENANCE_METHOD_DOCUMENT,
        document=memory_pb2.DocumentSource(uri=uri, version=version, excerpt=excerpt),
    )


def resolve(
    client: Client, memory: str, kept: str, rid: str = "", etag: str = ""
) -> memory_service_pb2.ResolveConflictResponse:
    return client.memories.ResolveConflict(
        memory_service_pb2.ResolveConflictRequest(
            memory=memory, kept_memory=kept, request_id=rid or request_id(), etag=etag
        ),
        timeout=10,
    )


def queue(client: Client, **kw: Any) -> memory_service_pb2.ListReviewItemsResponse:
    return client.memories.ListReviewItems(
        memory_service_pb2.ListReviewItemsRequest(**kw), timeout=10
    )


def refused(call: object) -> tuple[str, str, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    info = error_info(caught.value)
    return info.code.name, info.reason, ",".join(info.fields)


def conflict(alice: Client, admin: Client, key: str) -> tuple[str, str]:
    mine = create_pref(alice, key, "I prefer morning meetings").name
    house = create_memory(admin, key, "Meetings are in the afternoon", scope_type=SCOPE_ORG)
    return mine, house.memory.name


def flagged(memory: memory_pb2.Memory) -> bool:
    return memory.applicable_revision.HasField("source_change_time")


# --- reporting document versions ---------------------------------------------------------


def test_a_user_without_the_connector_role_may_not_report(alice: Client, admin: Client) -> None:
    fact = document_fact(admin, "alpha.owner")
    code, reason, _ = refused(lambda: report(alice, PLAN, "v2"))
    assert (code, reason) == ("PERMISSION_DENIED", "ROLE_REQUIRED")
    assert not flagged(get(admin, fact.name))


def test_another_tenants_connector_never_flags_this_tenants_facts(
    admin: Client, other_connector: Client
) -> None:
    fact = document_fact(admin, "alpha.owner")
    answer = report(other_connector, PLAN, "v2")
    assert (answer.flagged_count, answer.previous_version) == (0, "")
    assert not flagged(get(admin, fact.name))


@pytest.mark.parametrize(
    "uri",
    [
        "https://docs.example.com/a\x00b",
        "https://docs.example.com/plän",
        "https://docs.example.com/\u202eexe.txt",
        "https://docs.example.com/" + "a" * 100_000,
        "https://sam:hunter2@docs.example.com/a",
        "https://sam@docs.example.com/a",
        "HTTPS://sam:hunter2@docs.example.com/a",
        f"https://docs.example.com/a?access_token={SECRET}",
        f"https://docs.example.com/a#token={SECRET}",
        f"s3://bucket/key?X-Amz-Credential={SECRET}",
        "s3://b/k?X-Amz-Signature=4f2b8c1e9a7d3f6b2c8e1a9d7f3b6c2e8a1d9f7b3c6e2a8d1f9b7c3e6a2d8f1b",
        f"https://docs.example.com/a?x=1&token={SECRET.replace('_', '%5F')}",
    ],
)
def test_a_bad_document_uri_is_refused_by_report_and_by_create(
    admin: Client, connector: Client, uri: str
) -> None:
    code, _, field = refused(lambda: report(connector, uri, "v2"))
    assert (code, field) == ("INVALID_ARGUMENT", "document.uri")
    code, _, field = refused(lambda: document_fact(admin, "alpha.owner", uri=uri))
    assert code == "INVALID_ARGUMENT"
    assert field.endswith("document.uri"), field


@pytest.mark.parametrize("version", ["v\x002", "v\u00e92", "v" * 129, "", "v 2", "v/2"])
def test_a_bad_version_is_refused(connector: Client, version: str) -> None:
    code, _, field = refused(lambda: report(connector, PLAN, version))
    assert (code, field) == ("INVALID_ARGUMENT", "document.version")


def test_an_excerpt_with_a_secret_is_refused_and_not_kept(admin: Client) -> None:
    code, reason, _ = refused(
        lambda: create_memory(
            admin,
            "alpha.owner",
            "Sam owns Project Alpha",
            scope_type=SCOPE_ORG,
            kind=FACT,
            evidence=cited(PLAN, excerpt=f"{EXCERPT} api key {SECRET}"),
        )
    )
    assert (code, reason) == ("INVALID_ARGUMENT", "SECRET_DETECTED")


def test_a_document_id_in_the_path_is_not_taken_for_a_secret(admin: Client) -> None:
    uri = "https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789_-AbC/edit?usp=sharing"
    fact = document_fact(
        admin, "alpha.owner", uri=uri, version="3f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    )
    assert fact.applicable_revision.provenance.document.uri == uri


def test_an_excerpt_that_does_not_support_the_value_never_applies(admin: Client) -> None:
    memory = create_memory(
        admin,
        "beta.owner",
        "Kim owns Project Beta",
        scope_type=SCOPE_ORG,
        kind=FACT,
        evidence=cited(PLAN),
    ).memory
    assert not memory.HasField("applicable_revision")


def test_a_replayed_report_with_another_body_is_refused(admin: Client, connector: Client) -> None:
    fact = document_fact(admin, "alpha.owner")
    rid = request_id()
    first = report(connector, PLAN, "v1", rid)
    assert first.flagged_count == 0
    code, reason, _ = refused(lambda: report(connector, PLAN, "v2", rid))
    assert (code, reason) == ("INVALID_ARGUMENT", "REQUEST_ID_REUSED")
    assert not flagged(get(admin, fact.name))
    assert report(connector, PLAN, "v1", rid) == first


# --- resolving conflicts -----------------------------------------------------------------


def test_a_stranger_cannot_resolve_or_probe_someone_elses_conflict(
    alice: Client, bob: Client, admin: Client
) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    assert refused(lambda: resolve(bob, mine, house))[0] == "NOT_FOUND"
    # bob's own memory against alice's: alice's stays unseen
    own = create_pref(bob, "meeting_time", "I prefer evenings").name
    assert refused(lambda: resolve(bob, own, mine))[0] == "NOT_FOUND"
    assert get(alice, mine).HasField("applicable_revision")


def test_another_tenant_cannot_resolve_this_tenants_conflict(
    alice: Client, admin: Client, other_admin: Client, alice_elsewhere: Client
) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    for caller in (other_admin, alice_elsewhere):
        assert refused(lambda caller=caller: resolve(caller, mine, house))[0] == "NOT_FOUND"
        assert refused(lambda caller=caller: resolve(caller, house, mine))[0] == "NOT_FOUND"
    assert get(alice, mine).HasField("applicable_revision")
    assert get(admin, house).HasField("applicable_revision")


def test_a_user_cannot_close_the_organizations_side(alice: Client, admin: Client) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    assert refused(lambda: resolve(alice, house, mine))[0] == "PERMISSION_DENIED"
    assert get(admin, house).HasField("applicable_revision")


def test_keeping_or_closing_a_deleted_memory_is_refused(alice: Client, admin: Client) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    delete(admin, house)
    code, _, _ = refused(lambda: resolve(alice, mine, house))
    assert code in ("FAILED_PRECONDITION", "NOT_FOUND")
    assert get(alice, mine).HasField("applicable_revision")
    mine2, house2 = conflict(alice, admin, "lunch_time")
    delete(alice, mine2)
    code, _, _ = refused(lambda: resolve(admin, house2, mine2))
    assert code in ("FAILED_PRECONDITION", "NOT_FOUND")
    assert get(admin, house2).HasField("applicable_revision")


def test_memories_not_in_conflict_or_the_same_memory_are_refused(
    alice: Client, admin: Client
) -> None:
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings").name
    house = create_memory(admin, "lunch_time", "Lunch is at noon", scope_type=SCOPE_ORG).memory.name
    code, reason, _ = refused(lambda: resolve(alice, mine, house))
    assert (code, reason) == ("FAILED_PRECONDITION", "NOT_IN_CONFLICT")
    code, _, field = refused(lambda: resolve(alice, mine, mine))
    assert (code, field) == ("INVALID_ARGUMENT", "kept_memory")
    assert get(alice, mine).HasField("applicable_revision")


def test_resolving_both_ways_one_after_the_other_leaves_one(alice: Client, admin: Client) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    resolve(admin, house, mine)
    code, reason, _ = refused(lambda: resolve(alice, mine, house))
    assert (code, reason) == ("FAILED_PRECONDITION", "NOT_IN_CONFLICT")
    applying = [n for n in (mine, house) if get(admin, n).HasField("applicable_revision")]
    assert applying == [mine]


def test_a_replayed_resolution_with_another_body_is_refused(alice: Client, admin: Client) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    mine2, house2 = conflict(alice, admin, "lunch_time")
    rid = request_id()
    first = resolve(alice, mine, house, rid)
    code, reason, _ = refused(lambda: resolve(alice, mine2, house2, rid))
    assert (code, reason) == ("INVALID_ARGUMENT", "REQUEST_ID_REUSED")
    assert get(alice, mine2).HasField("applicable_revision")
    assert resolve(alice, mine, house, rid) == first


def test_a_request_id_of_another_user_replays_nothing(
    alice: Client, bob: Client, admin: Client
) -> None:
    mine, house = conflict(alice, admin, "meeting_time")
    rid = request_id()
    resolve(alice, mine, house, rid)
    assert refused(lambda: resolve(bob, mine, house, rid))[0] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("memory", "field"),
    [
        ("memories/../x", "memory"),
        ("memories/\x00", "memory"),
        ("m" * 10_000, "memory"),
        ("", "memory"),
    ],
)
def test_crafted_names_are_invalid_arguments(alice: Client, memory: str, field: str) -> None:
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings").name
    code, _, got = refused(lambda: resolve(alice, memory, mine))
    assert (code, got) == ("INVALID_ARGUMENT", field)
    code, _, got = refused(lambda: resolve(alice, mine, memory))
    assert (code, got) == ("INVALID_ARGUMENT", "kept_memory")


# --- listing the queue ---------------------------------------------------------------------


def test_the_queue_reveals_nothing_of_other_users_or_tenants(
    alice: Client, bob: Client, admin: Client, carol: Client, alice_elsewhere: Client
) -> None:
    conflict(alice, admin, "meeting_time")
    create_memory(
        alice, "alpha.owner", "Sam owns Project Alpha", kind=FACT, evidence=cited(PLAN)
    )  # a document never states her own preference: a candidate
    assert queue(alice, page_size=10).items
    for caller in (bob, carol, alice_elsewhere):
        page = queue(caller, page_size=1)
        assert (list(page.items), page.next_page_token) == ([], "")


def test_a_page_token_is_bound_to_its_filter_and_caller(
    alice: Client, bob: Client, admin: Client
) -> None:
    for key in ("a_time", "b_time", "c_time"):
        conflict(alice, admin, key)
    first = queue(alice, page_size=1, reasons=[CONFLICT])
    assert first.next_page_token
    token = first.next_page_token
    for caller, kw in (
        (alice, {"reasons": [CANDIDATE_REASON]}),
        (alice, {"reasons": [CONFLICT, SOURCE_CHANGED]}),
        (alice, {"reasons": [CONFLICT], "unused_days": 5}),
        (bob, {"reasons": [CONFLICT]}),
    ):
        code, _, field = refused(
            lambda caller=caller, kw=kw: queue(caller, page_size=1, page_token=token, **kw)
        )
        assert (code, field) == ("INVALID_ARGUMENT", "page_token")
    payload, mac = token.split(".")
    for bad in (payload + "A." + mac, payload + "." + mac[:-2], "x" * 5000, token + "."):
        code, _, field = refused(
            lambda bad=bad: queue(alice, page_size=1, page_token=bad, reasons=[CONFLICT])
        )
        assert (code, field) == ("INVALID_ARGUMENT", "page_token")
    again = queue(alice, page_size=1, page_token=token, reasons=[CONFLICT])
    assert [i.memory.name for i in again.items] != [i.memory.name for i in first.items]


@pytest.mark.parametrize("days", [-1, 3651, 2**31 - 1, -(2**31)])
def test_unused_days_out_of_range(alice: Client, days: int) -> None:
    code, _, field = refused(lambda: queue(alice, unused_days=days))
    assert (code, field) == ("INVALID_ARGUMENT", "unused_days")


@pytest.mark.parametrize("reasons", [[99], [-1], [0], [CONFLICT] * 6])
def test_crafted_reasons_are_invalid(alice: Client, reasons: list[int]) -> None:
    code, _, field = refused(lambda: queue(alice, reasons=reasons))
    assert code == "INVALID_ARGUMENT"
    assert field.startswith("reasons"), field


@pytest.mark.parametrize("size", [-1, 10**6])
def test_page_sizes_out_of_range(alice: Client, size: int) -> None:
    try:
        page = queue(alice, page_size=size)
    except grpc.RpcError as error:
        info = error_info(error)
        assert (info.code.name, info.fields) == ("INVALID_ARGUMENT", ["page_size"])
    else:
        assert len(page.items) <= 1000
