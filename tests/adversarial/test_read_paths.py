"""Attacks on the paths that moved into app/ entries: reads, exports, review decisions and
reindexing. A stranger's export is refused before one line leaves the server, a replayed
resolution of a since-deleted memory says MEMORY_DELETED without its text, and a reindex
refuses a non-admin before it says whether search is configured (SQLite and PostgreSQL)."""

from __future__ import annotations

from functools import partial

import grpc
from crmmem.memory.v1 import memory_service_pb2 as svc

from tests.e2e.helpers import (
    SCOPE_ORG,
    create_memory,
    create_pref,
    delete,
    expect_error,
    request_id,
)
from tests.support.servers import Client

PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED


def export_lines(client: Client, parent: str) -> list[str]:
    lines: list[str] = []
    for chunk in client.memories.ExportMemories(
        svc.ExportMemoriesRequest(parent=parent), timeout=30
    ):
        lines.extend(chunk.lines)
    return lines


def test_a_strangers_export_is_refused_before_any_line(
    alice: Client, bob: Client, other_admin: Client
) -> None:
    create_pref(alice, "lunch", "alice private lunch habit")
    received: list[svc.ExportMemoriesResponse] = []

    def bob_exports_alice() -> None:
        received.extend(
            bob.memories.ExportMemories(svc.ExportMemoriesRequest(parent="users/alice"), timeout=30)
        )

    expect_error(bob_exports_alice, PERMISSION_DENIED, "ROLE_REQUIRED")
    assert received == []
    expect_error(lambda: export_lines(bob, "tenant"), PERMISSION_DENIED, "ROLE_REQUIRED")
    # Another tenant's admin may export their own tenant's "alice": nothing of this one.
    elsewhere = export_lines(other_admin, "users/alice")
    assert not any("alice private lunch habit" in line for line in elsewhere)
    assert any("alice private lunch habit" in line for line in export_lines(alice, "users/alice"))


def test_a_replayed_resolution_of_a_deleted_memory_says_memory_deleted(
    alice: Client, admin: Client
) -> None:
    mine = create_pref(alice, "meeting_time", "I prefer morning meetings").name
    house = create_memory(
        admin, "meeting_time", "Meetings are at the secret hour", scope_type=SCOPE_ORG
    ).memory.name
    rid = request_id()
    request = svc.ResolveConflictRequest(memory=house, kept_memory=mine, request_id=rid)
    first = admin.memories.ResolveConflict(request, timeout=10)
    assert first.memory.name == house
    delete(admin, house)
    info = expect_error(
        lambda: admin.memories.ResolveConflict(request, timeout=10),
        grpc.StatusCode.FAILED_PRECONDITION,
        "MEMORY_DELETED",
    )
    assert "secret hour" not in info.message
    # The same request id from another user is a different request, not a replay.
    with_alice = svc.ResolveConflictRequest(memory=house, kept_memory=mine, request_id=rid)
    expect_error(
        lambda: alice.memories.ResolveConflict(with_alice, timeout=10),
        grpc.StatusCode.NOT_FOUND,
        "NOT_FOUND",
    )


def test_reindex_refuses_a_non_admin_before_saying_search_is_off(
    alice: Client, admin: Client
) -> None:
    """The test server runs without a search index (MEMORY_RETRIEVAL_ADDRESS=none)."""
    for rid in ("", request_id()):
        request = svc.ReindexMemoriesRequest(request_id=rid)
        expect_error(
            partial(alice.memories.ReindexMemories, request, timeout=10),
            PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
        for _ in range(2):  # nothing is stored under the request id: the retry is refused too
            expect_error(
                partial(admin.memories.ReindexMemories, request, timeout=10),
                grpc.StatusCode.UNAVAILABLE,
                "SEARCH_UNAVAILABLE",
            )
