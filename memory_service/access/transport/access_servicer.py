"""The AccessService servicer: the caller, customer grants and the customer register."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import access_service_pb2_grpc as access_grpc

from memory_service.access.app.access import AccessCommands, AccessQueries
from memory_service.access.transport.convert_access import customer_proto, grant_proto
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.transport.fields import subject_id
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ID
from memory_service.kernel.transport.rpc import ServicerBase, rpc


@dataclass(eq=False)
class AccessServicer(ServicerBase, access_grpc.AccessServiceServicer):
    commands: AccessCommands
    queries: AccessQueries

    @rpc
    def GetCaller(
        self, request: access_pb.GetCallerRequest, context: grpc.ServicerContext, identity: Identity
    ) -> access_pb.GetCallerResponse:
        return access_pb.GetCallerResponse(
            tenant_id=identity.tenant_id, user_id=identity.user_id, roles=sorted(identity.roles)
        )

    @rpc
    def GrantCustomerAccess(
        self,
        request: access_pb.GrantCustomerAccessRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GrantCustomerAccessResponse:
        user_id = subject_id(request.user_id, "user_id", required=True)
        customer_id = subject_id(request.customer_id, "customer_id", required=True)

        return self.commands.grant(
            identity,
            request_key("GrantCustomerAccess", request, access_pb.GrantCustomerAccessResponse),
            user_id,
            customer_id,
            lambda grant: access_pb.GrantCustomerAccessResponse(grant=grant_proto(grant)),
        )

    @rpc
    def RevokeCustomerAccess(
        self,
        request: access_pb.RevokeCustomerAccessRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.RevokeCustomerAccessResponse:
        user_id, customer_id = names.parse_grant(request.name)

        return self.commands.revoke(
            identity,
            request_key("RevokeCustomerAccess", request, access_pb.RevokeCustomerAccessResponse),
            user_id,
            customer_id,
            lambda revoked: access_pb.RevokeCustomerAccessResponse(revoked=revoked),
        )

    @rpc
    def RegisterCustomer(
        self,
        request: access_pb.RegisterCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.RegisterCustomerResponse:
        customer_id = subject_id(
            request.customer.customer_id, "customer.customer_id", required=True
        )
        display_name = request.customer.display_name.strip()
        if not display_name:
            raise InvalidArgument("customer.display_name", "is required")

        return self.commands.register_customer(
            identity,
            request_key("RegisterCustomer", request, access_pb.RegisterCustomerResponse),
            customer_id,
            display_name,
            lambda customer: access_pb.RegisterCustomerResponse(customer=customer_proto(customer)),
        )

    @rpc
    def ListCustomerGrants(
        self,
        request: access_pb.ListCustomerGrantsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.ListCustomerGrantsResponse:
        user_id = subject_id(request.user_id, "user_id", required=False)
        page = self.pages.page(request, identity, [ID, ID])
        cursor = (page.after[0], page.after[1]) if page.after else ("", "")
        grants = self.queries.grants(identity, user_id, cursor, page.fetch)
        shown, token = page.respond(grants, lambda g: (g.user_id, g.customer_id))
        return access_pb.ListCustomerGrantsResponse(
            grants=[grant_proto(g) for g in shown], next_page_token=token
        )

    @rpc
    def GetCustomerGrant(
        self,
        request: access_pb.GetCustomerGrantRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GetCustomerGrantResponse:
        user_id, customer_id = names.parse_grant(request.name)
        grant = self.queries.grant(identity, user_id, customer_id)
        return access_pb.GetCustomerGrantResponse(grant=grant_proto(grant))

    @rpc
    def GetCustomer(
        self,
        request: access_pb.GetCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.GetCustomerResponse:
        customer_id = names.parse_customer(request.name)
        customer = self.queries.customer(identity, customer_id)
        return access_pb.GetCustomerResponse(customer=customer_proto(customer))

    @rpc
    def ListCustomers(
        self,
        request: access_pb.ListCustomersRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.ListCustomersResponse:
        page = self.pages.page(request, identity, [ID])
        after = page.cursor("")
        customers = self.queries.customers(identity, after, page.fetch)
        shown, token = page.respond(customers, lambda c: (c.customer_id,))
        return access_pb.ListCustomersResponse(
            customers=[customer_proto(c) for c in shown], next_page_token=token
        )

    @rpc
    def DeleteCustomer(
        self,
        request: access_pb.DeleteCustomerRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> access_pb.DeleteCustomerResponse:
        customer_id = names.parse_customer(request.name)

        return self.commands.delete_customer(
            identity,
            request_key("DeleteCustomer", request, access_pb.DeleteCustomerResponse),
            customer_id,
            lambda customer: access_pb.DeleteCustomerResponse(customer=customer_proto(customer)),
        )
