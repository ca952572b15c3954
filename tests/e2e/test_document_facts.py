"""Facts that come from documents, through gRPC on both databases: a document reference, its
version and the supporting excerpt as provenance; a connector's report of a new version marks
exactly the memories that rest on an older one; contexts flag them or leave them out."""

from __future__ import annotations

import uuid

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    CANDIDATE,
    FACT,
    SCOPE_CUSTOMER,
    SCOPE_ORG,
    SCOPE_USER,
    create_memory,
    delete,
    error_info,
    get,
    request_id,
    revisions,
)
from tests.support.servers import Client, ServerProcess

DOCUMENT = memory_pb2.PROVENANCE_METHOD_DOCUMENT
PLAN = "https://docs.example.com/plans/alpha"
HANDBOOK = "https://docs.example.com/handbook"
EXCERPT = "Project Alpha: Sam owns Project Alpha and reports weekly to the steering group."


def cited(uri: str, version: str, excerpt: str = EXCERPT, quote: str = "") -> memory_pb2.Provenance:
    return memory_pb2.Provenance(
        method=DOCUMENT,
        document=memory_pb2.DocumentSource(uri=uri, version=version, excerpt=excerpt),
        quote=quote,
    )


def document_fact(
    client: Client,
    key: str,
    uri: str = PLAN,
    version: str = "v1",
    *,
    value: str = "Sam owns Project Alpha",
    scope_type: int = SCOPE_ORG,
    scope_id: str = "",
) -> memory_pb2.Memory:
    return create_memory(
        client,
        key,
        value,
        scope_type=scope_type,
        scope_id=scope_id,
        kind=FACT,
        evidence=cited(uri, version),
    ).memory


def report(
    client: Client, uri: str, version: str, rid: str = ""
) -> memory_service_pb2.ReportDocumentVersionResponse:
    return client.memories.ReportDocumentVersion(
        memory_service_pb2.ReportDocumentVersionRequest(
            document=memory_pb2.DocumentSource(uri=uri, version=version),
            request_id=rid or request_id(),
        ),
        timeout=10,
    )


@pytest.fixture
def connector(memory_server: ServerProcess, tenant: str) -> Client:
    return memory_server.client(tenant, "docs-sync", ["document-connector"])


def flagged(memory: memory_pb2.Memory) -> bool:
    return memory.applicable_revision.HasField("source_change_time")


def test_a_document_fact_keeps_reference_version_and_excerpt_and_no_copy(admin: Client) -> None:
    memory = document_fact(admin, "project_alpha.owner")
    revision = memory.applicable_revision
    assert revision.state == ACTIVE  # organization memory, grounded in its excerpt
    assert revision.provenance.method == DOCUMENT
    assert revision.provenance.speaker == memory_pb2.SPEAKER_TOOL
    document = revision.provenance.document
    assert (document.uri, document.version, document.excerpt) == (PLAN, "v1", EXCERPT)
    assert revision.inferred
    assert not flagged(memory)


def test_a_document_never_states_a_users_own_preference(alice: Client) -> None:
    memory = document_fact(alice, "project_alpha.owner", scope_type=SCOPE_USER)
    assert memory.latest_revision.state == CANDIDATE
    assert not memory.HasField("applicable_revision")


def test_an_excerpt_that_does_not_support_the_value_leaves_a_candidate(admin: Client) -> None:
    memory = create_memory(
        admin,
        "project_beta.owner",
        "Kim owns Project Beta",
        scope_type=SCOPE_ORG,
        kind=FACT,
        evidence=cited(PLAN, "v1"),
    ).memory
    assert memory.latest_revision.state == CANDIDATE
    assert memory.latest_revision.status_reason.startswith("UNGROUNDED:")


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (memory_pb2.DocumentSource(uri="plans/alpha", version="v1", excerpt=EXCERPT), "uri"),
        (memory_pb2.DocumentSource(uri="https://x.test/a b", version="v1", excerpt=EXCERPT), "uri"),
        (
            memory_pb2.DocumentSource(
                uri="https://sam:hunter2@docs.example.com/a", version="v1", excerpt=EXCERPT
            ),
            "uri",
        ),
        (memory_pb2.DocumentSource(uri="", version="v1", excerpt=EXCERPT), "uri"),
        (
            memory_pb2.DocumentSource(uri="https://x.test/" + "a" * 320, version="v1", excerpt="x"),
            "uri",
        ),
        (memory_pb2.DocumentSource(uri=PLAN, version="", excerpt=EXCERPT), "version"),
        (memory_pb2.DocumentSource(uri=PLAN, version="v 1", excerpt=EXCERPT), "version"),
        (memory_pb2.DocumentSource(uri=PLAN, version="v1", excerpt=""), "excerpt"),
        (memory_pb2.DocumentSource(uri=PLAN, version="v1", excerpt="Sam " * 300), "excerpt"),
    ],
)
def test_a_document_reference_is_validated(
    admin: Client, document: memory_pb2.DocumentSource, field: str
) -> None:
    provenance = memory_pb2.Provenance(method=DOCUMENT, document=document)
    with pytest.raises(grpc.RpcError) as caught:
        create_memory(
            admin, "doc.fact", "Sam owns Project Alpha", scope_type=SCOPE_ORG, evidence=provenance
        )
    error = error_info(caught.value)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.fields == [f"revision.provenance.document.{field}"]


def test_the_document_method_and_document_evidence_go_together(admin: Client) -> None:
    wrong = memory_pb2.Provenance(
        method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
        document=memory_pb2.DocumentSource(uri=PLAN, version="v1", excerpt=EXCERPT),
    )
    with pytest.raises(grpc.RpcError) as caught:
        create_memory(
            admin, "doc.fact", "Sam owns Project Alpha", scope_type=SCOPE_ORG, evidence=wrong
        )
    assert error_info(caught.value).fields == ["revision.provenance.method"]
    output_only = cited(PLAN, "v1")
    output_only.method = memory_pb2.PROVENANCE_METHOD_REVIEW_DECISION
    with pytest.raises(grpc.RpcError) as caught:
        create_memory(
            admin, "doc.fact", "Sam owns Project Alpha", scope_type=SCOPE_ORG, evidence=output_only
        )
    assert error_info(caught.value).fields == ["revision.provenance.method"]


def test_a_new_version_flags_exactly_the_dependent_memories(
    admin: Client, connector: Client, other_admin: Client, memory_server: ServerProcess, tenant: str
) -> None:
    older = document_fact(admin, "project_alpha.owner")
    customer = document_fact(admin, "alpha.sponsor", scope_type=SCOPE_CUSTOMER, scope_id="acme")
    current = document_fact(admin, "alpha.lead", version="v2")
    other_document = document_fact(admin, "handbook.owner", uri=HANDBOOK)
    elsewhere = document_fact(other_admin, "project_alpha.owner")  # same URI, other tenant
    moved_on = document_fact(admin, "alpha.owner.latest")
    corrected = admin.memories.CorrectMemory(
        memory_service_pb2.CorrectMemoryRequest(
            name=moved_on.name,
            etag=moved_on.etag,
            revision=memory_pb2.RevisionDraft(
                value="Sam owns Project Alpha", provenance=cited(PLAN, "v2")
            ),
            request_id=request_id(),
        ),
        timeout=10,
    ).memory
    assert corrected.applicable_revision.provenance.document.version == "v2"

    rid = request_id()
    reply = report(connector, PLAN, "v2", rid)
    assert reply.flagged_count == 2
    assert sorted(reply.flagged_memories) == sorted([older.name, customer.name])
    assert reply.previous_version == ""

    assert flagged(get(admin, older.name))
    assert flagged(get(admin, customer.name))
    for untouched in (current, other_document, moved_on):
        assert not flagged(get(admin, untouched.name)), untouched.key
    assert not flagged(get(other_admin, elsewhere.name))
    # The superseded revision of the corrected memory is history: not marked either.
    assert not any(r.HasField("source_change_time") for r in revisions(admin, moved_on.name))

    # A retry answers the same; a new report of the current version changes nothing.
    assert report(connector, PLAN, "v2", rid) == reply
    again = report(connector, PLAN, "v2")
    assert (again.flagged_count, again.previous_version) == (0, "v2")


def test_a_fact_written_from_an_old_version_is_flagged_at_once(
    admin: Client, connector: Client
) -> None:
    report(connector, PLAN, "v3")
    late = document_fact(admin, "project_alpha.owner", version="v2")
    assert flagged(late)
    fresh = document_fact(admin, "alpha.owner.fresh", version="v3")
    assert not flagged(fresh)


def test_only_admins_and_connectors_report_versions(
    alice: Client, admin: Client, connector: Client
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        report(alice, PLAN, "v2")
    error = error_info(caught.value)
    assert (error.code, error.reason) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    assert report(admin, PLAN, "v2").flagged_count == 0
    with pytest.raises(grpc.RpcError) as caught:
        report(connector, "no uri", "v2")
    assert error_info(caught.value).fields == ["document.uri"]


def test_build_context_flags_a_changed_source_or_leaves_it_out_with_the_reason(
    admin: Client, connector: Client
) -> None:
    changed = document_fact(admin, "project_alpha.owner")
    steady = document_fact(admin, "handbook.owner", uri=HANDBOOK)
    report(connector, PLAN, "v2")

    shown = admin.context.BuildContext(ctx_pb.BuildContextRequest(), timeout=10)
    flags = {m.memory.name: m.source_changed for m in shown.memories}
    assert flags[changed.name] is True
    assert flags[steady.name] is False

    strict = admin.context.BuildContext(
        ctx_pb.BuildContextRequest(exclude_source_changed=True), timeout=10
    )
    assert changed.name not in {m.memory.name for m in strict.memories}
    assert steady.name in {m.memory.name for m in strict.memories}
    assert (
        ctx_pb.Exclusion(
            subject=f"{changed.name}/revisions/1",
            reason=ctx_pb.EXCLUSION_REASON_SOURCE_CHANGED,
        )
        in strict.excluded
    )


def test_deleting_a_document_fact_purges_its_excerpt(admin: Client) -> None:
    memory = document_fact(admin, "project_alpha.owner")
    deleted = delete(admin, memory.name, request_id=request_id()).memory
    assert all(not r.provenance.document.excerpt and not r.value for r in [deleted.latest_revision])
    # The same version cannot write the deleted fact again; a later version may.
    with pytest.raises(grpc.RpcError) as caught:
        document_fact(admin, "project_alpha.owner")
    assert error_info(caught.value).reason == "STALE_EVIDENCE"
    assert document_fact(admin, "project_alpha.owner", version="v2").applicable_revision.value


def test_a_secret_in_an_excerpt_is_refused(admin: Client) -> None:
    excerpt = f"Sam owns Project Alpha. Admin password: Tr0ub4dor&3-{uuid.uuid4().hex[:6]}"
    with pytest.raises(grpc.RpcError) as caught:
        create_memory(
            admin,
            "project_alpha.owner",
            "Sam owns Project Alpha",
            scope_type=SCOPE_ORG,
            kind=FACT,
            evidence=cited(PLAN, "v1", excerpt=excerpt),
        )
    assert error_info(caught.value).reason == "SECRET_DETECTED"
