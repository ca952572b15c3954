"""The Mara story from the reference articles, against a running service (`make run`, then
`make demo`; another address: MEMORY_ADDRESS=host:port). Each step prints what the assistant's
context for a new call would hold. When no service answers, or it refuses the tokens, it says
so in one line."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
import uuid

from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import access_service_pb2_grpc as access_grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import context_service_pb2_grpc as ctx_grpc
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.memory.v1 import transcript_service_pb2_grpc as tr_grpc
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service.memoryctl.connection import DEFAULT_ADDRESS, example_channel, run_example

ADDRESS = os.environ.get("MEMORY_ADDRESS", DEFAULT_ADDRESS)
TENANT = f"demo-{uuid.uuid4().hex[:6]}"


def token(user: str, roles: str = "") -> list[tuple[str, str]]:
    command = [sys.executable, "-m", "memory_service", "token", "--tenant", TENANT, "--user", user]
    env = {**os.environ, "MEMORY_DEV_MODE": "1"}
    out = subprocess.run(
        [*command, "--roles", roles], check=True, capture_output=True, text=True, env=env
    )
    return [("authorization", f"Bearer {out.stdout.strip()}")]


CHANNEL = example_channel(ADDRESS, "demo")  # before any token is made
MEMORIES = svc_grpc.MemoryServiceStub(CHANNEL)
CONTEXT = ctx_grpc.ContextServiceStub(CHANNEL)
TRANSCRIPT = tr_grpc.TranscriptServiceStub(CHANNEL)
ACCESS = access_grpc.AccessServiceStub(CHANNEL)
MARA, REP, ADMIN = token("mara"), token("rep-2"), token("ada", "admin")


def step(title: str) -> None:
    print(f"\n== {title}")


def say(
    who: list[tuple[str, str]], conversation: str, text: str, speaker: int = pb.SPEAKER_USER
) -> str:
    reply = TRANSCRIPT.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/{conversation}", message=tr.Message(speaker=speaker, text=text)
        ),
        metadata=who,
    )
    print(f"   {pb.Speaker.Name(speaker)[8:].lower()}: {text}")
    return reply.message.name


def propose(
    who: list[tuple[str, str]], evidence: str, value: str, **memory: object
) -> ctx_pb.ProposeMemoryResponse:
    method = memory.pop("method", pb.PROVENANCE_METHOD_USER_STATEMENT)
    reply = CONTEXT.ProposeMemory(
        ctx_pb.ProposeMemoryRequest(
            memory=pb.Memory(kind=pb.MEMORY_KIND_PREFERENCE, **memory),  # type: ignore[arg-type]
            value=value,
            method=method,  # type: ignore[arg-type]
            evidence_messages=[evidence],
            request_id=str(uuid.uuid4()),
        ),
        metadata=who,
    )
    print(f"   rules decided {ctx_pb.ProposalDecision.Name(reply.decision)[18:]}: {reply.reason}")
    return reply


def show(who: list[tuple[str, str]], label: str, **request: object) -> ctx_pb.BuildContextResponse:
    context = CONTEXT.BuildContext(ctx_pb.BuildContextRequest(**request), metadata=who)  # type: ignore[arg-type]
    print(f"   context ({label}):")
    for item in context.memories:
        revision = item.memory.applicable_revision
        key = "/".join(part for part in (item.memory.key, item.memory.key_context) if part)
        print(
            f"     - {key}"
            f" = {revision.value!r} (r{revision.revision_number},"
            f" {ctx_pb.ApplicabilityReason.Name(item.reason)[21:].lower()},"
            f" evidence {revision.provenance.transcript_message.split('/')[1]})"
        )
    for item in context.overrides:
        print(
            f"     - override for now: {item.override.key} = {item.override.value!r}"
            f" (default stays {item.shadowed_value!r})"
        )
    for conflict in context.conflicts:
        print(f"     ! conflict on {conflict.key}: {list(conflict.values)}")
    for hit in context.recalled:
        print(f"     ~ recalled {hit.memory.applicable_revision.value!r} (score {hit.score:.2f})")
    if context.recall_degraded:
        print("     ~ recall degraded: search unavailable, no recalled memories")
    for excluded in context.excluded:
        reason = ctx_pb.ExclusionReason.Name(excluded.reason)[17:].lower()
        print(f"     x excluded {excluded.subject}: {reason}")
    if not (context.memories or context.overrides or context.excluded):
        print("     (nothing durable applies)")
    return context


def stamp(moment: dt.datetime) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(moment)
    return out


def main() -> None:
    print(f"tenant {TENANT} on {ADDRESS}")
    step("1. An old conversation says 'I prefer morning meetings': a candidate, not yet memory")
    old = say(MARA, "old-chat", "I prefer morning meetings")
    candidate = propose(
        MARA,
        old,
        "prefers morning meetings",
        scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
        key="meeting_time",
        key_context="work",
    )
    show(MARA, "new call")

    step("2. Mara confirms it for work meetings")
    MEMORIES.ConfirmMemoryRevision(
        svc.ConfirmMemoryRevisionRequest(name=candidate.revision.name), metadata=MARA
    )
    show(MARA, "new call")

    step("3. 'From Monday, remember that I prefer afternoon meetings for work'")
    now = dt.datetime.now(dt.UTC)
    monday = (now + dt.timedelta(days=7 - now.weekday())).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    said = say(MARA, "today", "From Monday, remember that I prefer afternoon meetings for work")
    current = MEMORIES.GetMemory(
        svc.GetMemoryRequest(name=candidate.memory.name), metadata=MARA
    ).memory
    MEMORIES.CorrectMemory(
        svc.CorrectMemoryRequest(
            name=current.name,
            etag=current.etag,
            request_id=str(uuid.uuid4()),
            revision=pb.RevisionDraft(
                value="prefers afternoon meetings",
                valid_from=stamp(monday),
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=said
                ),
            ),
        ),
        metadata=MARA,
    )
    show(MARA, "Sunday", as_of=stamp(monday - dt.timedelta(hours=12)))
    show(MARA, "Monday", as_of=stamp(monday + dt.timedelta(hours=9)))

    step("4. The old transcript reaches the extractor late")
    propose(
        MARA,
        old,
        "prefers morning meetings",
        scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
        key="meeting_time",
        key_context="work",
    )

    step("5. The assistant suggests something; a colleague is quoted")
    hint = say(MARA, "today", "Would early meetings suit you better?", pb.SPEAKER_ASSISTANT)
    propose(
        MARA,
        hint,
        "prefers early meetings",
        scope=pb.Scope(type=pb.SCOPE_TYPE_USER),
        key="meeting_length",
        method=pb.PROVENANCE_METHOD_ASSISTANT_INFERENCE,
    )
    quote = say(MARA, "today", "My colleague Dana only does 8am calls", pb.SPEAKER_THIRD_PARTY)
    propose(
        MARA, quote, "only does 8am calls", scope=pb.Scope(type=pb.SCOPE_TYPE_USER), key="call_time"
    )

    step("6. 'Use blue shirts for today's order' versus 'This customer now prefers blue shirts'")
    for user in ("mara", "rep-2"):
        ACCESS.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id=user, customer_id="acme"), metadata=ADMIN
        )
    customer = pb.Scope(type=pb.SCOPE_TYPE_CUSTOMER, id="acme")
    once = say(MARA, "order-17", "Use blue shirts for today's order")
    propose(MARA, once, "blue shirts", scope=customer, key="shirt_color")
    durable = say(MARA, "order-17", "This customer now prefers blue shirts")
    MEMORIES.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(scope=customer, key="shirt_color", kind=pb.MEMORY_KIND_PREFERENCE),
            revision=pb.RevisionDraft(
                value="prefers blue shirts",
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=durable
                ),
            ),
        ),
        metadata=MARA,
    )
    acme = [ctx_pb.CustomerReference(customer_id="acme")]
    show(MARA, "Mara, order-17 conversation", conversation="conversations/order-17", customers=acme)
    show(REP, "another rep, authorized for acme", customers=acme)

    step("7. A question for search: 'what time does Mara like meetings?'")
    for _ in range(25):
        context = CONTEXT.BuildContext(
            ctx_pb.BuildContextRequest(query="what time does she like meetings?"), metadata=MARA
        )
        if context.recalled or context.recall_degraded:
            break
        time.sleep(0.2)
    show(MARA, "with a query", query="what time does she like meetings?")


if __name__ == "__main__":
    sys.exit(run_example(main, "demo", ADDRESS))
