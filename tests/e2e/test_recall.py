"""Search proposes, the records decide (I8), through both services as separate processes with
the real model and Qdrant's embedded engine: semantic recall, stale text after a correction
(A15), foreign, deleted and invisible candidates, the sidecar killed and restarted (A14), and
one trace across both services."""

from __future__ import annotations

import datetime as dt
import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.retrieval.v1 import retrieval_service_pb2 as rpb
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc as rpb_grpc

from tests.conftest import memory_env, start_retrieval
from tests.e2e.helpers import correct, create_pref, delete
from tests.support.otlp import OtlpCollector
from tests.support.pace import StallWatch, deadline_for, slowest_round_trip
from tests.support.polling import eventually
from tests.support.servers import (
    Client,
    ServerProcess,
    database_url,
    sidecar_stub,
    start_server,
)

DROPPED = memory_service_pb2.DropReason


def recall(
    client: Client, query: str, timeout: float = 10, **kwargs: object
) -> memory_service_pb2.RecallMemoriesResponse:
    return client.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query=query, **kwargs),  # type: ignore[arg-type]
        timeout=timeout,
    )


def recalled_values(reply: memory_service_pb2.RecallMemoriesResponse) -> list[str]:
    return [r.memory.applicable_revision.value for r in reply.memories]


def until_recalled(client: Client, query: str, value: str) -> None:
    eventually(
        lambda: value in recalled_values(recall(client, query, limit=10)),
        message=f"{value!r} was never recalled",
    )


def sidecar(address: str) -> rpb_grpc.RetrievalServiceStub:
    return sidecar_stub(address)


def inject(address: str, tenant: str, documents: list[tuple[memory_pb2.Memory, str]]) -> None:
    """Make the sidecar hold these texts for these memories, filed as mara's, at a version newer
    than anything the outbox will send: search now proposes what the records may not support."""
    sidecar(address).UpsertDocuments(
        rpb.UpsertDocumentsRequest(
            documents=[
                rpb.Document(
                    id=memory_id(memory),
                    tenant_id=tenant,
                    version=10_000,
                    revision_number=1,
                    text=text,
                    scope_type="USER",
                    scope_id="mara",
                )
                for memory, text in documents
            ]
        )
    )


def searched(address: str, tenant: str, query: str) -> list[str]:
    """The ids the sidecar itself proposes, before any validation."""
    reply = sidecar(address).Search(rpb.SearchRequest(tenant_id=tenant, query=query, limit=10))
    return [c.id for c in reply.candidates]


def memory_id(memory: memory_pb2.Memory) -> str:
    return memory.name.split("/")[1]


def dropped(reply: memory_service_pb2.RecallMemoriesResponse) -> dict[int, int]:
    return {d.reason: d.count for d in reply.dropped}


@pytest.fixture
def mara(recall_server: ServerProcess, tenant: str) -> Client:
    return recall_server.client(tenant, "mara")


def test_semantic_query_finds_the_meeting_preference(mara: Client) -> None:
    create_pref(mara, "meeting_time", "prefers meetings after 1 pm", key_context="work")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    create_pref(mara, "lunch", "vegetarian, no mushrooms")
    until_recalled(mara, "what time does she like meetings?", "prefers meetings after 1 pm")
    reply = recall(mara, "what time does she like meetings?", limit=1)
    assert not reply.degraded
    assert recalled_values(reply) == ["prefers meetings after 1 pm"]
    best = reply.memories[0]
    assert best.memory.applicable_revision.provenance.transcript_message
    assert best.score > 0.3


def test_corrected_memory_never_comes_back_as_the_old_revision(
    mara: Client, retrieval_server: ServerProcess, tenant: str
) -> None:
    """A15: even when the index still holds the old text, the old revision has no authority."""
    morning = create_pref(mara, "meeting_time", "prefers morning meetings")
    until_recalled(mara, "morning meetings", "prefers morning meetings")
    corrected = correct(mara, morning, "prefers afternoon meetings").memory
    until_recalled(mara, "afternoon meetings", "prefers afternoon meetings")
    inject(
        retrieval_server.address, tenant, [(corrected, "meeting time: prefers morning meetings")]
    )
    stale = sidecar(retrieval_server.address).Search(
        rpb.SearchRequest(tenant_id=tenant, query="prefers morning meetings", limit=3)
    )
    assert (memory_id(corrected), 1) in [(c.id, c.revision_number) for c in stale.candidates]
    reply = recall(mara, "prefers morning meetings")
    assert not reply.degraded
    assert "prefers morning meetings" not in recalled_values(reply)
    assert all(r.memory.applicable_revision.revision_number != 1 for r in reply.memories)
    assert dropped(reply).get(DROPPED.DROP_REASON_STALE_REVISION) == 1


def test_a_correction_that_takes_effect_later_is_recalled_once_it_applies(
    mara: Client, retrieval_server: ServerProcess, tenant: str
) -> None:
    """The re-index when the correction takes effect carries the memory's version unchanged
    (nothing was written since) and the newer revision: the index must take it. Otherwise it
    keeps the old text under that version for good, recall drops it as a stale revision, and
    the memory can no longer be found by search at all."""
    parking = create_pref(mara, "parking", "parks on level 2, bay 14")
    until_recalled(mara, "where does she park?", "parks on level 2, bay 14")
    takes_effect = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)
    correct(mara, parking, "parks on level 5, bay 3", valid_from=takes_effect)
    time.sleep(max(0.0, (takes_effect - dt.datetime.now(dt.UTC)).total_seconds()))
    until_recalled(mara, "where does she park?", "parks on level 5, bay 3")
    revisions = [
        c.revision_number
        for c in sidecar(retrieval_server.address)
        .Search(rpb.SearchRequest(tenant_id=tenant, query="parks on level 5, bay 3", limit=10))
        .candidates
        if c.id == memory_id(parking)
    ]
    assert revisions == [2]


def test_foreign_tenant_and_deleted_candidates_are_dropped(
    recall_server: ServerProcess, retrieval_server: ServerProcess, tenant: str
) -> None:
    mara = recall_server.client(tenant, "mara")
    stranger = recall_server.client(f"{tenant}-x", "mara")
    foreign = create_pref(stranger, "shirt_color", "prefers crimson shirts")
    gone = create_pref(mara, "shoe_size", "wears size 44 crimson shoes")
    until_recalled(mara, "crimson shoes", "wears size 44 crimson shoes")
    delete(mara, gone.name)
    eventually(
        lambda: memory_id(gone) not in searched(retrieval_server.address, tenant, "crimson shoes"),
        message="the deleted memory stayed in the index",
    )
    # Now make search propose both anyway: a foreign id filed under our tenant, and the deleted one.
    inject(
        retrieval_server.address,
        tenant,
        [(foreign, "crimson shirts"), (gone, "crimson shoes size 44")],
    )
    reply = recall(mara, "crimson shirts and shoes", limit=10)
    assert not reply.degraded
    assert reply.memories == []
    assert dropped(reply) == {DROPPED.DROP_REASON_NOT_FOUND: 1, DROPPED.DROP_REASON_DELETED: 1}


def test_another_users_memory_is_never_recalled(
    recall_server: ServerProcess, retrieval_server: ServerProcess, tenant: str
) -> None:
    mara = recall_server.client(tenant, "mara")
    sam = recall_server.client(tenant, "sam")
    secret = create_pref(sam, "gift_idea", "wants a turquoise fountain pen")
    until_recalled(sam, "turquoise pen", "wants a turquoise fountain pen")
    assert recall(mara, "turquoise fountain pen").memories == []
    inject(
        retrieval_server.address, tenant, [(secret, "turquoise fountain pen")]
    )  # sam's, filed as mara's
    reply = recall(mara, "turquoise fountain pen")
    assert reply.memories == []
    assert dropped(reply) == {}  # not even counted: a count would say that sam's exists


def test_recall_validates_its_input(mara: Client) -> None:
    for request in (
        memory_service_pb2.RecallMemoriesRequest(query=""),
        memory_service_pb2.RecallMemoriesRequest(query="x", limit=51),
        memory_service_pb2.RecallMemoriesRequest(query="x" * 2001),
        memory_service_pb2.RecallMemoriesRequest(query="x", scope_id="mara"),
    ):
        with pytest.raises(grpc.RpcError) as error:
            mara.memories.RecallMemories(request, timeout=5)
        assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_one_trace_spans_both_services(mara: Client, otlp: OtlpCollector) -> None:
    """One recall: the memory service's server span, its SQL and its client call, and the
    sidecar's server span, embedding and vector search, all under one trace id."""
    recall(mara, f"favourite colour {uuid.uuid4().hex[:6]}")

    def our_traces(spans: list[Any]) -> set[str]:
        return {
            s.trace_id
            for s in spans
            if s.name.endswith("/RecallMemories")
            and s.attributes.get("crmmem.tenant_id") == mara.tenant
        }

    def complete(spans: list[Any]) -> bool:
        traces = our_traces(spans)
        names = {s.name for s in spans if s.trace_id in traces}
        return {"embed.query", "vector.search", "recall.validate"} <= names

    spans = otlp.wait_for(complete)
    traces = our_traces(spans)
    assert len(traces) == 1, "one recall, one trace"
    in_trace = [s for s in spans if s.trace_id in traces]
    assert {s.service for s in in_trace} == {"memory-service", "retrieval-service"}
    assert {"embed.query", "vector.search", "recall.validate"} <= {s.name for s in in_trace}
    sidecar_search = [
        s for s in in_trace if s.service == "retrieval-service" and s.name.endswith("/Search")
    ]
    assert sidecar_search, "the sidecar's server span joined the trace"
    server_span = next(s for s in in_trace if s.name.endswith("/RecallMemories"))
    assert server_span.attributes["crmmem.recall.degraded"] is False
    assert "crmmem.recall.dropped" in server_span.attributes
    assert server_span.attributes["crmmem.rpc"] == "RecallMemories"
    sql = [s for s in in_trace if s.service == "memory-service" and "db.system" in s.attributes]
    assert sql, "the recall's SQL shows up in its trace"
    assert {s.attributes["db.system"] for s in sql} <= {"sqlite", "postgresql"}


# --- A14: the sidecar dies and comes back ------------------------------------------------------


@pytest.fixture
def private_stack(tmp_path: Path) -> Iterator[tuple[ServerProcess, Callable[[], ServerProcess]]]:
    """A memory service and a sidecar of its own, so the test may kill the sidecar."""
    sidecar_dir = tmp_path / "sidecar"
    first = start_retrieval(sidecar_dir)
    listen = first.address
    with database_url("sqlite", tmp_path)() as url:
        memory = start_server(
            "memory_service",
            memory_env(
                url,
                MEMORY_RETRIEVAL_ADDRESS=listen,
                MEMORY_RECALL_TIMEOUT_MS="300",
                MEMORY_BREAKER_RESET_SECONDS="1",
                MEMORY_OUTBOX_POLL_SECONDS="0.05",
            ),
            tmp_path / "memory",
        )
        current = [first]

        def restart() -> ServerProcess:
            current[0] = start_retrieval(sidecar_dir, RETRIEVAL_LISTEN=listen)
            return current[0]

        yield memory, lambda: current[0] if current[0].process.poll() is None else restart()
        memory.stop()
        current[0].stop()


def list_memories(client: Client) -> None:
    client.memories.ListMemories(memory_service_pb2.ListMemoriesRequest(page_size=1), timeout=30)


def test_sidecar_killed_recall_degrades_writes_continue_and_outbox_catches_up(
    private_stack: tuple[ServerProcess, Callable[[], ServerProcess]],
) -> None:
    memory, sidecar_process = private_stack
    mara = memory.client("acme", "mara")
    create_pref(mara, "shirt_color", "prefers blue shirts")
    until_recalled(mara, "shirt colour", "prefers blue shirts")

    os.kill(sidecar_process().process.pid, signal.SIGKILL)
    sidecar_process().process.wait()
    # At most the 300 ms search timeout, plus 200 ms for the rest of the call, or what a call
    # without search takes on a machine busier than that allows (tests/support/pace.py).
    rest = deadline_for(0.2, slowest_round_trip(lambda: list_memories(mara)))
    # A recall caught in a stall of the whole machine (a call without search as slow, at the
    # same moment) is made again: five must answer in time, up to 20 tries.
    control = memory.client("acme", "control")
    with StallWatch(lambda: list_memories(control)) as watch:
        quick = tries = 0
        while quick < 5:
            tries += 1
            started = time.perf_counter()
            reply = recall(mara, "shirt colour", timeout=5)
            elapsed = time.perf_counter() - started
            assert reply.degraded, "recall must say it is degraded"
            assert reply.memories == []
            assert reply.degraded_reason
            late = elapsed >= 0.3 + rest
            if late and tries < 20 and watch.stalled(started, started + elapsed, rest / 3):
                continue
            assert elapsed < 0.3 + rest, f"recall took {elapsed:.3f}s with the sidecar down"
            quick += 1

    # Writes keep working while search is down.
    created = create_pref(mara, "tie_color", "prefers green ties")
    assert created.applicable_revision.value == "prefers green ties"

    sidecar_process()  # restart on the same address
    until_recalled(mara, "what colour ties", "prefers green ties")
    # What was indexed before the kill is there too. (One search may still miss this stack's
    # 300 ms search timeout on a busy machine just after the restart: asked until it answers.)
    until_recalled(mara, "shirt colour", "prefers blue shirts")


def test_reindex_rebuilds_a_tenants_index_from_the_records(
    recall_server: ServerProcess, retrieval_server: ServerProcess, tenant: str
) -> None:
    admin = recall_server.client(tenant, "ada", ["admin"])
    mara = recall_server.client(tenant, "mara")
    create_pref(mara, "lunch", "vegetarian lunch, no mushrooms")
    gone = create_pref(mara, "snack", "loves salted almonds")
    until_recalled(mara, "what does she eat for lunch?", "vegetarian lunch, no mushrooms")
    delete(mara, gone.name)
    sidecar(retrieval_server.address).DeleteDocuments(
        rpb.DeleteDocumentsRequest(tenant_id=tenant, all_of_tenant=True)
    )
    assert recall(mara, "what does she eat for lunch?").memories == []
    with pytest.raises(grpc.RpcError) as error:
        mara.memories.ReindexMemories(memory_service_pb2.ReindexMemoriesRequest())
    assert error.value.code() is grpc.StatusCode.PERMISSION_DENIED
    reply = admin.memories.ReindexMemories(memory_service_pb2.ReindexMemoriesRequest())
    assert reply.queued_count == 1  # the deleted memory is not brought back
    until_recalled(mara, "what does she eat for lunch?", "vegetarian lunch, no mushrooms")
    assert "loves salted almonds" not in recalled_values(recall(mara, "salted almonds snack"))


def test_a6_delete_while_extraction_is_in_flight(
    recall_server: ServerProcess, retrieval_server: ServerProcess, tenant: str
) -> None:
    """The late job cannot recreate the memory, the next context excludes it, the sidecar no
    longer returns its id, and the receipt says what was and was not reached (I9, I10)."""
    mara = recall_server.client(tenant, "mara")
    said = mara.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/c-{uuid.uuid4().hex[:6]}",
            message=tr.Message(speaker=memory_pb2.SPEAKER_USER, text="I prefer aisle seats"),
        )
    ).message.name
    seat = create_pref(mara, "seat", "prefers aisle seats", evidence=said)
    until_recalled(mara, "which seat does she like on flights?", "prefers aisle seats")
    # The extraction job read the message before the deletion and commits after it.
    receipt = delete(mara, seat.name).receipt
    assert {e.copy for e in receipt.removed} >= {"store", "search_index"}
    assert {e.copy for e in receipt.not_reached} >= {"backups", "model_providers"}
    late = mara.context.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=memory_pb2.Memory(
                scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER),
                key="seat",
                kind=memory_pb2.MEMORY_KIND_PREFERENCE,
            ),
            value="prefers aisle seats",
            method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
            evidence_messages=[said],
        )
    )
    assert late.decision == ctx_pb.PROPOSAL_DECISION_REFUSED_STALE
    assert "deleted" in late.reason
    context = mara.context.BuildContext(ctx_pb.BuildContextRequest())
    assert all(m.memory.key != "seat" for m in context.memories)
    eventually(
        lambda: memory_id(seat) not in searched(retrieval_server.address, tenant, "aisle seats"),
        message="the sidecar still returns the deleted memory",
    )


def test_proposal_decisions_and_outbox_lag_are_searchable_in_traces(
    mara: Client, otlp: OtlpCollector
) -> None:
    said = mara.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/c-{uuid.uuid4().hex[:6]}",
            message=tr.Message(speaker=memory_pb2.SPEAKER_USER, text="my password is Hunter2!"),
        )
    ).message.name
    mara.context.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=memory_pb2.Memory(
                scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER),
                key="login",
                kind=memory_pb2.MEMORY_KIND_FACT,
            ),
            value="password Hunter2!",
            method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
            evidence_messages=[said],
        )
    )
    create_pref(mara, "desk", "likes a standing desk")

    def found(spans: list[Any]) -> bool:
        decided = [
            s for s in spans
            if s.name.endswith("/ProposeMemory")
            and s.attributes.get("crmmem.tenant_id") == mara.tenant
            and s.attributes.get("crmmem.proposal.decision") == "REFUSED_SECRET"
        ]  # fmt: skip
        drained = [s for s in spans if "crmmem.outbox.lag_seconds" in s.attributes]
        return bool(decided and drained)

    assert found(otlp.wait_for(found)), "decision and outbox lag attributes were exported"


def test_a_caller_without_a_deadline_gets_recall_not_internal(mara: Client) -> None:
    """gRPC reports a call without a deadline as an infinite time remaining; recall must treat
    it as no deadline (a tenant's first recall once overflowed a wait and answered INTERNAL)."""
    create_pref(mara, "lunch", "vegetarian, no mushrooms")
    request = memory_service_pb2.RecallMemoriesRequest(query="what does she eat for lunch?")
    mara.memories.RecallMemories(request)  # the tenant's first recall: must not fail
    until_recalled(mara, "what does she eat for lunch?", "vegetarian, no mushrooms")
    assert "vegetarian, no mushrooms" in recalled_values(mara.memories.RecallMemories(request))
