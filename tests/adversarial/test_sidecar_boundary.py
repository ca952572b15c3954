"""The retrieval sidecar is a trust boundary: a process that can reach its port but does not hold
the shared secret can neither read nor change any tenant's index, and even a holder of the
secret cannot move, shadow or freeze another tenant's points. Real sidecar (model and embedded
engine) and memory service processes, on SQLite and PostgreSQL.

All of these fail on the previous main, where the sidecar answered anyone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.e2e.helpers import correct, create_pref
from tests.e2e.test_recall import memory_id, recall, recalled_values, searched, until_recalled
from tests.support.servers import TEST_RETRIEVAL_SECRET, Client, ServerProcess, sidecar_stub

WRONG_SECRETS = [
    None,  # no metadata at all
    "",
    TEST_RETRIEVAL_SECRET[:-1],
    TEST_RETRIEVAL_SECRET + "x",
    "y" * len(TEST_RETRIEVAL_SECRET),
]


@pytest.fixture
def mara(recall_server: ServerProcess, tenant: str) -> Client:
    return recall_server.client(tenant, "mara")


def document(memory: Any, tenant: str, version: int, text: str) -> rpb.Document:
    return rpb.Document(
        id=memory_id(memory),
        tenant_id=tenant,
        version=version,
        revision_number=1,
        text=text,
        scope_type="USER",
        scope_id="mara",
    )


def refused(call: Callable[[], Any]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code()  # type: ignore[no-any-return]


@pytest.mark.parametrize("secret", WRONG_SECRETS, ids=["none", "empty", "short", "long", "other"])
def test_without_the_secret_every_call_is_refused_and_changes_nothing(
    mara: Client, retrieval_server: ServerProcess, tenant: str, secret: str | None
) -> None:
    seat = create_pref(mara, "seat", "prefers aisle seats on long flights")
    until_recalled(mara, "aisle seats", "prefers aisle seats on long flights")
    stranger = sidecar_stub(retrieval_server.address, secret)
    calls: list[Callable[[], Any]] = [
        lambda: stranger.Search(rpb.SearchRequest(tenant_id=tenant, query="aisle seats")),
        lambda: stranger.UpsertDocuments(
            rpb.UpsertDocumentsRequest(documents=[document(seat, tenant, 10_000, "window seat")])
        ),
        lambda: stranger.DeleteDocuments(
            rpb.DeleteDocumentsRequest(tenant_id=tenant, all_of_tenant=True)
        ),
        lambda: stranger.DeleteDocuments(
            rpb.DeleteDocumentsRequest(tenant_id=tenant, ids=[memory_id(seat)])
        ),
        lambda: stranger.GetStats(rpb.GetStatsRequest(tenant_id=tenant)),
    ]
    for call in calls:
        assert refused(call) is grpc.StatusCode.UNAUTHENTICATED
    reply = recall(mara, "aisle seats")
    assert not reply.degraded
    assert recalled_values(reply) == ["prefers aisle seats on long flights"]
    assert memory_id(seat) in searched(retrieval_server.address, tenant, "aisle seats")


def test_health_checks_stay_open_for_probes(retrieval_server: ServerProcess) -> None:
    with grpc.insecure_channel(retrieval_server.address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_a_memory_id_sent_under_another_tenant_cannot_move_or_shadow_the_point(
    mara: Client, retrieval_server: ServerProcess, tenant: str
) -> None:
    """Even a holder of the secret: the same memory id under another tenant is another point."""
    seat = create_pref(mara, "seat", "prefers aisle seats on long flights")
    until_recalled(mara, "aisle seats", "prefers aisle seats on long flights")
    other = f"{tenant}-other"
    sidecar_stub(retrieval_server.address).UpsertDocuments(
        rpb.UpsertDocumentsRequest(documents=[document(seat, other, 2**31 - 1, "aisle seats")])
    )
    assert memory_id(seat) in searched(retrieval_server.address, tenant, "aisle seats")
    assert recalled_values(recall(mara, "aisle seats")) == ["prefers aisle seats on long flights"]
    # The real correction still reaches the index: the foreign copy froze nothing.
    correct(mara, seat, "prefers window seats on long flights")
    until_recalled(mara, "window seats", "prefers window seats on long flights")
    # And the other tenant's delete of the id leaves mara's point alone.
    sidecar_stub(retrieval_server.address).DeleteDocuments(
        rpb.DeleteDocumentsRequest(tenant_id=other, ids=[memory_id(seat)])
    )
    assert memory_id(seat) in searched(retrieval_server.address, tenant, "window seats")


@pytest.mark.parametrize("version", [2**31, 2**62, -1, 0])
def test_a_version_the_records_could_not_have_given_is_refused(
    mara: Client, retrieval_server: ServerProcess, tenant: str, version: int
) -> None:
    seat = create_pref(mara, "seat", "prefers aisle seats on long flights")
    until_recalled(mara, "aisle seats", "prefers aisle seats on long flights")
    poison = rpb.UpsertDocumentsRequest(documents=[document(seat, tenant, version, "aisle")])
    code = refused(lambda: sidecar_stub(retrieval_server.address).UpsertDocuments(poison))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    correct(mara, seat, "prefers window seats on long flights")
    until_recalled(mara, "window seats", "prefers window seats on long flights")
