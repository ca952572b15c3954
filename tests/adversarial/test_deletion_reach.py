"""Deletion reaches every copy the service keeps: stored idempotency responses, import items of
the same lineage, every table but the transcript; and the receipt says exactly what is kept."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    ACTIVE,
    PREFERENCE,
    confirm,
    correct,
    create_memory,
    delete,
    draft,
    expect_error,
    memory_spec,
    say,
)
from tests.support.servers import Client, ServerProcess

SUMMARY = imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY


def token() -> str:
    """A word found nowhere else: letters only, so no rule treats it as a figure."""
    return "zq" + "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:12])


def database_url(server: ServerProcess) -> str:
    """The server's database, read from the environment it was started with."""
    environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
    for entry in environ:
        if entry.startswith(b"MEMORY_DATABASE_URL="):
            return entry.split(b"=", 1)[1].decode()
    raise AssertionError("the server was started without MEMORY_DATABASE_URL")


def tables_holding(url: str, needle: str) -> set[str]:
    """`table.column` of every cell, in every table, that contains `needle` (text or bytes).

    On SQLite the write-ahead log is checkpointed first, so the main file is what is read."""
    raw = needle.encode()
    found: set[str] = set()

    def check(table: str, columns: list[str], rows: Iterator[tuple[object, ...]]) -> None:
        for row in rows:
            for column, cell in zip(columns, row, strict=True):
                if (isinstance(cell, str) and needle in cell) or (
                    isinstance(cell, bytes | memoryview) and raw in bytes(cell)
                ):
                    found.add(f"{table}.{column}")

    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                cursor = conn.execute(f'SELECT * FROM "{table}"')
                check(table, [d[0] for d in cursor.description], iter(cursor))
        return found
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        ]
        for table in tables:
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            assert cursor.description is not None
            check(table, [d.name for d in cursor.description], iter(cursor.fetchall()))
    return found


def submit_summary(client: Client, *lines: str) -> imp_pb.ImportBatch:
    archive = "\n".join(f"- {line}" for line in lines).encode()
    return client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=SUMMARY, archive=archive), timeout=60
    ).batch


def item_texts(client: Client, batch: str) -> list[str]:
    reply = client.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch, page_size=100), timeout=10
    )
    return [i.text for i in reply.items]


def test_replaying_a_write_of_a_deleted_memory_answers_memory_deleted(alice: Client) -> None:
    secret = token()
    said = say(alice, None, f"I drink {secret} tea")
    create = memory_service_pb2.CreateMemoryRequest(
        memory=memory_spec("drink"),
        revision=draft(f"I drink {secret} tea", said),
        request_id=str(uuid.uuid4()),
    )
    created = alice.memories.CreateMemory(create, timeout=10)
    fix = memory_service_pb2.CorrectMemoryRequest(
        name=created.memory.name,
        etag=created.memory.etag,
        revision=draft(f"I drink {secret} coffee", say(alice, None, f"I drink {secret} coffee")),
        request_id=str(uuid.uuid4()),
    )
    corrected = alice.memories.CorrectMemory(fix, timeout=10)
    # Before the deletion a replay returns the stored response, text and all.
    assert alice.memories.CreateMemory(create, timeout=10) == created
    delete(alice, created.memory.name)

    for replay in (
        lambda: alice.memories.CreateMemory(create, timeout=10),
        lambda: alice.memories.CorrectMemory(fix, timeout=10),
    ):
        info = expect_error(replay, grpc.StatusCode.FAILED_PRECONDITION, "MEMORY_DELETED")
        assert secret not in info.message
        assert secret not in str(info.details)
    assert corrected.revision.value  # it did carry the text before


def test_import_items_of_the_deleted_lineage_lose_their_text(alice: Client) -> None:
    secret = token()
    line = f"I prefer {secret} for lunch"
    first = submit_summary(alice, line, "I like short calls")
    second = submit_summary(alice, line, "I like long walks")  # the same statement again
    item = alice.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=first.name, page_size=10), timeout=10
    ).items[0]
    confirmed = alice.imports.ConfirmImportItem(
        imp_pb.ConfirmImportItemRequest(
            name=item.name,
            memory=memory_pb2.Memory(key="lunch", kind=PREFERENCE),
            request_id=str(uuid.uuid4()),
        ),
        timeout=10,
    )
    assert confirmed.revision.value == line
    assert line in item_texts(alice, second.name)

    delete(alice, confirmed.memory.name)

    for batch in (first, second):
        texts = item_texts(alice, batch.name)
        assert not any(secret in t for t in texts), texts
        assert len([t for t in texts if t]) == 1  # the other statement keeps its text


def test_the_receipt_lists_what_is_kept_and_what_was_reached(alice: Client) -> None:
    created = create_memory(alice, "drink", "I drink green tea", request_id=str(uuid.uuid4()))
    receipt = delete(alice, created.memory.name).receipt
    removed = {e.copy: e.detail for e in receipt.removed}
    kept = {e.copy: e.detail for e in receipt.not_reached}
    assert "caches" not in removed
    assert "1 stored idempotency response" in removed["stored_responses"]
    assert "import_items" in removed
    assert "store" in removed
    assert "search_index" in removed
    assert {"audit_transcript", "database_log", "backups"} <= set(kept)
    assert "checkpoint" in kept["database_log"]


def test_after_deletion_the_text_is_in_no_table_but_the_transcript(
    memory_server: ServerProcess, alice: Client
) -> None:
    secret, only_in_value = token(), token()
    said = say(alice, None, f"I always take {secret} tea")
    value = f"I always take {secret} tea {only_in_value}"  # a word of its own: not grounded
    created = create_memory(alice, "drink", value, evidence=said, request_id=str(uuid.uuid4()))
    assert created.revision.status_reason.startswith("UNGROUNDED:")
    confirmed = confirm(alice, created.revision.name, request_id=str(uuid.uuid4()))
    assert confirmed.revision.state == ACTIVE  # the subject confirmed it
    corrected = correct(
        alice, confirmed.memory, f"{secret} coffee now", request_id=str(uuid.uuid4())
    ).memory
    batch = submit_summary(alice, f"I always take {secret} tea {only_in_value}")
    item = item_texts(alice, batch.name)
    assert item
    assert only_in_value in item[0]
    url = database_url(memory_server)
    assert tables_holding(url, only_in_value) >= {"memory_revisions.value"}

    delete(alice, corrected.name, request_id=str(uuid.uuid4()))

    assert tables_holding(url, secret) == {"transcript_messages.text"}
    assert tables_holding(url, only_in_value) == set()
    if url.startswith("sqlite"):
        # Not even in free pages: after a checkpoint and VACUUM the file has no trace of it.
        path = Path(url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        vacuum = sqlite3.connect(path, isolation_level=None)
        vacuum.execute("VACUUM")
        vacuum.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        vacuum.close()
        for file in (path, path.with_name(path.name + "-wal")):
            if file.exists():
                assert only_in_value.encode() not in file.read_bytes(), file


def _reject(client: Client, item: str) -> imp_pb.RejectImportItemRequest:
    return imp_pb.RejectImportItemRequest(name=item, request_id=str(uuid.uuid4()))


def test_a_replayed_rejection_of_an_item_whose_lineage_was_deleted_returns_no_text(
    alice: Client,
) -> None:
    secret = token()
    line = f"I prefer {secret} for lunch"
    batch = submit_summary(alice, line)
    (item,) = item_texts_items(alice, batch.name)
    reject = _reject(alice, item.name)
    assert secret in alice.imports.RejectImportItem(reject, timeout=10).item.text
    # Later the user says the same thing in conversation, it is remembered, then deleted.
    created = create_memory(alice, "lunch", line, request_id=str(uuid.uuid4()))
    delete(alice, created.memory.name)

    _replay_shows_no_text(alice, reject, secret)


def test_a_replayed_rejection_after_its_batch_was_deleted_returns_no_text(alice: Client) -> None:
    secret = token()
    batch = submit_summary(alice, f"I prefer {secret} for lunch")
    (item,) = item_texts_items(alice, batch.name)
    reject = _reject(alice, item.name)
    assert secret in alice.imports.RejectImportItem(reject, timeout=10).item.text
    alice.imports.DeleteImportBatch(
        imp_pb.DeleteImportBatchRequest(name=batch.name, request_id=str(uuid.uuid4())), timeout=10
    )

    _replay_shows_no_text(alice, reject, secret)


def _replay_shows_no_text(
    client: Client, reject: imp_pb.RejectImportItemRequest, secret: str
) -> None:
    """The replay answers MEMORY_DELETED, and neither its message nor details carry the text."""
    info = expect_error(
        lambda: client.imports.RejectImportItem(reject, timeout=10),
        grpc.StatusCode.FAILED_PRECONDITION,
        "MEMORY_DELETED",
    )
    assert secret not in info.message
    assert secret not in str(info.details)


def item_texts_items(client: Client, batch: str) -> list[imp_pb.ImportItem]:
    return list(
        client.imports.ListImportItems(
            imp_pb.ListImportItemsRequest(parent=batch, page_size=100), timeout=10
        ).items
    )
