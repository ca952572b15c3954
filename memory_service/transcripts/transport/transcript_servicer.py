"""The TranscriptService servicer: appending messages and reading them back."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from crmmem.memory.v1 import transcript_service_pb2 as transcript_pb
from crmmem.memory.v1 import transcript_service_pb2_grpc as transcript_grpc

from memory_service.kernel.domain import names
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.transport.fields import batch
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ORDINAL
from memory_service.kernel.transport.rpc import ServicerBase, rpc
from memory_service.transcripts.app.transcripts import TranscriptCommands, TranscriptQueries
from memory_service.transcripts.transport.convert_transcripts import append_input, message_proto


@dataclass(eq=False)
class TranscriptServicer(ServicerBase, transcript_grpc.TranscriptServiceServicer):
    commands: TranscriptCommands
    queries: TranscriptQueries

    @rpc
    def AppendMessage(
        self,
        request: transcript_pb.AppendMessageRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.AppendMessageResponse:
        conversation_id, message = append_input(request)
        return self.commands.append(
            identity,
            request_key("AppendMessage", request, transcript_pb.AppendMessageResponse),
            conversation_id,
            message,
            lambda message: transcript_pb.AppendMessageResponse(message=message_proto(message)),
        )

    @rpc
    def BatchAppendMessages(
        self,
        request: transcript_pb.BatchAppendMessagesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.BatchAppendMessagesResponse:
        messages = batch(request.requests, append_input)
        return self.commands.batch_append(
            identity,
            request_key("BatchAppendMessages", request, transcript_pb.BatchAppendMessagesResponse),
            messages,
            lambda appended: transcript_pb.BatchAppendMessagesResponse(
                messages=[message_proto(m) for m in appended]
            ),
        )

    @rpc
    def ListMessages(
        self,
        request: transcript_pb.ListMessagesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.ListMessagesResponse:
        conversation_id = names.parse_conversation(request.parent)
        page = self.pages.page(request, identity, [ORDINAL])
        after = page.cursor(0)
        messages = self.queries.messages(identity, conversation_id, after, page.fetch)
        shown, token = page.respond(messages, lambda m: (m.sequence,))
        return transcript_pb.ListMessagesResponse(
            messages=[message_proto(m) for m in shown], next_page_token=token
        )

    @rpc
    def GetMessage(
        self,
        request: transcript_pb.GetMessageRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> transcript_pb.GetMessageResponse:
        conversation_id, message_id = names.parse_message(request.name, "name")
        message = self.queries.get(identity, conversation_id, message_id)
        return transcript_pb.GetMessageResponse(message=message_proto(message))
