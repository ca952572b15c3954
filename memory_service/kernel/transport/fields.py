"""The request and response fields every service shares: enums mapped both ways, times,
request ids, subject ids and keys, and a batch's items. Each slice's own conversions
(`<slice>/transport/convert*.py`) build on these; a refusal names its field."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Generic, TypeVar

from crmmem.memory.v1 import memory_pb2 as pb
from google.protobuf.message import Message as ProtoMessage
from google.protobuf.timestamp_pb2 import Timestamp

from memory_service.kernel.domain.errors import InvalidArgument, batch_item
from memory_service.kernel.domain.model import (
    MemoryKind,
    ProvenanceMethod,
    RevisionStatus,
    ScopeType,
    Speaker,
)
from memory_service.kernel.domain.rules import KEY_PATTERN, MAX_BATCH_ITEMS, SUBJECT_ID_PATTERN

if TYPE_CHECKING:  # a stub-only name: the generated enums' metaclass
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

E = TypeVar("E", bound=StrEnum)
Item = TypeVar("Item", bound=ProtoMessage)
Converted = TypeVar("Converted")


V = TypeVar("V", bound=int)


class EnumMap(Generic[E, V]):
    """One domain enum <-> one proto enum. Unknown numbers (open proto3 enums) are rejected."""

    def __init__(self, pairs: dict[E, V]) -> None:
        self._to_proto = pairs
        self._to_domain = {int(value): member for member, value in pairs.items()}
        # The mapping itself, for loops that convert hundreds: a lookup, not a method call.
        self.protos: Mapping[E, V] = MappingProxyType(pairs)

    @classmethod
    def named(cls, domain: type[E], proto: _EnumTypeWrapper[V]) -> EnumMap[E, V]:
        """Each value of the proto enum but its zero (`<PREFIX>UNSPECIFIED`) with the domain
        member of its name after the prefix: the proto and domain enums name their members
        alike. A domain member the proto lacks (no skip reason) maps to nothing."""
        values = proto.DESCRIPTOR.values
        prefix = proto.DESCRIPTOR.values_by_number[0].name.removesuffix("UNSPECIFIED")
        return cls(
            {
                domain[value.name.removeprefix(prefix)]: proto.Value(value.name)
                for value in values
                if value.number != 0
            }
        )

    def proto(self, member: E) -> V:
        return self._to_proto[member]

    def optional(self, value: int, field: str) -> E | None:
        if value == 0:
            return None
        member = self._to_domain.get(value)
        if member is None:
            raise InvalidArgument(field, f"unknown enum value {value}")
        return member

    def required(self, value: int, field: str) -> E:
        member = self.optional(value, field)
        if member is None:
            raise InvalidArgument(field, "is required")
        return member


SCOPE_TYPES = EnumMap.named(ScopeType, pb.ScopeType)
KINDS = EnumMap.named(MemoryKind, pb.MemoryKind)
STATES = EnumMap.named(RevisionStatus, pb.RevisionState)
SPEAKERS = EnumMap.named(Speaker, pb.Speaker)
METHODS = EnumMap.named(ProvenanceMethod, pb.ProvenanceMethod)


def to_time(message: ProtoMessage, field_name: str, field: str) -> datetime | None:
    if not message.HasField(field_name):
        return None
    timestamp: Timestamp = getattr(message, field_name)
    try:
        return timestamp.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as error:
        raise InvalidArgument(field, f"is not a valid timestamp ({error})") from None


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def set_time(target: Timestamp, value: datetime | None) -> None:
    """As `Timestamp.FromDatetime` (a naive time is UTC), without its per-call conversions: a
    context sets a few hundred of these."""
    if value is not None:
        delta = (value if value.tzinfo else value.replace(tzinfo=UTC)) - EPOCH
        target.seconds = delta.days * 86_400 + delta.seconds
        target.nanos = delta.microseconds * 1000


def check_request_id(request_id: str, field: str = "request_id") -> str:
    """The canonical spelling ('' when absent): `{A-B}`, `urn:uuid:a-b` and `ab` name one
    request, so they must share one idempotency record."""
    if not request_id:
        return ""
    try:
        return str(uuid.UUID(request_id))
    except ValueError:
        raise InvalidArgument(field, "must be a UUID") from None


def subject_id(value: str, field: str, *, required: bool) -> str:
    if not value:
        if required:
            raise InvalidArgument(field, "is required")
        return ""
    if not SUBJECT_ID_PATTERN.fullmatch(value):
        raise InvalidArgument(field, "must be 1-128 characters of [A-Za-z0-9._@:-]")
    return value


def key_field(value: str, field: str, *, required: bool) -> str:
    if not value and not required:
        return ""
    if not value:
        raise InvalidArgument(field, "is required")
    if not KEY_PATTERN.fullmatch(value):
        raise InvalidArgument(
            field, "must start with a letter and use 1-128 characters of [a-z0-9_.-]"
        )
    return value


def batch(items: Sequence[Item], read: Callable[[Item], Converted]) -> list[Converted]:
    """The items of a batch request (AIP-233) `requests`, each read by the single call's
    conversion; a refusal names its item. Items carry no request id of their own: the batch's
    is the one that makes a retry safe."""
    if not items:
        raise InvalidArgument("requests", "is required: 1 to 100 items")
    if len(items) > MAX_BATCH_ITEMS:
        raise InvalidArgument("requests", f"takes at most {MAX_BATCH_ITEMS} items")
    converted = []
    for index, item in enumerate(items):
        with batch_item("requests", index):
            if getattr(item, "request_id", ""):
                raise InvalidArgument("request_id", "must be empty: set the batch's request_id")
            converted.append(read(item))
    return converted
