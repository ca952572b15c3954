"""gRPC servicer for the context service: BuildContext, ProposeMemory and overrides."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import context_service_pb2_grpc as ctx_grpc

from memory_service.context.app.context import BuildContext, ContextCommands, OverrideQueries
from memory_service.context.transport import convert_context as cc
from memory_service.kernel.domain import names
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.transport.deadline import caller_deadline
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ID
from memory_service.kernel.transport.rpc import ServicerBase, as_of_instant, rpc
from memory_service.memories.public import ShowsCurrentMemory, recall_limit, recall_query


@dataclass(eq=False)
class ContextServicer(ShowsCurrentMemory, ServicerBase, ctx_grpc.ContextServiceServicer):
    build_context: BuildContext
    commands: ContextCommands
    overrides: OverrideQueries

    @rpc
    def BuildContext(
        self, request: ctx_pb.BuildContextRequest, context: grpc.ServicerContext, identity: Identity
    ) -> ctx_pb.BuildContextResponse:
        instant = as_of_instant(request)
        query = recall_query(request.query) if request.query.strip() else ""
        limit = recall_limit(request.recall_limit)
        context_request = cc.context_request(request, instant)
        built = self.build_context(
            identity, context_request, query, limit, caller_deadline(context)
        )
        return cc.context_proto(built)

    @rpc
    def ProposeMemory(
        self,
        request: ctx_pb.ProposeMemoryRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> ctx_pb.ProposeMemoryResponse:
        proposal = cc.proposal(request)

        return self.commands.propose(
            identity,
            request_key("ProposeMemory", request, ctx_pb.ProposeMemoryResponse),
            proposal,
            cc.proposal_proto,
        )

    @rpc
    def CreateOverride(
        self,
        request: ctx_pb.CreateOverrideRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> ctx_pb.CreateOverrideResponse:
        parent = names.parse_parent(request.parent)
        draft = cc.override_draft(request.override)
        expiry = cc.expiry(request)

        return self.commands.create_override(
            identity,
            request_key("CreateOverride", request, ctx_pb.CreateOverrideResponse),
            parent,
            draft,
            expiry,
            lambda override: ctx_pb.CreateOverrideResponse(override=cc.override_proto(override)),
        )

    @rpc
    def ListOverrides(
        self,
        request: ctx_pb.ListOverridesRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> ctx_pb.ListOverridesResponse:
        parent = names.parse_parent(request.parent)
        instant = as_of_instant(request)
        page = self.pages.page(request, identity, [ID])
        after = page.cursor("")
        overrides = self.overrides.active(identity, parent, instant, after, page.fetch)
        shown, token = page.respond(overrides, lambda o: (o.id,))
        return ctx_pb.ListOverridesResponse(
            overrides=[cc.override_proto(o) for o in shown], next_page_token=token
        )

    @rpc
    def GetOverride(
        self,
        request: ctx_pb.GetOverrideRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> ctx_pb.GetOverrideResponse:
        name = names.parse_override(request.name)
        override = self.overrides.get(identity, name)
        return ctx_pb.GetOverrideResponse(override=cc.override_proto(override))

    @rpc
    def DeleteOverride(
        self,
        request: ctx_pb.DeleteOverrideRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> ctx_pb.DeleteOverrideResponse:
        name = names.parse_override(request.name)

        return self.commands.delete_override(
            identity,
            request_key("DeleteOverride", request, ctx_pb.DeleteOverrideResponse),
            name,
            lambda override: ctx_pb.DeleteOverrideResponse(override=cc.override_proto(override)),
        )
