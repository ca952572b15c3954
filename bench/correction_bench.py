"""Correction latency through gRPC against the memory service on SQLite (SPEC §7: p95 <= 10 ms),
with its retrieval sidecar running as in a deployment: each correction's index work is drained
to it while corrections go on. (Without one the outbox drain would be waiting out an unreachable
index instead of doing the work a real deployment does.)

.venv/bin/python -m bench.correction_bench --memories 200 --corrections 2000
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr

from bench.common import emit, start_memory_service, summary_ms
from bench.recall_bench import start_sidecar
from tests.support.servers import TEST_JWT_SECRET


def run(memories: int = 200, corrections: int = 2000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir)
        server = start_memory_service(
            workdir, TEST_JWT_SECRET, MEMORY_RETRIEVAL_ADDRESS=sidecar.address
        )
        try:
            client = server.client("bench", "mara")
            evidence = client.transcript.AppendMessage(
                tr.AppendMessageRequest(
                    parent="conversations/bench",
                    message=tr.Message(speaker=pb.SPEAKER_USER, text="I prefer this"),
                )
            ).message.name
            provenance = pb.Provenance(
                method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=evidence
            )
            etags: dict[str, str] = {}
            for index in range(memories):
                created = client.memories.CreateMemory(
                    svc.CreateMemoryRequest(
                        memory=pb.Memory(
                            scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                            key=f"pref_{index}",
                            kind=pb.MEMORY_KIND_PREFERENCE,
                        ),
                        revision=pb.RevisionDraft(value="v0", provenance=provenance),
                    )
                )
                etags[created.memory.name] = created.memory.etag
            names = list(etags)
            samples = []
            for index in range(corrections):
                name = names[index % len(names)]
                request = svc.CorrectMemoryRequest(
                    name=name,
                    etag=etags[name],
                    revision=pb.RevisionDraft(value=f"v{index}", provenance=provenance),
                    request_id=str(uuid.uuid4()),
                )
                start = time.perf_counter()
                reply = client.memories.CorrectMemory(request)
                samples.append(time.perf_counter() - start)
                etags[name] = reply.memory.etag
        finally:
            server.stop()
            sidecar.stop()
    return {
        "benchmark": "correction",
        "database": "sqlite",
        "memories": memories,
        "correction": summary_ms(samples),
        "budget_p95_ms": 10,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--corrections", type=int, default=2000)
    args = parser.parse_args()
    emit(run(args.memories, args.corrections))


if __name__ == "__main__":
    main()
