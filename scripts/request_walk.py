"""The request walk: which layers a request passes through, and whether presenting its answer
climbs back up into the domain's rules (docs/architecture.md, "Request walk").

The memory service is wired in this process as bootstrap.py wires it (the same use cases,
secret scanner and thesaurus), over a fresh SQLite database migrated to head and a stand-in
search that proposes every memory of the tenant, so recall has candidates to validate. Each of
CreateMemory, CorrectMemory, RecallMemories and BuildContext (with a query, so its recall runs
too) is called through its servicer method, `rpc` decorator included, with `sys.setprofile`
recording every call into a `memory_service` module by layer (transport, app, domain, storage,
adapters).

A climb back up is either of:
- a call from transport code into a domain rule once the app entry has been entered: while
  the answer is presented (a `present` callback the app entry runs, or conversion after the
  entry returned), the transport may format and read values, never decide;
- a reparse: a domain rule the transport applied while parsing the request, applied again by
  the app or the domain to the same arguments (one value parsed in two places).

A domain rule is any function of a slice's `domain/` except value accessors and
formatting: dunder methods (a record's constructor, equality, hashing), properties, the
resource-name formatting of `kernel/domain/names.py` (everything there but parsing),
`etags.etag_of`, and the clock and new ids (`model.utcnow`, `model.new_id`).

Usage: .venv/bin/python scripts/request_walk.py  (prints JSON: per RPC the collapsed layer
walk, the climbs with the rules climbed to, and the reparses; exit 1 when any RPC climbs).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from types import FrameType
from typing import Any

# The checkout this script is in, ahead of whatever the environment installed: the walk
# measures this tree's code.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PACKAGE = "memory_service"
LAYERS = ("transport", "app", "domain", "storage", "adapters")
SECRET = "request-walk-secret-of-at-least-32-bytes"
ISSUER, AUDIENCE = "request-walk", "memory-service"
# Formatting, the clock and new ids in domain/: no decision, so presenting may call these.
NOT_RULES = {
    ("memory_service.kernel.domain.etags", "etag_of"),
    ("memory_service.kernel.domain.model", "utcnow"),
    ("memory_service.kernel.domain.model", "new_id"),
}
PARSING_PREFIXES = ("parse", "match")


def layer_of(module: str) -> str | None:
    """The layer of a module of the package: `memory_service.<slice>.<layer>...` (the kernel
    is a slice here)."""
    parts = module.split(".")
    if len(parts) > 2 and parts[0] == PACKAGE and parts[2] in LAYERS:
        return parts[2]
    return None


def _is_property(frame: FrameType) -> bool:
    code = frame.f_code
    if not code.co_argcount or code.co_varnames[0] != "self":
        return False
    owner = frame.f_locals.get("self")
    attribute = getattr(type(owner), code.co_name, None)
    return isinstance(attribute, property) and getattr(attribute.fget, "__code__", None) is code


def is_rule(frame: FrameType) -> bool:
    """A domain function that decides something (not an accessor or a formatter)."""
    module = frame.f_globals.get("__name__", "")
    name = frame.f_code.co_name
    if name.startswith("__") and name.endswith("__"):
        return False
    if name.startswith("<"):  # a comprehension or lambda inside a domain function
        return False
    if module == f"{PACKAGE}.kernel.domain.names" and not name.startswith(PARSING_PREFIXES):
        return False
    if (module, name) in NOT_RULES:
        return False
    return not _is_property(frame)


def _argument_key(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool | datetime | Enum):
        return value
    return ("object", id(value))


def arguments(frame: FrameType) -> tuple[Any, ...]:
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:count]
    return tuple(_argument_key(frame.f_locals.get(n)) for n in names)


def rule_name(frame: FrameType) -> str:
    module = frame.f_globals.get("__name__", "").removeprefix(f"{PACKAGE}.")
    return f"{module}.{frame.f_code.co_qualname}"


@dataclass
class Walk:
    """One request as the profiler saw it."""

    layers: list[str] = field(default_factory=list)
    climbs: Counter[str] = field(default_factory=Counter)
    reparses: Counter[str] = field(default_factory=Counter)
    parsed: set[tuple[str, tuple[Any, ...]]] = field(default_factory=set)
    entry: FrameType | None = None  # the app entry's frame while it runs
    entered: bool = False  # the app entry has been called

    def report(self) -> dict[str, Any]:
        return {
            "walk": collapsed(self.layers),
            "climbs": sum(self.climbs.values()),
            "climbed_to": dict(sorted(self.climbs.items())),
            "reparses": sum(self.reparses.values()),
            "reparsed": dict(sorted(self.reparses.items())),
        }


def collapsed(layers: list[str]) -> str:
    """The layers in call order, a pair that repeats back to back written once with its count:
    `transport > domain > transport > domain > app` is `(transport > domain)x2 > app`."""
    out, i = [], 0
    while i < len(layers):
        pair = layers[i : i + 2]
        times = 1
        while len(pair) == 2 and layers[i + 2 * times : i + 2 * times + 2] == pair:
            times += 1
        if times > 1:
            out.append(f"({' > '.join(pair)})x{times}")
            i += 2 * times
        else:
            out.append(layers[i])
            i += 1
    return " > ".join(out)


def _caller_layer(frame: FrameType) -> tuple[str | None, FrameType | None]:
    """The layer of the nearest memory_service frame below `frame` (skipping the library's)."""
    caller = frame.f_back
    while caller is not None:
        layer = layer_of(caller.f_globals.get("__name__", ""))
        if layer is not None:
            return layer, caller
        caller = caller.f_back
    return None, None


def profiler(walk: Walk) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "return":
            if frame is walk.entry:
                walk.entry = None
            return
        if event != "call":
            return
        layer = layer_of(frame.f_globals.get("__name__", ""))
        if layer is None:
            return
        if not walk.layers or walk.layers[-1] != layer:
            walk.layers.append(layer)
        caller, _ = _caller_layer(frame)
        name = frame.f_code.co_name
        if (
            not walk.entered
            and layer == "app"
            and caller == "transport"
            and not (name.startswith("__") and name != "__call__")
        ):
            walk.entered, walk.entry = True, frame
            return
        if layer != "domain" or not is_rule(frame):
            return
        key = (rule_name(frame), arguments(frame))
        if not walk.entered:
            if caller == "transport":
                walk.parsed.add(key)
            return
        if caller == "transport":
            walk.climbs[key[0]] += 1
        elif key in walk.parsed:
            walk.reparses[key[0]] += 1

    return profile


@contextmanager
def walked() -> Iterator[Walk]:
    walk = Walk()
    sys.setprofile(profiler(walk))
    try:
        yield walk
    finally:
        sys.setprofile(None)


class _Context:
    """The part of grpc.ServicerContext the servicers use."""

    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        return self._metadata

    def time_remaining(self) -> float:
        return 30.0

    def set_code(self, code: Any) -> None:
        pass

    def set_details(self, details: Any) -> None:
        pass

    def abort_with_status(self, status: Any) -> None:
        raise RuntimeError(f"the call failed: {status.code} {status.details!r}")


class _Search:
    """A stand-in sidecar: every memory the tenant holds is a candidate, at its newest
    revision."""

    search_timeout = 5.0

    def __init__(self, units: Any) -> None:
        self._units = units
        self.indexed: dict[str, int] = {}  # memory id -> revision number

    def refusal(self) -> str | None:
        return None

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Any]:
        from memory_service.kernel.domain.ports import Candidate

        return [Candidate(m, 0.9, n) for m, n in self.indexed.items()][:limit]

    def tenant_points(self, tenant_id: str) -> int:
        return len(self.indexed)


def measure(workdir: Path) -> dict[str, dict[str, Any]]:
    from crmmem.memory.v1 import context_service_pb2 as ctx_pb
    from crmmem.memory.v1 import memory_pb2 as pb
    from crmmem.memory.v1 import memory_service_pb2 as service_pb
    from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb

    from memory_service.bootstrap import wire_use_cases
    from memory_service.config import Settings
    from memory_service.context.app.context import BuildContext, ContextCommands, OverrideQueries
    from memory_service.context.domain.context import ContextBuilder
    from memory_service.context.transport.context_servicer import ContextServicer
    from memory_service.documents.domain.documents import DocumentUseCases
    from memory_service.kernel.app.transactions import Transactions
    from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
    from memory_service.kernel.storage.migrate import upgrade
    from memory_service.kernel.transport.auth import TokenAuthenticator
    from memory_service.memories.app.memories import MemoryCommands, MemoryQueries
    from memory_service.memories.app.recall import Recaller, RecallMemories
    from memory_service.memories.domain.recall import RecallUseCases
    from memory_service.review.app.review import ReviewCommands, ReviewQueries
    from memory_service.server import MemoryService
    from memory_service.transcripts.app.transcripts import TranscriptCommands, TranscriptQueries
    from memory_service.transcripts.transport.transcript_servicer import TranscriptServicer
    from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine

    engine = create_database_engine(f"sqlite:///{workdir / 'walk.db'}")
    upgrade(engine)
    units = SqlUnitOfWorkFactory(engine, check_scope=True)
    transactions = Transactions(units, timedelta(hours=24))
    policy = AccessPolicy(GrantTableAuthorizer())
    cases = wire_use_cases(Settings(), policy)  # as the server wires them (bootstrap.py)
    search = _Search(units)
    recaller = Recaller(transactions, RecallUseCases(policy), search)
    authenticator = TokenAuthenticator(SECRET, ISSUER, AUDIENCE)
    memory = MemoryService(
        authenticator,
        MemoryCommands(transactions, cases.memories, searching=True),
        MemoryQueries(transactions, cases.memories),
        RecallMemories(recaller),
        ReviewCommands(transactions, DocumentUseCases(cases.secrets), cases.review),
        ReviewQueries(transactions, cases.review),
    )
    context_service = ContextServicer(
        authenticator,
        BuildContext(transactions, ContextBuilder(policy, cases.overrides, cases.tasks), recaller),
        ContextCommands(transactions, cases.proposals, cases.overrides),
        OverrideQueries(transactions, cases.overrides),
    )
    transcript = TranscriptServicer(
        authenticator,
        TranscriptCommands(transactions, cases.transcript),
        TranscriptQueries(transactions, cases.transcript),
    )
    call = _Context(authenticator.mint("acme", "mara"))

    def said(conversation: str, text: str) -> str:
        request = transcript_pb.AppendMessageRequest(
            parent=conversation,
            message=transcript_pb.Message(speaker=pb.SPEAKER_USER, text=text),
        )
        return str(transcript.AppendMessage(request, call).message.name)

    def draft(value: str, evidence: str) -> pb.RevisionDraft:
        provenance = pb.Provenance(
            method=pb.PROVENANCE_METHOD_USER_STATEMENT,
            speaker=pb.SPEAKER_USER,
            transcript_message=evidence,
            quote=value,
        )
        return pb.RevisionDraft(value=value, provenance=provenance)

    conversation = "conversations/walk"
    first = said(conversation, "I prefer morning meetings")
    create = service_pb.CreateMemoryRequest(
        request_id="6f1c2b1e-8d0a-4c3e-9a57-0e4a3c2d1b00",
        memory=pb.Memory(
            scope=pb.Scope(type=pb.SCOPE_TYPE_USER, id="mara"),
            key="meeting_time",
            kind=pb.MEMORY_KIND_PREFERENCE,
        ),
        revision=draft("I prefer morning meetings", first),
    )
    found: dict[str, dict[str, Any]] = {}
    with walked() as walk:
        created = memory.CreateMemory(create, call)
    found["CreateMemory"] = walk.report()

    second = said(conversation, "I prefer afternoon meetings now")
    correct = service_pb.CorrectMemoryRequest(
        name=created.memory.name,
        etag=created.memory.etag,
        request_id="6f1c2b1e-8d0a-4c3e-9a57-0e4a3c2d1b01",
        revision=draft("I prefer afternoon meetings now", second),
    )
    with walked() as walk:
        corrected = memory.CorrectMemory(correct, call)
    found["CorrectMemory"] = walk.report()

    memory_id = corrected.memory.name.split("/")[1]
    search.indexed[memory_id] = corrected.revision.revision_number
    recall = service_pb.RecallMemoriesRequest(query="meeting time", limit=5)
    with walked() as walk:
        recalled = memory.RecallMemories(recall, call)
    found["RecallMemories"] = walk.report()
    if len(recalled.memories) != 1:
        raise SystemExit(f"recall found {len(recalled.memories)} memories, not the one indexed")

    build = ctx_pb.BuildContextRequest(conversation=conversation, query="meeting time")
    with walked() as walk:
        built = context_service.BuildContext(build, call)
    found["BuildContext"] = walk.report()
    if len(built.memories) != 1 or len(built.recalled) != 1:
        raise SystemExit("the context shows no memory, or recalled none")
    engine.dispose()
    return found


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="request-walk-") as workdir:
        found = measure(Path(workdir))
    print(json.dumps(found, indent=2))
    return 1 if any(r["climbs"] or r["reparses"] for r in found.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
