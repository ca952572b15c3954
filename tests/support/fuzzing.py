"""Hostile requests built from the proto descriptors, for every RPC of both services.

One builder walks a request's descriptor field by field and asks a `Source` for each value, so
the same generator serves the hypothesis property test (`HypothesisSource`) and `make fuzz`
(`RandomSource`, fast and seedable). Values mix the plausible (real resource names, tokens the
server issued, valid keys) with the hostile (NUL, lone combining marks, huge strings, extreme
integers, unknown enum numbers, forged page tokens, timestamps outside 0001-9999), so requests
get past the first check as well as fail it.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from crmmem.memory.v1 import (
    access_service_pb2,
    context_service_pb2,
    import_service_pb2,
    memory_pb2,
    memory_service_pb2,
    task_service_pb2,
    transcript_service_pb2,
)
from crmmem.retrieval.v1 import retrieval_service_pb2
from google.protobuf import descriptor, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from tests.support import exports
from tests.support.servers import mint_token

MEMORY_MODULES = (
    memory_service_pb2,
    import_service_pb2,
    context_service_pb2,
    transcript_service_pb2,
    access_service_pb2,
    task_service_pb2,
)
RETRIEVAL_MODULES = (retrieval_service_pb2,)
MAX_DEPTH = 4
MAX_REPEATED = 4

INT_EDGES = (0, 1, -1, 2, 59, 60, 3600, 2**31 - 1, -(2**31), 2**31, 2**32, 2**40, 2**53, 2**62)
INT64_EDGES = (2**63 - 1, -(2**63), 2**63 - 2, 10**18)
UINT_EDGES = (2**64 - 1, 2**63)
# Seconds that make datetime, protobuf or a database choke: year 0, year 10000, 2**63.
TIMESTAMP_SECONDS = (
    0,
    -1,
    1_700_000_000,
    4_102_444_800,  # 2100
    -62_135_596_800,  # 0001-01-01
    -62_135_596_801,
    253_402_300_799,  # 9999-12-31T23:59:59
    253_402_300_800,
    2**62,
    -(2**63),
    2**63 - 1,
)
NASTY_TEXT = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "\x00" * 64,
    "acme\n",
    "\u0301",
    "\ufeff",
    "\u202e",
    "😀" * 40,
    "%s%n%x",
    "'; DROP TABLE memories; --",
    "../../../../etc/passwd",
    "America",
    "UTC",
    "Europe/Berlin",
    "\\",
    "\ud7ff\ue000\uffff",
    "\U0001d518\U0001d52b",  # mathematical letters outside the BMP
)
PAGE_TOKEN_PAYLOADS: tuple[Any, ...] = (
    ["zzz"],
    [None],
    [2**70],
    [-1],
    [1.5],
    [[]],
    [{}],
    ["a", "b", "c"],
    [],
    "x",
    {"q": "0" * 16, "a": ["zzz"]},
    {"q": "0" * 16, "a": [None]},
    {"q": "0" * 16, "a": [2**70]},
    {"q": "0" * 16, "a": 5},
    {"a": ["x"]},
    None,
    1e308,
)


class Source(Protocol):
    """Where the builder gets each choice from."""

    def choice(self, options: Sequence[Any]) -> Any: ...

    def integer(self, low: int, high: int) -> int: ...

    def coin(self, p: float) -> bool: ...

    def text(self, max_size: int) -> str: ...

    def blob(self, max_size: int) -> bytes: ...


class RandomSource:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def coin(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self, max_size: int) -> str:
        size = self.rng.randint(0, max_size)
        alphabet = self.choice(
            ("abcdefghij_.-/", "ABCxyz0123456789 ", "\x00\x01\n\t\u0301é漢😀\u202e")
        )
        return "".join(self.rng.choice(alphabet) for _ in range(size))

    def blob(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, max_size))


class HypothesisSource:
    """Each choice is a hypothesis draw, so failures shrink field by field."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies as st

        self.st = st
        self.draw = draw

    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(self.st.sampled_from(list(options)))

    def integer(self, low: int, high: int) -> int:
        return int(self.draw(self.st.integers(low, high)))

    def coin(self, p: float) -> bool:
        return bool(self.draw(self.st.integers(0, 999)) < p * 1000)

    def text(self, max_size: int) -> str:
        alphabet = self.st.characters(codec="utf-8")
        return str(self.draw(self.st.text(alphabet, max_size=max_size)))

    def blob(self, max_size: int) -> bytes:
        return bytes(self.draw(self.st.binary(max_size=max_size)))


@dataclass
class Pool:
    """Strings the server handed out (names, tokens), so some requests reach deep code."""

    values: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, value: str) -> None:
        if value:
            bucket = self.values.setdefault(kind, [])
            if value not in bucket:
                bucket.append(value)
                del bucket[:-50]

    def get(self, kind: str) -> list[str]:
        return self.values.get(kind, [])

    def harvest(self, message: Message) -> None:
        """Remembers every name and page token in a response."""
        for field_descriptor, value in message.ListFields():
            if field_descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                items = value if field_descriptor.is_repeated else [value]
                for item in items:
                    if isinstance(item, Message):
                        self.harvest(item)
            elif field_descriptor.type == FieldDescriptor.TYPE_STRING:
                items = value if field_descriptor.is_repeated else [value]
                for item in items:
                    self.add(_kind_of(field_descriptor.name, item), item)


def _kind_of(field_name: str, value: str) -> str:
    if field_name == "next_page_token":
        return "page_token"
    if field_name == "etag":
        return "etag"
    if value.startswith("memories/") and "/revisions/" in value:
        return "revision"
    return value.split("/", 1)[0] if "/" in value else field_name


def forged_token(source: Source) -> str:
    payload = source.choice(PAGE_TOKEN_PAYLOADS)
    raw = json.dumps(payload).encode()
    encoded = base64.urlsafe_b64encode(raw).decode()
    return source.choice(
        (encoded, encoded.rstrip("="), encoded + ".AAAA", "!!!", "%%%", "a" * 5000)
    )


def timestamp_seconds(source: Source) -> int:
    if source.coin(0.5):
        return int(source.choice(TIMESTAMP_SECONDS))
    return source.integer(-(2**63), 2**63 - 1)


class Builder:
    """Random request messages for one descriptor, field by field."""

    def __init__(self, source: Source, pool: Pool | None = None) -> None:
        self.source = source
        self.pool = pool or Pool()

    def message(self, message_descriptor: descriptor.Descriptor, depth: int = 0) -> Message:
        cls = message_factory.GetMessageClass(message_descriptor)
        out: Message = cls()
        if message_descriptor.full_name == "google.protobuf.Timestamp":
            out.seconds = timestamp_seconds(self.source)  # type: ignore[attr-defined]
            out.nanos = self.source.choice((0, 1, 999_999_999, 1_000_000_000, -1, 2**31 - 1))  # type: ignore[attr-defined]
            return out
        chosen_oneofs: set[str] = set()
        for field_descriptor in message_descriptor.fields:
            oneof = field_descriptor.containing_oneof
            if oneof is not None and oneof.name in chosen_oneofs:
                continue
            if not self.source.coin(0.7 if depth < 2 else 0.35):
                continue
            if oneof is not None:
                chosen_oneofs.add(oneof.name)
            self._set(out, field_descriptor, depth)
        return out

    def _set(self, out: Message, field_descriptor: FieldDescriptor, depth: int) -> None:
        name = field_descriptor.name
        if field_descriptor.is_repeated:
            count = self.source.integer(0, MAX_REPEATED)
            target = getattr(out, name)
            entry = field_descriptor.message_type
            if entry is not None and entry.GetOptions().map_entry:  # e.g. a Struct's fields
                key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
                for _ in range(count if depth < MAX_DEPTH else 0):
                    slot = self.scalar(key)
                    if value.type == FieldDescriptor.TYPE_MESSAGE:
                        target[slot].CopyFrom(self.message(value.message_type, depth + 1))
                    else:
                        target[slot] = self.scalar(value)
                return
            for _ in range(count):
                if field_descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                    if depth < MAX_DEPTH:
                        item = self.message(field_descriptor.message_type, depth + 1)
                        target.add().CopyFrom(item)
                else:
                    target.append(self.scalar(field_descriptor))
            return
        if field_descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            if depth < MAX_DEPTH:
                getattr(out, name).CopyFrom(self.message(field_descriptor.message_type, depth + 1))
            return
        setattr(out, name, self.scalar(field_descriptor))

    def scalar(self, field_descriptor: FieldDescriptor) -> Any:
        kind = field_descriptor.type
        source = self.source
        if kind == FieldDescriptor.TYPE_STRING:
            return self.string(field_descriptor.name)
        if kind == FieldDescriptor.TYPE_BYTES:
            return self.archive()
        if kind == FieldDescriptor.TYPE_BOOL:
            return source.coin(0.5)
        if kind == FieldDescriptor.TYPE_ENUM:
            numbers = [v.number for v in field_descriptor.enum_type.values]
            if source.coin(0.8):
                return source.choice(numbers)
            return source.choice((-1, 99, 2**31 - 1, -(2**31)))
        if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return source.choice((0.0, -1.0, 1e308, float("inf"), float("nan"), 0.5, -0.0))
        signed64 = kind in (
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_SINT64,
            FieldDescriptor.TYPE_SFIXED64,
        )
        unsigned = kind in (
            FieldDescriptor.TYPE_UINT32,
            FieldDescriptor.TYPE_UINT64,
            FieldDescriptor.TYPE_FIXED32,
            FieldDescriptor.TYPE_FIXED64,
        )
        wide = signed64 or kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
        low, high = (
            (0, 2**64 - 1 if wide else 2**32 - 1)
            if unsigned
            else ((-(2**63), 2**63 - 1) if wide else (-(2**31), 2**31 - 1))
        )
        candidates = [*INT_EDGES, *(INT64_EDGES if wide else ()), *(UINT_EDGES if unsigned else ())]
        value = source.choice(candidates) if source.coin(0.7) else source.integer(low, high)
        return min(max(int(value), low), high)

    def string(self, field_name: str) -> str:
        source = self.source
        roll = source.integer(0, 9)
        if roll <= 3:
            plausible = self.plausible(field_name)
            if plausible:
                return plausible
        if roll <= 5:
            return str(source.choice(NASTY_TEXT))
        if roll == 6:
            base = self.plausible(field_name) or "x"
            return source.choice((base + "\x00", base * source.integer(2, 400), "\x00" + base))
        if roll == 7:
            return source.choice(("a", "é", "\x00", "😀", "z/")) * source.choice(
                (129, 257, 321, 513, 2001, 4001, 32_001, 200_000)
            )
        return source.text(40)

    def plausible(self, field_name: str) -> str:
        """A value of the right shape for this field, often one the server issued."""
        source = self.source
        pool = self.pool
        by_field: dict[str, Callable[[], str]] = {
            "request_id": lambda: source.choice(
                (str(uuid.uuid4()), uuid.uuid4().hex, "{" + str(uuid.uuid4()) + "}", "urn:uuid:0")
            ),
            "page_token": lambda: (
                source.choice(pool.get("page_token"))
                if pool.get("page_token") and source.coin(0.5)
                else forged_token(source)
            ),
            "etag": lambda: source.choice(
                (
                    *("v1", "v2", "v0", "v999999999999999999", "v" + "9" * 40),
                    *('"v1"', '"v2"', 'W/"v1"', '"v1', *pool.get("etag")),
                )
            ),
            "key": lambda: source.choice(("language", "tone.email", "a" * 128, "a" * 129)),
            "key_context": lambda: source.choice(("", "work", "k" * 128)),
            "end_of_day_time_zone": lambda: source.choice(
                ("UTC", "Europe/Berlin", "America", "Etc/GMT+14", "posixrules", "a" * 300)
            ),
            "tenant_id": lambda: source.choice(("acme", "t-fuzz", "x" * 200)),
            "scope_type": lambda: source.choice(("USER", "CUSTOMER", "ORGANIZATION", "")),
        }
        if field_name in by_field:
            return str(by_field[field_name]())
        kinds = {
            "name": ("memories", "revision", "conversations", "importBatches", "users"),
            "parent": ("memories", "conversations", "importBatches", "tasks", "users"),
            "transcript_message": ("conversations",),
            "evidence_messages": ("conversations",),
            "import_item": ("importBatches",),
            "conversation": ("conversations",),
            "task": ("tasks",),
        }.get(field_name)
        if kinds:
            options = [v for kind in kinds for v in pool.get(kind)]
            if options and source.coin(0.7):
                return str(source.choice(options))
            prefix = source.choice(kinds)
            if prefix == "revision":
                prefix = "memories"
            return f"{prefix}/{source.choice(('fuzz', uuid.uuid4().hex, 'a' * 129, '', '..'))}"
        if field_name in ("user_id", "customer_id", "id", "scope_id", "author_user_id"):
            return str(source.choice(("alice", "bob", "cust-1", "a" * 128, "a" * 129)))
        if field_name in ("value", "text", "quote", "query", "value_contains", "display_name"):
            return str(source.choice(("prefers email", "I prefer email", "Acme GmbH", "email")))
        return ""

    def archive(self) -> bytes:
        """Archives of each format, well-formed or not, plus random bytes."""
        source = self.source
        roll = source.integer(0, 5)
        if roll == 0:
            return source.blob(64)
        if roll == 1:
            return b"- a\n- " + source.text(20).encode("utf-8", "surrogatepass")
        if roll == 2:
            return json.dumps(chatgpt_archive(source)).encode()
        if roll == 3:
            return export_archive(source).encode()
        if roll == 4:
            return source.choice(
                (b"[" * 100_000, b"1" * 5000, b"[" + b"9" * 5000 + b"]", b"\xff\xfe", b"{}")
            )
        return b""


def chatgpt_archive(source: Source) -> list[Any]:
    odd = source.choice(
        ("x", 7, None, [], {}, [7], [None], {"name": 7}, [{"name": None}], "a" * 600, 1e308)
    )
    part = source.choice(("hello", 5, None, {"asset_pointer": "x"}, {"name": odd}, "\x00", []))
    message = {
        "id": source.choice(("m1", 7, None, "m" * 600)),
        "author": {"role": source.choice(("user", "assistant", "tool", 7))},
        "content": {"parts": [part]},
        "create_time": source.choice((1.7e9, None, 1e300, -1e300, "x", 10**400 if False else 0)),
        "metadata": source.choice(({"attachments": odd}, odd, {})),
    }
    return [
        {
            "conversation_id": source.choice(("c1", "c" * 600, 7, None)),
            "current_node": "n1",
            "mapping": {"n1": {"message": message, "parent": None}},
        }
    ]


def export_archive(source: Source) -> str:
    """A header and one memory whose numbers, texts, ids and times may break the rules."""
    value = source.choice(("email", "\x00", "v" * 5000))
    revision = exports.revision(
        value,
        number=source.choice((1, 0, -1, 2**31, 2**40, 2**63, 10**30, 1.5, "1")),
        author_user_id=source.choice(("alice", "a" * 200, "\x00")),
        replaces=source.choice((None, 2**40, -5)),
    )
    revision["provenance"]["evidence"] = source.choice(
        (revision["provenance"]["evidence"], "e" * 400, "\x00")
    )
    revision["temporal"]["created_at"] = source.choice(
        ("2024-01-01T00:00:00Z", "0001-01-01T00:00:00+14:00")
    )
    revision["temporal"]["valid_until"] = source.choice((None, "9999-12-31T23:59:59-14:00"))
    record = exports.memory(
        key="language",
        user=source.choice(("alice", "a" * 200, "\x00")),
        revisions=[revision],
        key_context=source.choice(("", "c" * 200)),
    )
    return exports.archive(record).decode()


@dataclass(frozen=True)
class Rpc:
    service: str
    method: str
    path: str
    request: descriptor.Descriptor
    response: descriptor.Descriptor
    streaming: bool


def rpcs(modules: Sequence[Any]) -> list[Rpc]:
    """Every method of every service the modules declare."""
    found = []
    for module in modules:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                found.append(
                    Rpc(
                        service.name,
                        method.name,
                        f"/{service.full_name}/{method.name}",
                        method.input_type,
                        method.output_type,
                        method.server_streaming,
                    )
                )
    return found


def call(
    channel: grpc.Channel,
    rpc: Rpc,
    payload: bytes,
    metadata: Sequence[tuple[str, str]],
    timeout: float = 30,
) -> tuple[grpc.StatusCode, bytes | None]:
    """Sends serialized bytes as the request (identity serializers) and returns the status."""
    try:
        if rpc.streaming:
            stream = channel.unary_stream(rpc.path)
            replies = list(stream(payload, metadata=metadata, timeout=timeout))
            return grpc.StatusCode.OK, replies[-1] if replies else None
        reply = channel.unary_unary(rpc.path)(payload, metadata=metadata, timeout=timeout)
        return grpc.StatusCode.OK, reply
    except grpc.RpcError as error:
        return error.code(), None


def mutations(source: Source, payload: bytes) -> Iterator[bytes]:
    """Raw-bytes variants of a valid payload: truncated, bit-flipped, random, doubled."""
    yield source.blob(64)
    if payload:
        cut = source.integer(0, len(payload))
        yield payload[:cut]
        flipped = bytearray(payload)
        index = source.integer(0, len(flipped) - 1)
        flipped[index] ^= 1 << source.integer(0, 7)
        yield bytes(flipped)
        yield payload + source.blob(16)


def _first(pool: Pool, kind: str, fallback: str) -> str:
    values = pool.get(kind)
    return values[0] if values else fallback


def templates(pool: Pool) -> dict[str, dict[str, Any]]:
    """A valid request per RPC (as JSON), naming things the pool says exist.

    Mutating one field of a valid request reaches the code behind the first check, which
    purely random messages rarely do.
    """
    memory = _first(pool, "memories", "memories/" + "0" * 32)
    revision = _first(pool, "revision", memory + "/revisions/1")
    message = _first(pool, "conversations", "conversations/fuzz/messages/" + "0" * 32)
    batch = _first(pool, "importBatches", "importBatches/" + "0" * 32)
    items = [v for v in pool.get("importBatches") if "/items/" in v]
    item = items[0] if items else batch + "/items/" + "0" * 32
    batch = item.split("/items/")[0]
    now = "2026-01-01T00:00:00Z"
    scope = {"type": "SCOPE_TYPE_USER"}
    provenance = {
        "speaker": "SPEAKER_USER",
        "method": "PROVENANCE_METHOD_USER_STATEMENT",
        "transcriptMessage": message,
        "quote": "I prefer email",
        "sourceTime": now,
    }
    draft = {"value": "email", "validFrom": now, "provenance": provenance}
    memory_ref = {"scope": scope, "key": "contact.channel", "kind": "MEMORY_KIND_PREFERENCE"}
    return {
        "CreateMemory": {"memory": memory_ref, "revision": draft, "requestId": str(uuid.uuid4())},
        "GetMemory": {"name": memory, "asOf": now},
        "ListMemories": {"pageSize": 2, "scopeType": "SCOPE_TYPE_USER", "asOf": now},
        "CorrectMemory": {"name": memory, "etag": "v1", "revision": draft},
        "ConfirmMemoryRevision": {"name": revision, "transcriptMessage": message},
        "RejectMemoryRevision": {"name": revision},
        "ListMemoryRevisions": {"parent": memory, "pageSize": 1},
        "DeleteMemory": {"name": memory},
        "RecallMemories": {"query": "email", "limit": 5, "asOf": now},
        "ReindexMemories": {},
        "ExportMemories": {"parent": "tenant"},
        "CreateImportBatch": {
            "format": "ARCHIVE_FORMAT_MEMORY_SUMMARY",
            "archive": base64.b64encode(b"- prefers email\n").decode(),
        },
        "GetImportBatch": {"name": batch},
        "ListImportItems": {"parent": batch, "pageSize": 1},
        "ConfirmImportItem": {"name": item, "memory": memory_ref, "value": "email"},
        "RejectImportItem": {"name": item},
        "DeleteImportBatch": {"name": batch},
        "BuildContext": {
            "conversation": "conversations/fuzz",
            "task": "tasks/fuzz",
            "asOf": now,
            "query": "email",
            "customers": [{"customerId": "cust-1"}, {"name": "Acme GmbH"}],
            "windowSize": 5,
            "recallLimit": 3,
        },
        "ProposeMemory": {
            "memory": memory_ref,
            "value": "email",
            "method": "PROVENANCE_METHOD_USER_STATEMENT",
            "evidenceMessages": [message],
            "validFrom": now,
        },
        "CreateOverride": {
            "parent": "conversations/fuzz",
            "override": {
                "key": "tone",
                "scope": scope,
                "value": "short",
                "transcriptMessage": message,
            },
            "expiry": {"ttlSeconds": 3600},
        },
        "ListOverrides": {"parent": "conversations/fuzz", "asOf": now, "pageSize": 1},
        "GetOverride": {"name": f"conversations/fuzz/overrides/{'0' * 32}"},
        "DeleteOverride": {"name": f"tasks/fuzz/overrides/{'0' * 32}"},
        "GetMessage": {"name": message},
        "GetCustomer": {"name": "customers/cust-1"},
        "ListCustomers": {"pageSize": 1},
        "DeleteCustomer": {"name": "customers/cust-1"},
        "GetCustomerGrant": {"name": "users/bob/customerGrants/cust-1"},
        "AppendMessage": {
            "parent": "conversations/fuzz",
            "message": {"speaker": "SPEAKER_USER", "text": "I prefer email"},
        },
        "ListMessages": {"parent": "conversations/fuzz", "pageSize": 1},
        "GetCaller": {},
        "GrantCustomerAccess": {"userId": "bob", "customerId": "cust-1"},
        "RevokeCustomerAccess": {"name": "users/bob/customerGrants/cust-1"},
        "ListCustomerGrants": {"pageSize": 1},
        "RegisterCustomer": {"customer": {"customerId": "cust-1", "displayName": "Acme GmbH"}},
        "UpsertDocuments": {
            "documents": [
                {
                    "id": "0" * 32,
                    "tenantId": "acme",
                    "version": "1",
                    "revisionNumber": "1",
                    "text": "prefers email",
                    "scopeType": "USER",
                    "scopeId": "alice",
                }
            ]
        },
        "DeleteDocuments": {"tenantId": "acme", "ids": ["0" * 32]},
        "Search": {
            "tenantId": "acme",
            "query": "email",
            "limit": 5,
            "scopes": [{"scopeType": "USER", "scopeId": "alice"}],
        },
        "GetStats": {},
    }


def template_message(rpc: Rpc, pool: Pool) -> Message:
    from google.protobuf import json_format

    cls = message_factory.GetMessageClass(rpc.request)
    out: Message = cls()
    json_format.ParseDict(templates(pool).get(rpc.method, {}), out)
    return out


def mutate(builder: Builder, message: Message, depth: int = 0) -> Message:
    """`message` with one field, possibly nested, replaced by a generated value."""
    fields = list(message.DESCRIPTOR.fields)
    if not fields:
        return message
    field_descriptor = builder.source.choice(fields)
    nested = (
        field_descriptor.type == FieldDescriptor.TYPE_MESSAGE
        and not field_descriptor.is_repeated
        and field_descriptor.message_type.full_name != "google.protobuf.Timestamp"
        and message.HasField(field_descriptor.name)
        and depth < MAX_DEPTH
        and builder.source.coin(0.6)
    )
    if nested:
        mutate(builder, getattr(message, field_descriptor.name), depth + 1)
        return message
    message.ClearField(field_descriptor.name)
    if builder.source.coin(0.9):
        builder._set(message, field_descriptor, depth)
    return message


def request_for(builder: Builder, rpc: Rpc) -> Message:
    """Half the time a random message, half the time a valid one with one or two fields hostile."""
    if builder.source.coin(0.5):
        return builder.message(rpc.request)
    message = template_message(rpc, builder.pool)
    for _ in range(builder.source.integer(1, 2)):
        mutate(builder, message)
    return message


def seed_pool(channel: grpc.Channel, tenant: str, pool: Pool) -> None:
    """A conversation, a memory and an import, so names in the pool point at real things."""
    metadata = (("authorization", f"Bearer {mint_token(tenant, 'alice')}"),)
    append = channel.unary_unary(
        "/crmmem.memory.v1.TranscriptService/AppendMessage",
        request_serializer=transcript_service_pb2.AppendMessageRequest.SerializeToString,
        response_deserializer=transcript_service_pb2.AppendMessageResponse.FromString,
    )
    reply = append(
        transcript_service_pb2.AppendMessageRequest(
            parent="conversations/fuzz",
            message=transcript_service_pb2.Message(
                speaker=memory_pb2.SPEAKER_USER, text="I prefer email, never calls"
            ),
        ),
        metadata=metadata,
    )
    pool.harvest(reply)
    create = channel.unary_unary(
        "/crmmem.memory.v1.MemoryService/CreateMemory",
        request_serializer=memory_service_pb2.CreateMemoryRequest.SerializeToString,
        response_deserializer=memory_service_pb2.CreateMemoryResponse.FromString,
    )
    for key in ("contact.channel", "language", "tone"):
        created = create(
            memory_service_pb2.CreateMemoryRequest(
                memory=memory_pb2.Memory(
                    scope=memory_pb2.Scope(type=memory_pb2.SCOPE_TYPE_USER),
                    key=key,
                    kind=memory_pb2.MEMORY_KIND_PREFERENCE,
                ),
                revision=memory_pb2.RevisionDraft(
                    value="email",
                    provenance=memory_pb2.Provenance(
                        speaker=memory_pb2.SPEAKER_USER,
                        method=memory_pb2.PROVENANCE_METHOD_USER_STATEMENT,
                        transcript_message=reply.message.name,
                        quote="I prefer email",
                    ),
                ),
            ),
            metadata=metadata,
        )
        pool.harvest(created)
    batch = channel.unary_unary(
        "/crmmem.memory.v1.ImportService/CreateImportBatch",
        request_serializer=import_service_pb2.CreateImportBatchRequest.SerializeToString,
        response_deserializer=import_service_pb2.CreateImportBatchResponse.FromString,
    )(
        import_service_pb2.CreateImportBatchRequest(
            format=import_service_pb2.ARCHIVE_FORMAT_MEMORY_SUMMARY,
            archive=b"- prefers email\n- works in Berlin\n- likes short answers\n",
        ),
        metadata=metadata,
    )
    pool.harvest(batch)
    items = channel.unary_unary(
        "/crmmem.memory.v1.ImportService/ListImportItems",
        request_serializer=import_service_pb2.ListImportItemsRequest.SerializeToString,
        response_deserializer=import_service_pb2.ListImportItemsResponse.FromString,
    )(
        import_service_pb2.ListImportItemsRequest(parent=batch.batch.name, page_size=1),
        metadata=metadata,
    )
    pool.harvest(items)


# The sidecar's shared secret, where this version of the sidecar has one: callers are tried with
# and without it, so requests reach the handlers as well as the door.
SIDECAR_SECRET_KEY = "x-crmmem-retrieval-secret"


def sidecar_callers(secret: str) -> list[tuple[tuple[str, str], ...]]:
    callers: list[tuple[tuple[str, str], ...]] = [(), ((SIDECAR_SECRET_KEY, "wrong"),)]
    if secret:
        callers += [((SIDECAR_SECRET_KEY, secret),)] * 3
    return callers
