"""The memory commands of memoryctl: list, history (show), about, correct, confirm, delete and
context. Each is one or two API calls made as the caller, shown as a table or as JSON."""

from __future__ import annotations

import argparse
import json
import uuid
from datetime import UTC, datetime

import grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from google.protobuf.json_format import MessageToDict

from memory_service.memoryctl.client import Cli, memory_rows, source, state, when
from memory_service.memoryctl.connection import Refused


def cmd_list(cli: Cli, args: argparse.Namespace) -> None:
    reply = cli.memories.ListMemories(
        svc.ListMemoriesRequest(key=args.key, value_contains=args.text, page_size=1000),
        metadata=cli.auth,
    )
    cli.emit(reply, memory_rows(reply.memories), ["memory", "scope", "key", "value", "revision"])


def cmd_history(cli: Cli, args: argparse.Namespace) -> None:
    memory = cli.memories.GetMemory(svc.GetMemoryRequest(name=args.name), metadata=cli.auth).memory
    reply = cli.memories.ListMemoryRevisions(
        svc.ListMemoryRevisionsRequest(parent=args.name, page_size=1000), metadata=cli.auth
    )
    if not cli.as_json:
        key = "/".join(p for p in (memory.key, memory.key_context) if p)
        print(f"{memory.name}  {key}  etag {memory.etag}\n")
    rows = [
        [f"r{r.revision_number}", state(r), r.value, when(r.valid_from, "always"),
         when(r.valid_until, "open"), when(r.create_time),
         f"r{r.replaces_revision_number}" if r.replaces_revision_number else "-", source(r)]
        for r in reply.revisions
    ]  # fmt: skip
    headers = ["rev", "state", "value", "from", "until", "written", "replaces", "source"]
    cli.emit(reply, rows, headers)


def cmd_about(cli: Cli, args: argparse.Namespace) -> None:
    """What is known about a subject, for a person: first every memory that names it (in its
    key or a value), then those recall finds by meaning, closest first. Each shows what applies
    now, what is set to apply later, what waits for confirmation, and where each came from.

    No similarity scores and no score floor: the fused scores rank the hits of one query but
    mean nothing across queries or tenants, so any floor hides a paraphrase on one question and
    lets noise through on the next. The two groups are labelled instead, `--limit` bounds what
    recall adds, and the person reading judges the text."""
    subject = args.text
    recalled = cli.memories.RecallMemories(
        svc.RecallMemoriesRequest(query=subject, limit=args.limit), metadata=cli.auth
    )
    listed = cli.memories.ListMemories(
        svc.ListMemoriesRequest(value_contains=subject[:200], page_size=ABOUT_NAMED),
        metadata=cli.auth,
    )
    if cli.as_json:
        print(
            json.dumps(
                {"recall": MessageToDict(recalled), "matches": MessageToDict(listed)}, indent=2
            )
        )
        return
    named: dict[str, pb.Memory] = {m.name: m for m in listed.memories}
    related: dict[str, pb.Memory] = {}
    for hit in recalled.memories:
        if hit.memory.name not in named:
            group = named if names(hit.memory, subject) else related
            group[hit.memory.name] = hit.memory
    if recalled.degraded:
        print(f"(search unavailable: {recalled.degraded_reason}; only memories naming it)\n")
    if named:
        more = " (more: memoryctl list --text …)" if listed.next_page_token else ""
        print(f"Remembered about {subject!r}{more}:\n")
        for memory in named.values():
            print_known(memory)
    else:
        print(f"Nothing remembered names {subject!r}.\n")
    if related:
        print("Related by meaning, closest first:\n")
        for memory in related.values():
            print_known(memory)
    if named or related:
        print("Every revision of one: memoryctl history memories/<id>")


ABOUT_NAMED = 100  # memories naming the subject shown at most (the first page of the listing)


def names(memory: pb.Memory, subject: str) -> bool:
    """Whether the memory's key, key context or a current value contains the subject's words
    (case ignored; a key's `_` and `-` read as spaces)."""
    wanted = " ".join(subject.casefold().split())
    texts = [memory.key, memory.key_context]
    texts = [t.replace("_", " ").replace("-", " ") for t in texts]
    texts += [memory.applicable_revision.value, memory.latest_revision.value]
    return any(wanted in " ".join(text.casefold().split()) for text in texts if text)


def print_known(memory: pb.Memory) -> None:
    """A memory as a person reads it: the key and whose it is, then each value that matters
    now (what applies, what will, what awaits confirmation) with where it came from."""
    scope = pb.ScopeType.Name(memory.scope.type).removeprefix("SCOPE_TYPE_").lower()
    whose = f"{scope}:{memory.scope.id}" if memory.scope.id else scope
    key = "/".join(p for p in (memory.key, memory.key_context) if p)
    print(f"{key}  ({whose})  {memory.name}")
    shown = []
    if memory.HasField("applicable_revision"):
        shown.append(("now", memory.applicable_revision))
    latest = memory.latest_revision
    if latest.revision_number and (
        not shown or latest.revision_number != memory.applicable_revision.revision_number
    ):
        shown.append((standing(latest), latest))
    for label, revision in shown:
        said = when(revision.provenance.source_time, "at an unknown time")
        print(f"  {label:<21} {revision.value}")
        print(f"  {'':<21} said {said} by {source(revision)}")
    print()


def standing(revision: pb.MemoryRevision) -> str:
    """How a revision that does not apply now stands, in a few words."""
    now = datetime.now(UTC)
    if revision.state == pb.REVISION_STATE_CANDIDATE:
        return "to confirm"
    if revision.state == pb.REVISION_STATE_ACTIVE:
        if revision.HasField("valid_from") and revision.valid_from.ToDatetime(UTC) > now:
            return f"from {when(revision.valid_from)}"
        if revision.HasField("valid_until") and revision.valid_until.ToDatetime(UTC) <= now:
            return f"until {when(revision.valid_until)}"
    return state(revision)


def cmd_correct(cli: Cli, args: argparse.Namespace) -> None:
    memory = cli.memories.GetMemory(svc.GetMemoryRequest(name=args.name), metadata=cli.auth).memory
    draft = pb.RevisionDraft(
        value=args.value,
        provenance=pb.Provenance(
            method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=args.evidence
        ),
    )
    if args.effective:
        draft.valid_from.FromDatetime(datetime.fromisoformat(args.effective).astimezone(UTC))
    reply = cli.memories.CorrectMemory(
        svc.CorrectMemoryRequest(
            name=args.name, etag=memory.etag, revision=draft, request_id=str(uuid.uuid4())
        ),
        metadata=cli.auth,
    )
    cli.emit(reply, memory_rows([reply.memory]), ["memory", "scope", "key", "value", "revision"])


def cmd_confirm(cli: Cli, args: argparse.Namespace) -> None:
    reply = cli.memories.ConfirmMemoryRevision(
        svc.ConfirmMemoryRevisionRequest(name=args.revision, request_id=str(uuid.uuid4())),
        metadata=cli.auth,
    )
    cli.emit(reply, memory_rows([reply.memory]), ["memory", "scope", "key", "value", "revision"])


def cmd_delete(cli: Cli, args: argparse.Namespace) -> None:
    reply = cli.memories.DeleteMemory(
        svc.DeleteMemoryRequest(name=args.name, request_id=str(uuid.uuid4())), metadata=cli.auth
    )
    rows = [["removed", e.copy, e.detail] for e in reply.receipt.removed]
    rows += [["not reached", e.copy, e.detail] for e in reply.receipt.not_reached]
    cli.emit(reply, rows, ["", "copy", "detail"])


def cmd_context(cli: Cli, args: argparse.Namespace) -> None:
    try:
        reply = cli.context.BuildContext(
            ctx_pb.BuildContextRequest(
                conversation=args.conversation,
                query=args.query,
                customers=[ctx_pb.CustomerReference(customer_id=c) for c in args.customer],
            ),
            metadata=cli.auth,
        )
    except grpc.RpcError as error:
        code = error.code() if isinstance(error, grpc.Call) else None
        if code == grpc.StatusCode.NOT_FOUND and args.conversation:
            # Conversation ids are per user: another user's, or one never written, is not found.
            raise Refused(
                f"NOT_FOUND: {args.conversation} is not one of your conversations: name one "
                "you wrote in (`make quickstart` writes conversations/quickstart), or leave "
                "--conversation out"
            ) from None
        raise
    # The conversation's recent window first, as the assistant reads it; recalled memories in
    # the order recall ranked them, with their source rather than a score (see `cmd_about`).
    rows = [
        ["said", pb.Speaker.Name(m.speaker).removeprefix("SPEAKER_").lower(), m.text, m.name]
        for m in reply.recent_messages
    ]
    rows += [
        [ctx_pb.ApplicabilityReason.Name(m.reason).removeprefix("APPLICABILITY_REASON_").lower(),
         m.memory.key, m.memory.applicable_revision.value, source(m.memory.applicable_revision)]
        for m in reply.memories
    ]  # fmt: skip
    rows += [
        ["override", o.override.key, o.override.value, f"for now; default {o.shadowed_value!r}"]
        for o in reply.overrides
    ]
    rows += [
        ["recalled", r.memory.key, r.memory.applicable_revision.value,
         source(r.memory.applicable_revision)]
        for r in reply.recalled
    ]  # fmt: skip
    if reply.recall_degraded:
        rows.append(["recalled", "", "(search unavailable: nothing recalled)", ""])
    rows += [
        ["conflict", c.key, " vs ".join(c.values), ", ".join(c.memories)] for c in reply.conflicts
    ]
    rows += [
        [
            "excluded",
            e.subject,
            ctx_pb.ExclusionReason.Name(e.reason).removeprefix("EXCLUSION_REASON_").lower(),
            "",
        ]
        for e in reply.excluded
    ]
    cli.emit(reply, rows, ["why", "key", "value", "source"])
