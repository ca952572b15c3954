"""memoryctl's export (JSON Lines for a restore, CSV for people) and import (an archive for
review, or an export restored), with a progress counter on stderr."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_service_pb2 as svc

from memory_service.memoryctl.client import Cli

FORMATS = {
    "chatgpt": imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS,
    "summary": imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY,
    "export": imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT,
}


CSV_COLUMNS = [
    "memory", "etag", "scope_type", "scope_id", "key", "key_context", "kind", "revision",
    "value", "valid_from", "valid_until", "superseded_from", "status", "speaker",
    "extraction_method", "evidence", "quote", "source_time", "written", "author",
    "confirmed_by", "confirm_time", "restored_by",
]  # fmt: skip


def csv_rows(record: dict[str, Any]) -> list[list[str]]:
    """A memory for people: one row per revision that applies (or applied, or will) for some
    interval: ACTIVE ones. Candidates, rejected and deleted revisions apply nowhere."""
    if record.get("record") != "memory":
        return []
    rows = []
    for revision in record["revisions"]:
        if revision["status"] != "ACTIVE":
            continue
        temporal, provenance = revision["temporal"], revision["provenance"]
        confirmation = revision["confirmation"] or {}
        rows.append(
            [f"memories/{record['id']}", record["etag"], record["scope"]["type"],
             record["scope"]["id"], record["key"], record["key_context"], record["kind"],
             str(revision["number"]), revision["content"], temporal["valid_from"] or "",
             temporal["valid_until"] or "", temporal["superseded_from"] or "", "ACTIVE",
             provenance["speaker"], provenance["extraction_method"], provenance["evidence"],
             provenance["quote"], provenance["source_time"] or "", temporal["created_at"],
             revision["author_user_id"], confirmation.get("user_id") or "",
             confirmation.get("confirm_time") or "", confirmation.get("restored_by") or ""]
        )  # fmt: skip
    return rows


def cmd_export(cli: Cli, args: argparse.Namespace) -> None:
    request = svc.ExportMemoriesRequest(parent=args.parent, include_deleted=args.include_deleted)
    if args.since:
        request.since.FromDatetime(datetime.fromisoformat(args.since).astimezone(UTC))
    out = open(args.output, "w", newline="") if args.output != "-" else sys.stdout  # noqa: SIM115
    writer = csv.writer(out) if args.format == "csv" else None
    if writer is not None:
        writer.writerow(CSV_COLUMNS)
    counts: dict[str, int] = {}
    for chunk in cli.memories.ExportMemories(request, metadata=cli.auth):
        for line in chunk.lines:
            record = json.loads(line)
            kind = record.get("record", "?")
            counts[kind] = counts.get(kind, 0) + 1
            if writer is None:
                out.write(line + "\n")
            else:
                writer.writerows(csv_rows(record))
        print(f"\rexported {counts.get('memory', 0)} memories", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if out is not sys.stdout:
        out.close()
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()) if kind != "export")
    print(f"exported: {summary or 'nothing'}", file=sys.stderr)


def cmd_import(cli: Cli, args: argparse.Namespace) -> None:
    archive = Path(args.file).read_bytes()
    reply = cli.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=FORMATS[args.format],
            archive=archive,
            request_id=str(uuid.uuid4()),
            restore_mode=(
                imp_pb.RESTORE_MODE_MERGE if args.merge else imp_pb.RESTORE_MODE_UNSPECIFIED
            ),
        ),
        metadata=cli.auth,
    )
    batch, started = reply.batch, time.monotonic()
    while batch.state == imp_pb.IMPORT_STATE_PENDING:
        print(
            f"\rparsing in the background… {time.monotonic() - started:.0f}s",
            end="",
            file=sys.stderr,
            flush=True,
        )
        time.sleep(0.5)
        batch = cli.imports.GetImportBatch(
            imp_pb.GetImportBatchRequest(name=batch.name), metadata=cli.auth
        ).batch
    print(file=sys.stderr)
    note = batch.error or ("already imported" if reply.already_imported else "")
    rows = [[batch.name, imp_pb.ImportState.Name(batch.state).removeprefix("IMPORT_STATE_").lower(),
             str(batch.accepted_count), str(batch.skipped_count), str(batch.unresolved_count),
             str(batch.missing_attachment_count), note]]  # fmt: skip
    cli.emit(
        batch, rows, ["batch", "state", "accepted", "skipped", "unresolved", "missing", "note"]
    )
    if args.format == "export" and not cli.as_json:
        restore_summary(cli, batch, archive)


def restore_summary(cli: Cli, batch: imp_pb.ImportBatch, archive: bytes) -> None:
    """What the archive held, what was restored and what was skipped, and why."""
    sent: dict[str, int] = {}
    for line in archive.splitlines():
        if line.strip():
            kind = str(json.loads(line).get("record", "?"))
            sent[kind] = sent.get(kind, 0) + 1
    held = ", ".join(f"{n} {kind}" for kind, n in sorted(sent.items()) if kind != "export")
    print(f"\narchive: {held}")
    if batch.state != imp_pb.IMPORT_STATE_SUCCEEDED:
        print("restored: nothing (the whole archive was refused; see note)")
        return
    why: dict[str, list[str]] = {}
    token = ""
    while True:
        page = cli.imports.ListImportItems(
            imp_pb.ListImportItemsRequest(parent=batch.name, page_size=1000, page_token=token),
            metadata=cli.auth,
        )
        for item in page.items:
            reason = imp_pb.SkipReason.Name(item.skip_reason).removeprefix("SKIP_REASON_")
            why.setdefault(reason.lower(), []).append(item.source_ref)
        token = page.next_page_token
        if not token:
            break
    print(f"restored: {batch.accepted_count} memories and the other records not listed below")
    for reason, where in sorted(why.items()):
        shown = "; ".join(where[:5]) + (f"; … {len(where) - 5} more" if len(where) > 5 else "")
        print(f"skipped ({reason}): {len(where)}  {shown}")
