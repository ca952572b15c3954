"""One secret rule on every path that stores text, through gRPC on SQLite and PostgreSQL.

Each path gets its own freshly made secret. Every write carrying one is refused (INVALID_ARGUMENT
with reason SECRET_DETECTED naming the field, or the REFUSED_SECRET decision of a proposal, or a
skipped import item, or a failed restore), and afterwards the refused text is found nowhere: in no
table (for SQLite also not in the raw database files after a checkpoint) and not in the server's
log. The transcript is the one place a secret may stay: it records what was said.
"""

from __future__ import annotations

import base64
import json
import random
import sqlite3
import string
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import (
    PREFERENCE,
    SCOPE_USER,
    USER_STATEMENT,
    append,
    create_memory,
    create_pref,
    expect_error,
    list_all,
    new_conversation,
    provenance,
    request_id,
    say,
)
from tests.support import exports
from tests.support.exports import settled
from tests.support.servers import Client, ServerProcess

REFUSED = grpc.StatusCode.INVALID_ARGUMENT
REASON = "SECRET_DETECTED"
TRANSCRIPT_TABLES = {"transcript_messages"}
rng = random.SystemRandom()


def _random(alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _card() -> str:
    """A fresh Luhn-valid 16-digit number."""
    body = "4" + _random(string.digits, 14)
    total = 0
    for index, char in enumerate(reversed(body)):
        value = int(char) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return body + str((10 - total % 10) % 10)


def _b64(data: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


@dataclass
class Secrets:
    """Fresh secrets, each with the unique part a search for leftovers looks for."""

    refused: dict[str, str] = field(default_factory=dict)  # path -> needle, stored nowhere
    said: dict[str, str] = field(default_factory=dict)  # path -> needle, in the transcript only

    def make(self, path: str, said: bool = False) -> tuple[str, str]:
        alnum = string.ascii_letters + string.digits
        forms = {
            "create_value": lambda n: f"the password for the portal is {n}",
            "create_quote": lambda n: n,
            "create_evidence": lambda n: f"our GitHub token is {n}",
            "correct_value": lambda n: f"{n[:4]} {n[4:8]} {n[8:12]} {n[12:]} 12/27 123",
            "propose_value": lambda n: n,
            "propose_evidence": lambda n: f"paste this into the tool: {n}",
            "override_value": lambda n: f"for now pw is {n}",
            "import_item": lambda n: f"passwd={n}",
            "import_card": lambda n: f"{n[:4]}.{n[4:8]}.{n[8:12]}.{n[12:]}",
            "confirm_value": lambda n: f"my PIN is 4821 and the wifi password is {n}",
            "restore_value": lambda n: f"card {n[:4]}/{n[4:8]}/{n[8:12]}/{n[12:]} cvv 123",
        }
        needles = {
            "create_value": "Zq" + _random(alnum, 14),
            "create_quote": "sk_live_" + _random(alnum, 24),
            "create_evidence": "github_pat_" + _random(alnum + "_", 82),
            "correct_value": _card(),
            "propose_value": "AIza" + _random(alnum + "_-", 35),
            "propose_evidence": ".".join(
                [
                    _b64({"alg": "HS256", "typ": "JWT"}),
                    _b64({"sub": _random(alnum, 12)}),
                    _random(alnum + "_-", 43),
                ]
            ),
            "override_value": "Xk" + _random(alnum, 12),
            "import_item": "Wv" + _random(alnum, 14),
            "import_card": _card(),
            "confirm_value": "Jm" + _random(alnum, 14),
            "restore_value": _card(),
        }
        needle = needles[path]
        (self.said if said else self.refused)[path] = needle
        return forms[path](needle), needle


def stored_rows(database_url: str) -> dict[str, str]:
    """Every table's rows as text (bytes decoded leniently), read through a fresh connection."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            tables = sa.inspect(connection).get_table_names()
            out = {}
            for table in tables:
                rows = connection.execute(sa.text(f'SELECT * FROM "{table}"')).fetchall()
                out[table] = "\n".join(
                    " ".join(
                        v.decode("utf-8", "replace")
                        if isinstance(v, bytes | memoryview)
                        else str(v)
                        for v in (bytes(c) if isinstance(c, memoryview) else c for c in row)
                    )
                    for row in rows
                )
            return out
    finally:
        engine.dispose()


def sqlite_file_bytes(database_url: str) -> bytes:
    """The database files as bytes after folding the WAL into the main file."""
    path = Path(database_url.removeprefix("sqlite:///"))
    with sqlite3.connect(path, timeout=30) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return b"".join(
        candidate.read_bytes()
        for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-journal"))
        if candidate.exists()
    )


def propose(client: Client, evidence: str, value: str, key: str) -> ctx_pb.ProposeMemoryResponse:
    return client.context.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=memory_pb2.Memory(
                scope=memory_pb2.Scope(type=SCOPE_USER), key=key, kind=PREFERENCE
            ),
            value=value,
            method=USER_STATEMENT,
            evidence_messages=[evidence],
            request_id=request_id(),
        ),
        timeout=10,
    )


def summary_items(
    client: Client, archive: bytes
) -> tuple[imp_pb.ImportBatch, list[imp_pb.ImportItem]]:
    batch = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY, archive=archive
        ),
        timeout=60,
    ).batch
    items = client.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name, page_size=1000)
    ).items
    return batch, list(items)


def exported(client: Client, parent: str) -> list[dict[str, object]]:
    lines: list[str] = []
    for chunk in client.memories.ExportMemories(
        memory_service_pb2.ExportMemoriesRequest(parent=parent), timeout=30
    ):
        lines.extend(chunk.lines)
    return [json.loads(line) for line in lines]


def test_every_path_refuses_secrets_and_keeps_none(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    admin = memory_server.client(tenant, "ada", ["admin"])
    secrets = Secrets()
    clean = say(mara, None, "I prefer morning meetings")

    # CreateMemory: the value, the quote, and the evidence the value is taken from.
    text, _ = secrets.make("create_value")
    expect_error(
        lambda: create_memory(mara, "portal_login", text, evidence=clean, request_id=request_id()),
        REFUSED, REASON, "revision.value",
    )  # fmt: skip
    text, _ = secrets.make("create_quote", said=True)
    said = say(mara, None, f"the billing key is {text}")  # the transcript keeps what was said
    expect_error(
        lambda: create_memory(
            mara, "billing", "uses Stripe for billing",
            evidence=provenance(said, quote=text), request_id=request_id(),
        ),
        REFUSED, REASON, "revision.provenance.quote",
    )  # fmt: skip
    text, _ = secrets.make("create_evidence", said=True)
    said = say(mara, None, text)
    expect_error(
        lambda: create_memory(mara, "tools", "uses GitHub", evidence=said, request_id=request_id()),
        REFUSED, REASON, "revision.provenance.transcript_message",
    )  # fmt: skip
    assert list_all(mara) == []

    # CorrectMemory.
    memory = create_pref(mara, "payment", "pays by invoice")
    text, _ = secrets.make("correct_value")
    expect_error(
        lambda: mara.memories.CorrectMemory(
            memory_service_pb2.CorrectMemoryRequest(
                name=memory.name,
                etag=memory.etag,
                revision=memory_pb2.RevisionDraft(value=text, provenance=provenance(clean)),
                request_id=request_id(),
            )
        ),
        REFUSED, REASON, "revision.value",
    )  # fmt: skip

    # ProposeMemory: the proposed value, and the cited message.
    text, needle = secrets.make("propose_value")
    outcome = propose(mara, clean, text, "maps_key")
    assert outcome.decision == ctx_pb.PROPOSAL_DECISION_REFUSED_SECRET
    assert needle not in outcome.reason
    assert not outcome.HasField("memory")
    text, needle = secrets.make("propose_evidence", said=True)
    said = say(mara, None, text)
    outcome = propose(mara, said, "uses the reporting tool", "reporting")
    assert outcome.decision == ctx_pb.PROPOSAL_DECISION_REFUSED_SECRET
    assert needle not in outcome.reason
    assert not outcome.HasField("memory")

    # CreateOverride.
    conversation = new_conversation()
    append(mara, conversation, "for this call only")
    text, _ = secrets.make("override_value")
    expect_error(
        lambda: mara.context.CreateOverride(
            ctx_pb.CreateOverrideRequest(
                parent=conversation,
                override=ctx_pb.Override(
                    key="vpn", scope=memory_pb2.Scope(type=SCOPE_USER), value=text
                ),
                expiry=ctx_pb.OverrideExpiry(ttl_seconds=600),
                request_id=request_id(),
            )
        ),
        REFUSED, REASON, "override.value",
    )  # fmt: skip

    # Import parsing: secret items are skipped and their text is not kept.
    item_text, _ = secrets.make("import_item")
    card_text, _ = secrets.make("import_card")
    archive = f"- {item_text}\n- {card_text}\n- likes green tea\n".encode()
    batch, items = summary_items(mara, archive)
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED
    skipped = [i for i in items if i.skip_reason == imp_pb.SKIP_REASON_SECRET]
    assert len(skipped) == 2
    assert all(i.text == "" for i in skipped)
    (tea,) = [i for i in items if i.outcome == imp_pb.ITEM_OUTCOME_ACCEPTED]

    # ConfirmImportItem with the value edited at confirmation.
    text, _ = secrets.make("confirm_value")
    expect_error(
        lambda: mara.imports.ConfirmImportItem(
            imp_pb.ConfirmImportItemRequest(
                name=tea.name,
                memory=memory_pb2.Memory(key="wifi", kind=PREFERENCE),
                value=text,
                request_id=request_id(),
            )
        ),
        REFUSED, REASON, "value",
    )  # fmt: skip

    # Restore: a secret in an archive fails the batch, naming where and not what.
    header, *records = exported(admin, "users/mara")
    record = next(r for r in records if r["record"] == "memory")
    text, needle = secrets.make("restore_value")
    record["id"] = uuid.uuid4().hex
    revisions = record["revisions"]
    assert isinstance(revisions, list)
    revisions[0]["content"] = text
    revisions[0]["content_hash"] = exports.content_hash(text)
    empty_tenant = memory_server.client(f"{tenant}-r", "ada", ["admin"])  # restores need one
    restored = empty_tenant.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT,
            archive="\n".join(json.dumps(r) for r in (header, record)).encode(),
        ),
        timeout=60,
    ).batch
    assert restored.state == imp_pb.IMPORT_STATE_FAILED
    assert "revisions[0].content" in restored.error
    assert needle not in restored.error

    # Nothing was stored but the memory made on purpose.
    assert [m.key for m in list_all(mara)] == ["payment"]

    # The refused text is found nowhere; what was said is found only in the transcript.
    tables = stored_rows(memory_server.database_url)
    for path, needle in secrets.refused.items():
        assert not [t for t, text in tables.items() if needle in text], path
    for path, needle in secrets.said.items():
        holders = {t for t, text in tables.items() if needle in text}
        assert holders == TRANSCRIPT_TABLES, (path, holders)
    if memory_server.database_url.startswith("sqlite"):
        raw = sqlite_file_bytes(memory_server.database_url)
        for path, needle in secrets.refused.items():
            assert needle.encode() not in raw, path
    log = memory_server.log()
    for path, needle in {**secrets.refused, **secrets.said}.items():
        assert needle not in log, path


@pytest.mark.parametrize(
    "text",
    [
        "the password for the portal is Tr0ub4dor&3",
        "pw is hunter2",
        "passwd=hunter2",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
        "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "4111 1111 1111 1111 12/27 123",
        "4111.1111.1111.1111",
        "p\u0430ssword is hunter2",  # Cyrillic a
        "4111_1111_1111_1111",
        "SLACK_TOKEN=abc123def",
        "cGFzc3dvcmQ6IGh1bnRlcjI=",  # base64 of a password line
        "password%3Dhunter2",
    ],
)
def test_forms_that_used_to_pass_are_refused_on_create(
    memory_server: ServerProcess, tenant: str, text: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    clean = say(mara, None, "a note about my accounts")
    info = expect_error(
        lambda: create_memory(mara, "account_note", text, evidence=clean),
        REFUSED, REASON, "revision.value",
    )  # fmt: skip
    assert text not in info.message


def test_a_large_archive_with_a_secret_leaves_no_bytes_behind(
    memory_server: ServerProcess, tenant: str
) -> None:
    """An archive over the inline limit is kept in the database until it is parsed, then
    dropped; on SQLite the freed pages kept its bytes (the secret too) in the file."""
    mara = memory_server.client(tenant, "mara")
    needle = "Qv" + _random(string.ascii_letters + string.digits, 14)
    filler = " " * (300 * 1024)  # no items: nothing written later reuses the freed pages
    archive = f"- the password for the supplier portal is {needle}\n- likes green tea\n{filler}"
    archive_bytes = archive.encode()
    assert len(archive_bytes) > 256 * 1024  # parsed in the background
    batch = mara.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY, archive=archive_bytes
        ),
        timeout=60,
    ).batch
    batch = settled(mara, batch, timeout=120)
    tables = stored_rows(memory_server.database_url)
    assert not [t for t, text in tables.items() if needle in text]
    if memory_server.database_url.startswith("sqlite"):
        assert needle.encode() not in sqlite_file_bytes(memory_server.database_url)
    assert needle not in memory_server.log()
