"""A restore is a restore, not a back door around the write rules: crafted exports an admin
might submit, each refused (or, for confirmations, marked for what they are)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_service_pb2

from memory_service.kernel.domain.rules import scoped_key_hash
from tests.e2e.helpers import create_pref, get, list_all
from tests.support import exports
from tests.support.exports import restore, skipped
from tests.support.servers import Client, ServerProcess


def message(owner: str, text: str, message_id: str) -> dict[str, Any]:
    return {
        "schema": exports.SCHEMA,
        "record": "message",
        "id": message_id,
        "name": f"conversations/c/messages/{message_id}",
        "conversation_ref": "conversations/c",
        "owner_user_id": owner,
        "sequence": 1,
        "speaker": "USER",
        "status": "COMPLETED",
        "created_at": exports.STAMP,
        "content": text,
        "content_hash": exports.content_hash(text),
    }


def said_by(owner: str, text: str, value: str, **revision: Any) -> list[dict[str, Any]]:
    """A message of `owner` and a memory of bob's whose only revision cites it."""
    cited = exports.revision(value, author_user_id=owner, **revision)
    said = message(owner, text, cited["provenance"]["message_ref"])
    return [said, exports.memory(key="salary", user="bob", revisions=[cited])]


def test_an_active_statement_needs_the_subjects_own_message_saying_it(admin: Client) -> None:
    """Bob's ACTIVE memory 'in his own words' with text bob never said is refused, whether the
    message is missing, someone else's, or says something else."""
    for records, problem in (
        ([exports.memory(key="salary", user="bob")], "needs its message"),
        (said_by("ada", "bob earns 200k", "bob earns 200k"), "not said by the memory's subject"),
        (said_by("bob", "I earn 90k", "I earn 200k"), "UNGROUNDED"),
    ):
        batch = restore(admin, exports.archive(*records))
        assert batch.state == imp_pb.IMPORT_STATE_FAILED, records
        assert problem in batch.error
    assert restore(admin, exports.archive(*said_by("bob", "I earn 90k", "I earn 90k"))).state == (
        imp_pb.IMPORT_STATE_SUCCEEDED
    )


def test_a_restored_confirmation_says_who_restored_it_not_that_the_user_confirmed_again(
    memory_server: ServerProcess, tenant: str, admin: Client
) -> None:
    inferred = exports.revision("bob likes golf", author_user_id="ada")
    inferred["provenance"].update(speaker="ASSISTANT", extraction_method="ASSISTANT_INFERENCE")
    unconfirmed = exports.memory(key="hobby", user="bob", revisions=[inferred])
    batch = restore(admin, exports.archive(unconfirmed))
    assert batch.state == imp_pb.IMPORT_STATE_FAILED
    assert "ACTIVE only with a confirmation" in batch.error

    inferred["confirmation"] = {
        "user_id": "bob",
        "confirm_time": exports.STAMP,
        "restored_by": "bob",  # claimed by the archive: replaced by who really restored it
        "restore_time": exports.STAMP,
    }
    confirmed = exports.memory(key="hobby", user="bob", revisions=[inferred])
    batch = restore(admin, exports.archive(confirmed))
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    bob = memory_server.client(tenant, "bob")
    shown = get(bob, f"memories/{confirmed['id']}").latest_revision.confirmation
    assert (shown.user_id, shown.restored_by_user_id) == ("bob", "ada")
    assert shown.restore_time.seconds > shown.confirm_time.seconds


def test_a_key_with_a_deletion_marker_is_not_brought_back(admin: Client) -> None:
    marker = exports.memory(
        key="deleted",
        revisions=[exports.revision("", status="DELETED")],
        temporal={
            "created_at": exports.STAMP,
            "updated_at": "2026-02-01T00:00:00Z",
            "deleted_at": "2026-02-01T00:00:00Z",
        },
        key_hash=scoped_key_hash("USER", "alice", "contact.channel", ""),
    )
    marker["revisions"][0]["provenance"]["evidence"] = "sha256:" + "0" * 64
    marker["revisions"][0]["provenance"].update(conversation_ref=None, message_ref=None)
    old = said_by("alice", "email please", "email please")
    old[1].update(key="contact.channel", scope={"type": "USER", "id": "alice"})
    batch = restore(admin, exports.archive(*old, marker))
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == 1  # the marker
    [(where, reason)] = skipped(admin, batch)
    assert reason == imp_pb.SKIP_REASON_KEY_DELETED
    assert where == f"line 3: memories/{old[1]['id']}"
    assert list_all(admin) == []


def _revision_number(n: int) -> bytes:
    return exports.archive(exports.memory(revisions=[exports.revision(number=n)]))


def _scope_id(text: str) -> bytes:
    return exports.archive(exports.memory(user=text))


def _evidence(size: int) -> bytes:
    revision = exports.revision()
    revision["provenance"]["evidence"] = "conversations/c/messages/" + "0" * size
    return exports.archive(exports.memory(revisions=[revision]))


def _quote(size: int) -> bytes:
    revision = exports.revision()
    revision["provenance"]["quote"] = "q" * size
    return exports.archive(exports.memory(revisions=[revision]))


def _interval() -> bytes:
    revision = exports.revision()
    revision["temporal"].update(valid_from="2026-02-01T00:00:00Z", valid_until=exports.STAMP)
    return exports.archive(exports.memory(revisions=[revision]))


CRAFTED: list[tuple[str, Callable[[], bytes], str]] = [
    ("revision-number-minus-1", lambda: _revision_number(-1), "revisions[0].number"),
    ("revision-number-2", lambda: _revision_number(2), "revisions[0].number"),
    ("scope-id-1000-chars-with-nul", lambda: _scope_id("a" * 999 + "\x00"), "scope.id"),
    ("scope-id-not-a-user-id", lambda: _scope_id("bob smith"), "scope.id"),
    ("evidence-10kb", lambda: _evidence(10_000), "provenance.evidence"),
    ("quote-10kb", lambda: _quote(10_000), "provenance.quote"),
    (
        "value-over-4000",
        lambda: exports.archive(exports.memory(revisions=[exports.revision("v" * 4001)])),
        "revisions[0].content",
    ),
    ("interval-backwards", _interval, "temporal.valid_until"),
    ("no-header", lambda: exports.archive(exports.memory()).split(b"\n", 1)[1], "line 1.record"),
]


@pytest.mark.parametrize(("build", "where"), [c[1:] for c in CRAFTED], ids=[c[0] for c in CRAFTED])
def test_a_crafted_record_fails_the_restore_saying_where(
    admin: Client, build: Callable[[], bytes], where: str
) -> None:
    batch = restore(admin, build())
    assert batch.state == imp_pb.IMPORT_STATE_FAILED
    assert where in batch.error
    assert list_all(admin) == []


def test_an_id_used_by_another_tenant_is_a_collision_and_says_no_more(
    memory_server: ServerProcess, tenant: str
) -> None:
    """Not ETAG_MISMATCH, not a failure: the record is skipped as a collision, exactly as a
    collision inside the tenant is, so nothing tells whose the id is."""
    theirs = create_pref(memory_server.client(f"{tenant}-other", "alice"), "x", "I prefer x")
    admin = memory_server.client(tenant, "ada", ["admin"])
    colliding = said_by("bob", "I like phone calls", "I like phone calls")
    colliding[1]["id"] = theirs.name.split("/")[1]
    fine = said_by("alice", "I like email", "I like email")
    fine[1].update(scope={"type": "USER", "id": "alice"}, key="channel")
    batch = restore(admin, exports.archive(*colliding, *fine))
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == 1
    foreign = skipped(admin, batch)
    assert foreign == [(f"line 3: {theirs.name}", imp_pb.SKIP_REASON_ID_COLLISION)]
    assert "ETAG" not in batch.error

    # A different record under an id this tenant already uses answers the same.
    restorer = memory_server.client(tenant, "rita", ["restorer"])
    said, mine = said_by("bob", "I like chat", "I like chat")
    mine.update(id=fine[1]["id"], etag='"v2"')
    merged = restore(restorer, exports.archive(said, mine), imp_pb.RESTORE_MODE_MERGE)
    assert merged.state == imp_pb.IMPORT_STATE_SUCCEEDED, merged.error
    memories = [(w, r) for w, r in skipped(restorer, merged) if "memories/" in w]
    assert memories == [(f"line 3: memories/{mine['id']}", imp_pb.SKIP_REASON_ID_COLLISION)]
    with pytest.raises(grpc.RpcError) as error:
        memory_server.client(tenant, "alice").memories.GetMemory(
            memory_service_pb2.GetMemoryRequest(name=theirs.name), timeout=10
        )
    assert error.value.code() is grpc.StatusCode.NOT_FOUND


def document_fact(uri: str, excerpt: str = "Sam owns Project Alpha.") -> dict[str, Any]:
    """An organization fact citing a document, as an export writes one."""
    cited = exports.revision("Sam owns Project Alpha", author_user_id="ada")
    cited["provenance"].update(
        speaker="TOOL",
        extraction_method="DOCUMENT",
        evidence_type="DOCUMENT",
        evidence=uri,
        conversation_ref=None,
        message_ref=None,
        document={"uri": uri, "version": "v1", "excerpt": excerpt},
        kept_memory=None,
    )
    return exports.memory(
        key="alpha.owner", scope={"type": "ORGANIZATION", "id": ""}, kind="FACT", revisions=[cited]
    )


def test_a_document_fact_is_restored_only_under_the_apis_document_rules(admin: Client) -> None:
    """A document reference carrying a password, a mismatched URI, a missing excerpt, an
    unsupported value or a user's fact made ACTIVE by a document each fail the whole restore,
    naming the line and field; the same fact with a clean reference is restored."""
    where = "line 2.revisions[0].provenance.document"
    secret_uri = "https://sam:hunter2@docs.example.com/plans/alpha"
    unsupported = document_fact("https://docs.example.com/a", "Kim owns Project Beta.")
    users = document_fact("https://docs.example.com/a")
    users["scope"] = {"type": "USER", "id": "bob"}
    mismatched = document_fact("https://docs.example.com/a")
    mismatched["revisions"][0]["provenance"]["document"]["uri"] = "https://docs.example.com/b"
    bare = document_fact("https://docs.example.com/a")
    bare["revisions"][0]["provenance"]["document"] = None
    for record, field, problem in (
        (document_fact(secret_uri), f"{where}.uri", "user name or password"),
        (document_fact("https://docs.example.com/a", "  "), f"{where}.excerpt", "is required"),
        (mismatched, f"{where}.uri", "does not match"),
        (bare, where, "is required for document evidence"),
        (unsupported, "line 2.revisions[0].status", "UNGROUNDED"),
        (users, "line 2.revisions[0].status", "not the user's own statement"),
    ):
        batch = restore(admin, exports.archive(record))
        assert batch.state == imp_pb.IMPORT_STATE_FAILED, field
        assert field in batch.error, batch.error
        assert problem in batch.error, batch.error
        assert "hunter2" not in batch.error
    good = document_fact("https://docs.example.com/a")
    assert restore(admin, exports.archive(good)).state == imp_pb.IMPORT_STATE_SUCCEEDED
