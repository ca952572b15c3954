"""`memoryctl review`: walk the review queue and settle each item (keep / correct / delete /
confirm), or list it with `--json`. Every action is an ordinary API call made as the caller;
a typed correction is first said in a `review-…` conversation, so it rests on the caller's own
words like any other."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, TextIO

import grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr
from crmmem.memory.v1 import transcript_service_pb2_grpc as tr_grpc
from google.protobuf.json_format import MessageToDict

if TYPE_CHECKING:
    from crmmem.memory.v1 import import_service_pb2_grpc as imp_grpc
    from crmmem.memory.v1 import memory_service_pb2_grpc as svc_grpc


class Cli(Protocol):
    """What the review walk uses of memoryctl's client (`memoryctl/client.py` `Cli`): named
    here so that the walk depends on these fields alone, and never on the modules of memoryctl
    (`cli.py` registers the walk, so an import back would close a circle)."""

    address: str
    auth: tuple[tuple[str, str | bytes], ...]
    memories: svc_grpc.MemoryServiceStub
    imports: imp_grpc.ImportServiceStub
    as_json: bool


REASONS = {
    "conflict": svc.REVIEW_REASON_CONFLICT,
    "source-changed": svc.REVIEW_REASON_SOURCE_CHANGED,
    "candidate": svc.REVIEW_REASON_CANDIDATE,
    "import": svc.REVIEW_REASON_IMPORT_PENDING,
    "unused": svc.REVIEW_REASON_UNUSED,
}
LABELS = {value: name for name, value in REASONS.items()}
# What a person may do with each kind of item; every item can also be skipped, or the walk quit.
ACTIONS = {
    svc.REVIEW_REASON_CONFLICT: ("keep", "correct", "delete"),
    svc.REVIEW_REASON_SOURCE_CHANGED: ("keep", "correct", "delete"),
    svc.REVIEW_REASON_CANDIDATE: ("confirm", "correct", "delete"),
    svc.REVIEW_REASON_IMPORT_PENDING: ("confirm", "delete"),
    svc.REVIEW_REASON_UNUSED: ("keep", "delete"),
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    review = commands.add_parser(
        "review",
        help="walk the review queue: keep / correct / delete / confirm (--json lists it)",
    )
    review.add_argument("--reason", action="append", choices=sorted(REASONS), default=[])
    review.add_argument(
        "--unused-days", type=int, default=0, help="also list memories unused this long"
    )


def items(cli: Cli, args: argparse.Namespace) -> Iterator[svc.ReviewItem]:
    token = ""
    while True:
        reply = cli.memories.ListReviewItems(
            svc.ListReviewItemsRequest(
                reasons=[REASONS[r] for r in args.reason],
                unused_days=args.unused_days,
                page_size=100,
                page_token=token,
            ),
            metadata=cli.auth,
        )
        yield from reply.items
        token = reply.next_page_token
        if not token:
            return


def cmd_review(cli: Cli, args: argparse.Namespace) -> None:
    if cli.as_json:
        listed = [MessageToDict(i, preserving_proto_field_name=True) for i in items(cli, args)]
        print(json.dumps({"items": listed}, indent=2))
        return
    Walk(cli, sys.stdin, sys.stdout).run(list(items(cli, args)))


def value_of(memory: pb.Memory) -> str:
    revision = (
        memory.applicable_revision
        if memory.HasField("applicable_revision")
        else memory.latest_revision
    )
    return revision.value


def describe(memory: pb.Memory) -> str:
    scope = pb.ScopeType.Name(memory.scope.type).removeprefix("SCOPE_TYPE_").lower()
    subject = f"{scope}:{memory.scope.id}" if memory.scope.id else scope
    key = "/".join(p for p in (memory.key, memory.key_context) if p)
    return f"{memory.name}  {subject}  {key} = {value_of(memory)!r}"


class Walk:
    """One pass over the queue as it stood when the walk began."""

    def __init__(self, cli: Cli, stdin: TextIO, stdout: TextIO) -> None:
        self.cli = cli
        self.stdin = stdin
        self.stdout = stdout
        self.transcript = tr_grpc.TranscriptServiceStub(grpc.insecure_channel(cli.address))
        self.conversation = f"conversations/review-{datetime.now(UTC):%Y%m%d-%H%M%S}"
        self.done = 0

    def say(self, text: str) -> None:
        print(text, file=self.stdout)

    def ask(self, prompt: str) -> str | None:
        """The next answer, or None at the end of input (which ends the walk)."""
        print(prompt, end="", file=self.stdout, flush=True)
        line = self.stdin.readline()
        return None if not line else line.strip()

    def run(self, queue: list[svc.ReviewItem]) -> None:
        if not queue:
            self.say("nothing to review")
            return
        for index, item in enumerate(queue, 1):
            self.say(f"\n[{index}/{len(queue)}] {LABELS[item.reason]}: {item.detail}")
            for line in self.lines(item):
                self.say(f"  {line}")
            if not self.settle(item):
                break
        self.say(f"\nsettled {self.done} of {len(queue)}")

    @staticmethod
    def lines(item: svc.ReviewItem) -> list[str]:
        if item.reason == svc.REVIEW_REASON_IMPORT_PENDING:
            return [f"{item.import_item}  {item.import_text!r}"]
        shown = [f"1) {describe(item.memory)}"]
        if item.HasField("other_memory"):
            shown.append(f"2) {describe(item.other_memory)}")
        return shown

    def settle(self, item: svc.ReviewItem) -> bool:
        """Asks until an action succeeds or is skipped; False when the person quits."""
        actions = ACTIONS[item.reason]
        while True:
            answer = self.ask(f"{' / '.join(actions)} / skip / quit? ")
            if answer is None or answer in ("q", "quit"):
                return False
            if answer in ("", "s", "skip"):
                return True
            action = next((a for a in actions if a == answer or a[0] == answer), None)
            if action is None:
                self.say(f"  choose one of: {', '.join(actions)}, skip, quit")
                continue
            try:
                handled = self.act(item, action)
            except grpc.RpcError as error:
                code = error.code().name if isinstance(error, grpc.Call) else "ERROR"
                details = error.details() if isinstance(error, grpc.Call) else str(error)
                self.say(f"  {code}: {details}")
                continue
            if handled is None:
                return False
            if handled:
                self.done += 1
                return True

    def pick(self, item: svc.ReviewItem, verb: str) -> pb.Memory | None:
        """For a conflict, which side the action is about."""
        if not item.HasField("other_memory"):
            return item.memory
        while True:
            answer = self.ask(f"{verb} which, 1 or 2? ")
            if answer is None:
                return None
            if answer in ("1", "2"):
                return item.memory if answer == "1" else item.other_memory

    def act(self, item: svc.ReviewItem, action: str) -> bool | None:
        """True when done, False to ask again, None when input ended."""
        calls: dict[str, Callable[[svc.ReviewItem], bool | None]] = {
            "keep": self.keep,
            "correct": self.correct,
            "delete": self.delete,
            "confirm": self.confirm,
        }
        return calls[action](item)

    def request_id(self) -> str:
        return str(uuid.uuid4())

    def keep(self, item: svc.ReviewItem) -> bool | None:
        if item.reason != svc.REVIEW_REASON_CONFLICT:
            self.say("  kept as it is")
            return True
        kept = self.pick(item, "keep")
        if kept is None:
            return None
        other = item.other_memory if kept.name == item.memory.name else item.memory
        reply = self.cli.memories.ResolveConflict(
            svc.ResolveConflictRequest(
                memory=other.name, kept_memory=kept.name, request_id=self.request_id()
            ),
            metadata=self.cli.auth,
        )
        self.say(
            f"  kept {kept.name}; {other.name} no longer applies "
            f"(r{reply.revision.revision_number} records the decision)"
        )
        return True

    def correct(self, item: svc.ReviewItem) -> bool | None:
        target = self.pick(item, "correct")
        if target is None:
            return None
        value = self.ask("new value: ")
        if value is None:
            return None
        if not value:
            return False
        said = self.transcript.AppendMessage(
            tr.AppendMessageRequest(
                parent=self.conversation,
                message=tr.Message(speaker=pb.SPEAKER_USER, text=value),
            ),
            metadata=self.cli.auth,
        ).message
        current = self.cli.memories.GetMemory(
            svc.GetMemoryRequest(name=target.name), metadata=self.cli.auth
        ).memory
        reply = self.cli.memories.CorrectMemory(
            svc.CorrectMemoryRequest(
                name=target.name,
                etag=current.etag,
                revision=pb.RevisionDraft(
                    value=value,
                    provenance=pb.Provenance(
                        method=pb.PROVENANCE_METHOD_USER_STATEMENT,
                        transcript_message=said.name,
                        quote=value,
                    ),
                ),
                request_id=self.request_id(),
            ),
            metadata=self.cli.auth,
        )
        state = pb.RevisionState.Name(reply.revision.state).removeprefix("REVISION_STATE_")
        self.say(f"  {target.name} r{reply.revision.revision_number} {state.lower()}: {value!r}")
        return True

    def delete(self, item: svc.ReviewItem) -> bool | None:
        if item.reason == svc.REVIEW_REASON_IMPORT_PENDING:
            self.cli.imports.RejectImportItem(
                imp_pb.RejectImportItemRequest(name=item.import_item, request_id=self.request_id()),
                metadata=self.cli.auth,
            )
            self.say(f"  rejected {item.import_item}")
            return True
        target = self.pick(item, "delete")
        if target is None:
            return None
        self.cli.memories.DeleteMemory(
            svc.DeleteMemoryRequest(name=target.name, request_id=self.request_id()),
            metadata=self.cli.auth,
        )
        self.say(f"  deleted {target.name}")
        return True

    def confirm(self, item: svc.ReviewItem) -> bool | None:
        if item.reason == svc.REVIEW_REASON_IMPORT_PENDING:
            key = self.ask("remember it under which key (e.g. seat_preference)? ")
            if key is None:
                return None
            if not key:
                return False
            reply = self.cli.imports.ConfirmImportItem(
                imp_pb.ConfirmImportItemRequest(
                    name=item.import_item,
                    memory=pb.Memory(key=key, kind=pb.MEMORY_KIND_PREFERENCE),
                    request_id=self.request_id(),
                ),
                metadata=self.cli.auth,
            )
            self.say(f"  confirmed as {reply.memory.name} ({key})")
            return True
        candidate = item.memory.latest_revision
        if candidate.state != pb.REVISION_STATE_CANDIDATE:
            self.say("  nothing waits for confirmation here")
            return False
        self.cli.memories.ConfirmMemoryRevision(
            svc.ConfirmMemoryRevisionRequest(name=candidate.name, request_id=self.request_id()),
            metadata=self.cli.auth,
        )
        self.say(f"  confirmed {candidate.name}: {candidate.value!r}")
        return True
