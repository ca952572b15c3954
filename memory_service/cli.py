"""memoryctl: the memory service for people. "What does the assistant remember about X, and
where did it come from?" in one command: `memoryctl about "meetings"`.

Talks gRPC to a running service (MEMORY_ADDRESS, default 127.0.0.1:50051) with MEMORY_TOKEN,
or with a development token signed with the key the development service keeps in its data
folder (`find_credentials`). Every failure is one line on stderr and exit status 1.

Tables and progress counters are the few lines below, not a library: what they need is aligned
columns and one counter rewritten with `\r`, and the one table library installed beside the
service (rich) arrives only through the sidecar's model-export extra, so memoryctl, which ships
with the memory service alone, would have to add it and its three dependencies to every install.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import context_service_pb2_grpc as ctx_grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import import_service_pb2_grpc as imp_grpc
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service import review_cli

DEFAULT_ADDRESS = "127.0.0.1:50051"
# The file in its data folder where a dev-mode service keeps its key (config.dev_secret).
DEV_SECRET_FILE = "dev-jwt-secret"
# How long to wait for a connection before saying that no service answers.
CONNECT_SECONDS = 5.0

FORMATS = {
    "chatgpt": imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS,
    "summary": imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY,
    "export": imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT,
}


class Refused(Exception):
    """A failure memoryctl explains itself: printed as one line, exit status 1."""


def unreachable(address: str) -> str:
    """The line for a service that does not answer: the address tried and the two ways on."""
    return (
        f"no memory service answers at {address}: start one with `make run` in the checkout "
        "(another terminal), or set MEMORY_ADDRESS=host:port to where it runs"
    )


def connect(address: str) -> grpc.Channel:
    """A channel that has connected, or `Refused` with `unreachable`'s line. A refused
    connection says so at once (its first TRANSIENT_FAILURE), instead of a call's raw
    UNAVAILABLE; an address that never answers takes CONNECT_SECONDS."""
    channel = grpc.insecure_channel(address)
    settled = threading.Event()
    first: list[grpc.ChannelConnectivity] = []

    def watch(state: grpc.ChannelConnectivity) -> None:
        if state in (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            first.append(state)
            settled.set()

    channel.subscribe(watch, try_to_connect=True)
    settled.wait(CONNECT_SECONDS)
    channel.unsubscribe(watch)
    if not first or first[0] != grpc.ChannelConnectivity.READY:
        channel.close()
        raise Refused(unreachable(address))
    return channel


@dataclass(frozen=True)
class Credentials:
    """The token memoryctl sends, and where it came from: a refusal is only actionable when the
    line says which key signed the token and what to set instead."""

    token: str
    origin: str  # where the token came from, for the line that explains a refusal
    advice: str = ""  # what to set when the service refuses it


# What to set when the service refuses a development token.
DEV_KEY_ADVICE = (
    f"set MEMORY_DATA_DIR to the folder holding its {DEV_SECRET_FILE}, or MEMORY_TOKEN to a "
    "token it issued"
)


def checkout_data_dir() -> Path | None:
    """`make run`'s data folder when memoryctl runs from a source checkout (the editable install
    `make` sets up), wherever the shell is: the service there keeps its dev key in it."""
    root = Path(__file__).resolve().parents[1]
    return root / "data" if (root / "pyproject.toml").is_file() else None


def dev_key_file() -> Path | None:
    """The development key the running service uses: in MEMORY_DATA_DIR when set (the service's
    own setting, so the same value names the same file), else in ./data, else in the checkout's
    data folder. Never created here: a key memoryctl made up signs tokens no service accepts."""
    named = os.environ.get("MEMORY_DATA_DIR")
    places = [Path(named)] if named else [Path("data"), checkout_data_dir()]
    for place in places:
        if place is not None and (place / DEV_SECRET_FILE).is_file():
            return (place / DEV_SECRET_FILE).resolve()
    return None


def find_credentials() -> Credentials:
    """MEMORY_TOKEN as given; else a development token for MEMORY_TENANT / MEMORY_USER /
    MEMORY_ROLES (acme / mara / none) signed with MEMORY_JWT_SECRET or the dev key file."""
    if token := os.environ.get("MEMORY_TOKEN"):
        return Credentials(token, "MEMORY_TOKEN")
    from crmmem_runtime.settings import ConfigError, load
    from memory_service.config import Settings
    from memory_service.transport.auth import TokenAuthenticator

    try:
        settings = load(Settings)
    except ConfigError as error:
        raise Refused(f"configuration error: {error}") from None
    key_file = None if settings.jwt_secret else dev_key_file()
    advice = ""
    if settings.jwt_secret:
        secret, origin = settings.jwt_secret, "MEMORY_JWT_SECRET"
    elif key_file is not None:
        secret, origin = key_file.read_text().strip(), f"the development key {key_file}"
        advice = DEV_KEY_ADVICE
    else:
        raise Refused(
            "no token: set MEMORY_TOKEN to a bearer token (`make -s token` in the checkout "
            "prints one), or MEMORY_DATA_DIR to the data folder of the development service "
            f"(the folder holding its {DEV_SECRET_FILE})"
        )
    authenticator = TokenAuthenticator(
        secret,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_max_lifetime_seconds,
    )
    roles = [r for r in os.environ.get("MEMORY_ROLES", "").split(",") if r]
    try:
        token = authenticator.mint(
            os.environ.get("MEMORY_TENANT", "acme"), os.environ.get("MEMORY_USER", "mara"), roles
        )
    except ValueError as error:
        raise Refused(f"cannot make a development token: {error}") from None
    return Credentials(token, origin, advice)


def explain(error: grpc.RpcError, address: str, credentials: Credentials) -> str:
    """One line for a failed call; a refused token says where it came from and what to set."""
    if not isinstance(error, grpc.Call):
        return f"ERROR: {error}"
    line = f"{error.code().name}: {error.details()}"
    if error.code() == grpc.StatusCode.UNAUTHENTICATED:
        line += f"; the service at {address} does not accept the token from {credentials.origin}"
        line += f": {credentials.advice}" if credentials.advice else ""
    return line


def example_channel(address: str, program: str) -> grpc.Channel:
    """For the examples (`make quickstart`, `make demo`): a connected channel, or exit 1 with
    memoryctl's line for a service that does not answer, instead of a traceback."""
    try:
        return connect(address)
    except Refused as error:
        raise SystemExit(f"{program}: {error}") from None


def run_example(
    main: Callable[[], None], program: str, address: str, *, sends_memory_token: bool = False
) -> int:
    """Runs an example's steps; a failed call is one line on stderr and exit status 1. Its
    tokens come from `python -m memory_service token`, which signs with MEMORY_JWT_SECRET or
    the development key in MEMORY_DATA_DIR (./data), unless it sends MEMORY_TOKEN as it is."""
    if sends_memory_token and os.environ.get("MEMORY_TOKEN"):
        credentials = Credentials("", "MEMORY_TOKEN")
    elif os.environ.get("MEMORY_JWT_SECRET"):
        credentials = Credentials("", "MEMORY_JWT_SECRET")
    else:
        folder = Path(os.environ.get("MEMORY_DATA_DIR") or "data").resolve()
        credentials = Credentials(
            "",
            f"the development key {folder / DEV_SECRET_FILE}",
            "set MEMORY_DATA_DIR to that service's data folder, or MEMORY_JWT_SECRET to its key",
        )
    try:
        main()
    except grpc.RpcError as error:
        print(f"{program}: {explain(error, address, credentials)}", file=sys.stderr)
        return 1
    return 0


class Cli:
    def __init__(self, channel: grpc.Channel, address: str, token: str, as_json: bool) -> None:
        self.address = address
        self.auth: tuple[tuple[str, str | bytes], ...] = (("authorization", f"Bearer {token}"),)
        self.memories = svc_grpc.MemoryServiceStub(channel)
        self.context = ctx_grpc.ContextServiceStub(channel)
        self.imports = imp_grpc.ImportServiceStub(channel)
        self.as_json = as_json

    def emit(self, message: Message, rows: list[list[str]], headers: list[str]) -> None:
        if self.as_json:
            print(json.dumps(MessageToDict(message, preserving_proto_field_name=True), indent=2))
            return
        table(headers, rows)


def table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def when(stamp: Timestamp, empty: str = "-") -> str:
    if not stamp.seconds and not stamp.nanos:
        return empty
    return stamp.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M")


def state(revision: pb.MemoryRevision) -> str:
    return pb.RevisionState.Name(revision.state).removeprefix("REVISION_STATE_").lower()


def source(revision: pb.MemoryRevision) -> str:
    provenance = revision.provenance
    speaker = pb.Speaker.Name(provenance.speaker).removeprefix("SPEAKER_").lower()
    method = pb.ProvenanceMethod.Name(provenance.method).removeprefix("PROVENANCE_METHOD_")
    evidence = provenance.transcript_message or provenance.import_item or provenance.kept_memory
    if provenance.HasField("document"):
        evidence = f"{provenance.document.uri} @ {provenance.document.version}"
    confirmed = (
        f", confirmed by {revision.confirmation.user_id}" if revision.confirmation.user_id else ""
    )
    return f"{speaker} ({method.lower()}{confirmed}) {evidence}"


def memory_rows(memories: Sequence[pb.Memory]) -> list[list[str]]:
    rows = []
    for memory in memories:
        revision = (
            memory.applicable_revision
            if memory.HasField("applicable_revision")
            else memory.latest_revision
        )
        scope = pb.ScopeType.Name(memory.scope.type).removeprefix("SCOPE_TYPE_").lower()
        key = "/".join(p for p in (memory.key, memory.key_context) if p)
        rows.append(
            [memory.name, f"{scope}:{memory.scope.id}" if memory.scope.id else scope, key,
             revision.value, f"r{revision.revision_number} {state(revision)}"]
        )  # fmt: skip
    return rows


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


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="memoryctl", description=__doc__.split("\n\n")[0])
    main.add_argument("--json", action="store_true", help="print the API's JSON instead of tables")
    commands = main.add_subparsers(dest="command", required=True)
    about = commands.add_parser("about", help="what is remembered about X, and where it came from")
    about.add_argument("text")
    about.add_argument(
        "--limit", type=int, default=10, help="memories recall adds by meaning (1-50)"
    )
    listing = commands.add_parser("list", help="memories you can see")
    listing.add_argument("--key", default="")
    listing.add_argument("--text", default="")
    for name in ("show", "history"):
        command = commands.add_parser(name, help="a memory's full history with provenance")
        command.add_argument("name", help="memories/{id}")
    correct = commands.add_parser("correct", help="write a new revision")
    correct.add_argument("name")
    correct.add_argument("value")
    correct.add_argument("--evidence", required=True, help="conversations/{c}/messages/{m}")
    correct.add_argument("--effective", default="", help="ISO date-time it takes effect")
    confirm = commands.add_parser("confirm", help="confirm a candidate revision")
    confirm.add_argument("revision", help="memories/{id}/revisions/{n}")
    delete = commands.add_parser("delete", help="delete a memory and print the receipt")
    delete.add_argument("name")
    context = commands.add_parser("context", help="the context a new call would get")
    context.add_argument("--conversation", default="")
    context.add_argument("--customer", action="append", default=[])
    context.add_argument("--query", default="")
    export = commands.add_parser(
        "export", help="export (JSON Lines for a restore, or CSV for people)"
    )
    export.add_argument(
        "--parent", default="users/" + os.environ.get("MEMORY_USER", "mara"), help="or tenant"
    )
    export.add_argument("--include-deleted", action="store_true")
    export.add_argument("--since", default="", help="ISO date-time: an incremental export")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("--output", default="-")
    imported = commands.add_parser(
        "import", help="import an archive for review, or restore an export (--format export)"
    )
    imported.add_argument("file")
    imported.add_argument("--format", choices=sorted(FORMATS), required=True)
    imported.add_argument(
        "--merge", action="store_true", help="restore into a tenant with data (restorer role)"
    )
    review_cli.add_parser(commands)
    return main


COMMANDS: dict[str, Any] = {
    "about": cmd_about, "list": cmd_list, "show": cmd_history, "history": cmd_history,
    "correct": cmd_correct, "confirm": cmd_confirm, "delete": cmd_delete,
    "context": cmd_context, "export": cmd_export, "import": cmd_import,
    "review": review_cli.cmd_review,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    address = os.environ.get("MEMORY_ADDRESS", DEFAULT_ADDRESS)
    try:
        channel = connect(address)
        credentials = find_credentials()
        cli = Cli(channel, address, credentials.token, args.json)
        COMMANDS[args.command](cli, args)
    except Refused as error:
        print(f"memoryctl: {error}", file=sys.stderr)
        return 1
    except grpc.RpcError as error:
        print(f"memoryctl: {explain(error, address, credentials)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
