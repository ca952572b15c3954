"""Two people settle one conflict opposite ways at the same moment, on both databases: exactly
one wins, and exactly one of the two memories applies afterwards (never neither)."""

from __future__ import annotations

import threading

import grpc
from crmmem.memory.v1 import memory_service_pb2

from tests.e2e.helpers import SCOPE_ORG, create_memory, create_pref, error_info, get, request_id
from tests.support.servers import Client, ServerProcess

ROUNDS = 4


def test_opposite_resolutions_at_once_leave_exactly_one_applicable(
    memory_server: ServerProcess, tenant: str
) -> None:
    alice = memory_server.client(tenant, "alice")
    admin = memory_server.client(tenant, "ada", ["admin"])
    for round_ in range(ROUNDS):
        key = f"meeting_time_{round_}"
        mine = create_pref(alice, key, "I prefer morning meetings")
        house = create_memory(
            admin, key, "Meetings are in the afternoon", scope_type=SCOPE_ORG
        ).memory
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def settle(
            client: Client,
            memory: str,
            kept: str,
            barrier: threading.Barrier = barrier,
            outcomes: list[str] = outcomes,
        ) -> None:
            barrier.wait()
            try:
                client.memories.ResolveConflict(
                    memory_service_pb2.ResolveConflictRequest(
                        memory=memory, kept_memory=kept, request_id=request_id()
                    ),
                    timeout=30,
                )
                outcomes.append("won")
            except grpc.RpcError as error:
                info = error_info(error)
                outcomes.append(f"{info.code.name}/{info.reason}")

        threads = [
            threading.Thread(target=settle, args=(alice, mine.name, house.name)),
            threading.Thread(target=settle, args=(admin, house.name, mine.name)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert outcomes.count("won") == 1, outcomes
        loser = next(o for o in outcomes if o != "won")
        assert loser in ("ABORTED/ETAG_MISMATCH", "FAILED_PRECONDITION/NOT_IN_CONFLICT"), loser
        applying = [
            name
            for name in (mine.name, house.name)
            if get(admin, name).HasField("applicable_revision")
        ]
        assert len(applying) == 1, applying
