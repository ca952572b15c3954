"""Import throughput and export/restore time through gRPC (issue figures, not SPEC budgets):

- a ChatGPT-style archive of N messages parsed in the background (items/s);
- M memories restored from this service's own export, exported again, and restored into a
  clean store (seconds each).

    .venv/bin/python -m bench.import_bench --messages 10000 --memories 100000
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_service_pb2 as svc

from bench.common import emit, start_memory_service
from bench.corpus import memory_text
from memory_service.exports.domain.export import content_hash
from tests.support.servers import TEST_JWT_SECRET, Client

TENANT = "bench"


def chatgpt_archive(messages: int, rng: random.Random) -> bytes:
    conversations = []
    per_conversation = 20
    for c in range(0, messages, per_conversation):
        mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "message": None}}
        parent = "root"
        for n in range(min(per_conversation, messages - c)):
            node = f"n{n}"
            role = "user" if n % 2 == 0 else "assistant"
            _, text = memory_text(rng)
            mapping[node] = {
                "id": node,
                "parent": parent,
                "message": {
                    "id": f"m-{c}-{n}",
                    "author": {"role": role},
                    "create_time": 1_700_000_000 + c * 100 + n,
                    "content": {"content_type": "text", "parts": [f"I think {text} ({c}-{n})"]},
                },
            }
            parent = node
        conversations.append(
            {"conversation_id": f"c{c}", "current_node": parent, "mapping": mapping}
        )
    return json.dumps(conversations).encode()


def export_lines(count: int, rng: random.Random, users: int = 50) -> bytes:
    """This service's export (v2): a header, then memories each confirmed by its user (an
    unconfirmed statement would need its message in the archive), spread over `users`."""
    stamp = "2026-11-01T09:00:00Z"
    lines = [
        json.dumps(
            {
                "schema": "crmmem.memory-export/v2", "record": "export", "schema_version": "2.0",
                "export_id": str(uuid.UUID(int=rng.getrandbits(128))), "exported_by": "bench",
                "export_date": stamp, "export_type": "full", "since": None, "parent": "tenant",
            }
        )
    ]  # fmt: skip
    for n in range(count):
        key, text = memory_text(rng)
        user = f"user-{n % users}"
        message = f"{n:032x}"
        lines.append(
            json.dumps(
                {
                    "schema": "crmmem.memory-export/v2",
                    "record": "memory",
                    "id": uuid.UUID(int=rng.getrandbits(128)).hex,
                    "scope": {"type": "USER", "id": user},
                    "key": f"{key}_{n}",
                    "key_context": "",
                    "kind": "PREFERENCE",
                    "etag": '"v1"',
                    "temporal": {"created_at": stamp, "updated_at": stamp, "deleted_at": None},
                    "key_hash": "",
                    "revisions": [
                        {
                            "number": 1,
                            "content": text,
                            "content_hash": content_hash(text),
                            "status": "ACTIVE",
                            "status_reason": "",
                            "temporal": {
                                "created_at": stamp,
                                "valid_from": None,
                                "valid_until": None,
                                "superseded_from": None,
                                "superseded_by": None,
                            },
                            "replaces": None,
                            "author_user_id": user,
                            "provenance": {
                                "speaker": "USER",
                                "extraction_method": "USER_STATEMENT",
                                "evidence_type": "TRANSCRIPT_MESSAGE",
                                "evidence": f"conversations/old/messages/{message}",
                                "conversation_ref": "conversations/old",
                                "message_ref": message,
                                "quote": "",
                                "source_time": stamp,
                            },
                            "confirmation": {
                                "user_id": user,
                                "confirm_time": stamp,
                                "restored_by": None,
                                "restore_time": None,
                            },
                        }
                    ],
                }
            )
        )
    return "\n".join(lines).encode()


def wait(client: Client, batch: imp_pb.ImportBatch, timeout: float = 3600) -> imp_pb.ImportBatch:
    deadline = time.monotonic() + timeout
    while batch.state == imp_pb.IMPORT_STATE_PENDING and time.monotonic() < deadline:
        time.sleep(0.2)
        batch = client.imports.GetImportBatch(imp_pb.GetImportBatchRequest(name=batch.name)).batch
    if batch.state != imp_pb.IMPORT_STATE_SUCCEEDED:
        raise RuntimeError(f"import did not succeed: {batch}")
    return batch


def timed_import(
    client: Client,
    archive: bytes,
    fmt: imp_pb.ArchiveFormat.ValueType,
    mode: imp_pb.RestoreMode.ValueType = imp_pb.RESTORE_MODE_UNSPECIFIED,
) -> tuple[imp_pb.ImportBatch, float]:
    started = time.perf_counter()
    batch = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=fmt, archive=archive, restore_mode=mode),
        timeout=600,
    ).batch
    batch = wait(client, batch)
    return batch, time.perf_counter() - started


PART_BYTES = 15 * 1024 * 1024


def timed_restore(admin: Client, restorer: Client, export: bytes) -> tuple[int, float]:
    """Archives are capped at 16 MiB, so a large export is restored in parts of whole lines,
    each after the header: the first into the empty tenant, the others merged."""
    restored, seconds = 0, 0.0
    header, *lines = export.split(b"\n")
    part = bytearray(header + b"\n")
    for index, line in enumerate(lines):
        part += line + b"\n"
        if len(part) >= PART_BYTES or index == len(lines) - 1:
            first = restored == 0 and seconds == 0.0
            client, mode = (
                (admin, imp_pb.RESTORE_MODE_UNSPECIFIED)
                if first
                else (restorer, imp_pb.RESTORE_MODE_MERGE)
            )
            fmt = imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT
            batch, took = timed_import(client, bytes(part), fmt, mode)
            restored += batch.accepted_count
            seconds += took
            part = bytearray(header + b"\n")
    return restored, seconds


def timed_export(client: Client) -> tuple[bytes, float]:
    started = time.perf_counter()
    lines: list[str] = []
    for chunk in client.memories.ExportMemories(
        svc.ExportMemoriesRequest(parent="tenant"), timeout=3600
    ):
        lines.extend(chunk.lines)
    return "\n".join(lines).encode(), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        first_dir, second_dir = Path(tmp) / "a", Path(tmp) / "b"
        first_dir.mkdir()
        second_dir.mkdir()
        env = {"MEMORY_RETRIEVAL_ADDRESS": "none"}
        first = start_memory_service(first_dir, TEST_JWT_SECRET, **env)
        second = start_memory_service(second_dir, TEST_JWT_SECRET, **env)
        try:
            user = first.client(TENANT, "mara")
            archive = chatgpt_archive(args.messages, rng)
            batch, chat_seconds = timed_import(
                user, archive, imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS
            )
            items = batch.accepted_count + batch.skipped_count + batch.unresolved_count
            admin = first.client(TENANT, "ada", ["admin"])
            restorer = first.client(TENANT, "rita", ["restorer"])
            _, seed_seconds = timed_restore(admin, restorer, export_lines(args.memories, rng))
            exported, export_seconds = timed_export(admin)
            clean = second.client(TENANT, "ada", ["admin"])
            clean_restorer = second.client(TENANT, "rita", ["restorer"])
            restored, restore_seconds = timed_restore(clean, clean_restorer, exported)
        finally:
            first.stop()
            second.stop()
    emit(
        {
            "benchmark": "import_export",
            "database": "sqlite",
            "chatgpt_archive": {
                "messages": args.messages,
                "bytes": len(archive),
                "seconds": round(chat_seconds, 2),
                "items_per_s": round(items / chat_seconds, 1),
            },
            "own_export": {
                "memories": args.memories,
                "restore_seed_seconds": round(seed_seconds, 2),
                "export_seconds": round(export_seconds, 2),
                "export_bytes": len(exported),
                "restore_into_clean_store_seconds": round(restore_seconds, 2),
                "restored": restored,
            },
        }
    )


if __name__ == "__main__":
    main()
