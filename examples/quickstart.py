"""Quick start against a running memory service: say something, remember it, correct it, read
the history. Run `make run` in one terminal, then `make quickstart` (or this file) in another.
Another address: MEMORY_ADDRESS=host:port. Everything said goes into Mara's conversation
`conversations/quickstart`, which `memoryctl context --conversation conversations/quickstart`
then shows. When no service answers, or it refuses the token, it says so in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

import grpc
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.memory.v1 import transcript_service_pb2_grpc as tr_grpc
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service.memoryctl.connection import DEFAULT_ADDRESS, example_channel, run_example

# One conversation for every run: conversation ids are per user, so this is Mara's own.
CONVERSATION = "conversations/quickstart"


def dev_token() -> str:
    if os.environ.get("MEMORY_TOKEN"):
        return os.environ["MEMORY_TOKEN"]
    command = [
        sys.executable,
        "-m",
        "memory_service",
        "token",
        "--tenant",
        "acme",
        "--user",
        "mara",
    ]
    env = {**os.environ, "MEMORY_DEV_MODE": "1"}
    return subprocess.run(
        command, check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def start_of(revision: pb.MemoryRevision) -> str:
    return revision.valid_from.ToJsonString() if revision.HasField("valid_from") else "always"


def main(channel: grpc.Channel) -> None:
    auth = [("authorization", f"Bearer {dev_token()}")]
    memories = svc_grpc.MemoryServiceStub(channel)
    transcript = tr_grpc.TranscriptServiceStub(channel)

    def say(text: str, speaker: int = pb.SPEAKER_USER) -> str:
        reply = transcript.AppendMessage(
            tr.AppendMessageRequest(
                parent=CONVERSATION, message=tr.Message(speaker=speaker, text=text)
            ),
            metadata=auth,
        )
        return reply.message.name

    evidence = say("I prefer morning meetings for work")
    created = memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                key="meeting_time",
                key_context=f"work-{uuid.uuid4().hex[:4]}",
                kind=pb.MEMORY_KIND_PREFERENCE,
            ),
            revision=pb.RevisionDraft(
                value="prefers morning meetings",
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT,
                    transcript_message=evidence,
                    quote="I prefer morning meetings",
                ),
            ),
            request_id=str(uuid.uuid4()),
        ),
        metadata=auth,
    )
    print("created  ", created.memory.name, "etag", created.memory.etag)

    monday = datetime.now(UTC) + timedelta(days=(7 - datetime.now(UTC).weekday()) or 7)
    start = Timestamp()
    start.FromDatetime(monday.replace(hour=0, minute=0, second=0, microsecond=0))
    correction = say("From Monday, I prefer afternoon meetings for work")
    corrected = memories.CorrectMemory(
        svc.CorrectMemoryRequest(
            name=created.memory.name,
            etag=created.memory.etag,
            revision=pb.RevisionDraft(
                value="prefers afternoon meetings",
                valid_from=start,
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=correction
                ),
            ),
            request_id=str(uuid.uuid4()),
        ),
        metadata=auth,
    )
    print("corrected", corrected.memory.name, "etag", corrected.memory.etag)
    now = memories.GetMemory(svc.GetMemoryRequest(name=created.memory.name), metadata=auth)
    print("applies now:        ", now.memory.applicable_revision.value)
    later = memories.GetMemory(
        svc.GetMemoryRequest(name=created.memory.name, as_of=start), metadata=auth
    )
    print("applies from Monday:", later.memory.applicable_revision.value)
    history = memories.ListMemoryRevisions(
        svc.ListMemoryRevisionsRequest(parent=created.memory.name), metadata=auth
    )
    for _ in range(50):  # the outbox indexes within moments; the sidecar may still be loading
        recalled = memories.RecallMemories(
            svc.RecallMemoriesRequest(query="what time do I like meetings?", limit=3),
            metadata=auth,
        )
        if any(r.memory.name == created.memory.name for r in recalled.memories):
            break
        time.sleep(0.2)
    if recalled.degraded:
        print("recall:   degraded -", recalled.degraded_reason)
    for hit in recalled.memories:
        print(f"recall:   {hit.score:.2f} {hit.memory.applicable_revision.value!r}")
    for revision in history.revisions:
        print(
            f"  r{revision.revision_number} {pb.RevisionState.Name(revision.state):<24}"
            f" {revision.value!r} from {start_of(revision)}"
            f" written {revision.create_time.ToJsonString()}"
            f" evidence {revision.provenance.transcript_message}"
        )

    # The assistant's own suggestion is only a candidate until Mara confirms it: it waits in her
    # review queue (`memoryctl review`).
    suggestion = say("Shall I keep Friday afternoons free of calls?", pb.SPEAKER_ASSISTANT)
    proposed = memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(
                scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
                key="call_free_time",
                key_context=f"work-{uuid.uuid4().hex[:4]}",
                kind=pb.MEMORY_KIND_PREFERENCE,
            ),
            revision=pb.RevisionDraft(
                value="keep Friday afternoons free of calls",
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_ASSISTANT_INFERENCE, transcript_message=suggestion
                ),
            ),
            request_id=str(uuid.uuid4()),
        ),
        metadata=auth,
    )
    print(
        "suggested",
        proposed.memory.name,
        pb.RevisionState.Name(proposed.revision.state),
        "- see `memoryctl review`",
    )


if __name__ == "__main__":
    ADDRESS = os.environ.get("MEMORY_ADDRESS", DEFAULT_ADDRESS)
    CHANNEL = example_channel(ADDRESS, "quickstart")
    sys.exit(run_example(lambda: main(CHANNEL), "quickstart", ADDRESS, sends_memory_token=True))
