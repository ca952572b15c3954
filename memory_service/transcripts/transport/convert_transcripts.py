"""Transcript messages to and from the wire: what AppendMessage reads, and a message as every
answer that carries one (a transcript read, a context's window) writes it."""

from __future__ import annotations

from collections.abc import Iterable

from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Message, Speaker, TurnStatus
from memory_service.kernel.transport.fields import SPEAKERS, EnumMap, set_time

TURN_STATUSES = EnumMap.named(TurnStatus, transcript_pb.TurnStatus)
_SPEAKER_PROTOS = SPEAKERS.protos


def message_input(message: transcript_pb.Message) -> tuple[Speaker, str, TurnStatus]:
    speaker = SPEAKERS.required(message.speaker, "message.speaker")
    if not message.text.strip():
        raise InvalidArgument("message.text", "is required")
    status = TURN_STATUSES.optional(message.status, "message.status")
    return speaker, message.text, status or TurnStatus.COMPLETED


def append_input(
    request: transcript_pb.AppendMessageRequest,
) -> tuple[str, tuple[Speaker, str, TurnStatus]]:
    """The conversation id and the message of an AppendMessage (or a batch's item)."""
    return names.parse_conversation(request.parent), message_input(request.message)


def message_proto(message: Message) -> transcript_pb.Message:
    out = transcript_pb.Message()
    fill_message(out, message)
    return out


def add_messages(
    out: RepeatedCompositeFieldContainer[transcript_pb.Message], messages: Iterable[Message]
) -> None:
    """Each message written into a new element of `out` in place (a context's window), so a
    long window is built once rather than built apart and copied into the reply."""
    add = out.add
    for message in messages:
        fill_message(add(), message)


def fill_message(out: transcript_pb.Message, message: Message) -> None:
    out.name = names.message(message.conversation_id, message.id)
    out.speaker = _SPEAKER_PROTOS[message.speaker]
    out.text = message.text
    out.status = TURN_STATUSES.protos[message.status]
    out.author_user_id = message.author_user_id
    out.sequence = message.sequence
    set_time(out.create_time, message.create_time)
