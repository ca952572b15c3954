"""Lines of this service's export (schema `crmmem.memory-export/v2`) for tests that craft
archives: a header and valid memory records whose fields a test overrides, and the wait for
an import batch to settle."""

from __future__ import annotations

import hashlib
import json
import unicodedata
import uuid
from typing import TYPE_CHECKING, Any

from crmmem.memory.v1 import import_service_pb2 as imp_pb

from tests.support.polling import eventually

if TYPE_CHECKING:
    from tests.support.servers import Client

SCHEMA = "crmmem.memory-export/v2"
STAMP = "2026-01-01T00:00:00Z"


def content_hash(text: str) -> str | None:
    if not text:
        return None
    normal = " ".join(unicodedata.normalize("NFC", text.strip().lower()).split())
    return "sha256:" + hashlib.sha256(normal.encode()).hexdigest()


def header(export_type: str = "full") -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "record": "export",
        "schema_version": "2.0",
        "export_id": str(uuid.uuid4()),
        "exported_by": "tests",
        "export_date": STAMP,
        "export_type": export_type,
        "since": None,
        "parent": "tenant",
    }


def revision(value: str = "email", **fields: Any) -> dict[str, Any]:
    """A user's own statement, ACTIVE; `fields` replace top-level revision fields."""
    out: dict[str, Any] = {
        "number": 1,
        "content": value,
        "content_hash": content_hash(value),
        "status": "ACTIVE",
        "status_reason": "",
        "temporal": {
            "created_at": STAMP,
            "valid_from": None,
            "valid_until": None,
            "superseded_from": None,
            "superseded_by": None,
        },
        "replaces": None,
        "author_user_id": "alice",
        "provenance": {
            "speaker": "USER",
            "extraction_method": "USER_STATEMENT",
            "evidence_type": "TRANSCRIPT_MESSAGE",
            "evidence": f"conversations/c/messages/{uuid.uuid4().hex}",
            "conversation_ref": "conversations/c",
            "message_ref": None,
            "quote": "",
            "source_time": None,
        },
        "confirmation": None,
    }
    out["provenance"]["message_ref"] = out["provenance"]["evidence"].rsplit("/", 1)[1]
    out.update(fields)
    return out


def confirmed_by(user: str) -> dict[str, Any]:
    """A confirmation: an ACTIVE revision with one needs no message in the archive."""
    return {"user_id": user, "confirm_time": STAMP, "restored_by": None, "restore_time": None}


def memory(
    key: str = "contact.channel",
    user: str = "alice",
    revisions: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "record": "memory",
        "id": uuid.uuid4().hex,
        "scope": {"type": "USER", "id": user},
        "key": key,
        "key_context": "",
        "kind": "PREFERENCE",
        "etag": '"v1"',
        "temporal": {"created_at": STAMP, "updated_at": STAMP, "deleted_at": None},
        "key_hash": "",
        "revisions": revisions if revisions is not None else [revision()],
    }
    out.update(fields)
    return out


def archive(*records: dict[str, Any]) -> bytes:
    """A header, then the records, one per line."""
    return ("\n".join(json.dumps(r) for r in (header(), *records)) + "\n").encode()


def restore(client: Client, archive: bytes, mode: int = 0) -> imp_pb.ImportBatch:
    """Submits a restore and waits while it is parsed in the background."""
    batch = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT,
            archive=archive,
            restore_mode=mode,
            request_id=str(uuid.uuid4()),
        ),
        timeout=60,
    ).batch
    return settled(client, batch, timeout=60)


def settled(client: Client, batch: imp_pb.ImportBatch, timeout: float) -> imp_pb.ImportBatch:
    """The batch once it is no longer queued or being parsed; fails after `timeout` seconds."""
    current = batch

    waiting = (imp_pb.IMPORT_STATE_PENDING, imp_pb.IMPORT_STATE_RUNNING)

    def done() -> bool:
        nonlocal current
        if current.state in waiting:
            current = client.imports.GetImportBatch(
                imp_pb.GetImportBatchRequest(name=batch.name), timeout=10
            ).batch
        return current.state not in waiting

    eventually(done, timeout, f"{batch.name} never settled", interval=0.2)
    return current


def skipped(client: Client, batch: imp_pb.ImportBatch) -> list[tuple[str, int]]:
    """(where, reason) of each record the restore skipped."""
    items = client.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name, page_size=1000), timeout=10
    ).items
    return [(i.source_ref, i.skip_reason) for i in items]
