"""Customers and customer grants as AccessService answers them."""

from __future__ import annotations

from crmmem.memory.v1 import access_service_pb2 as access_pb

from memory_service.kernel.domain import names
from memory_service.kernel.domain.model import Customer, CustomerGrant
from memory_service.kernel.transport.fields import set_time


def grant_proto(grant: CustomerGrant) -> access_pb.CustomerGrant:
    out = access_pb.CustomerGrant(
        name=names.grant(grant.user_id, grant.customer_id),
        user_id=grant.user_id,
        customer_id=grant.customer_id,
        granted_by_user_id=grant.granted_by_user_id,
    )
    set_time(out.create_time, grant.create_time)
    return out


def customer_proto(customer: Customer) -> access_pb.Customer:
    out = access_pb.Customer(
        name=names.customer(customer.customer_id),
        customer_id=customer.customer_id,
        display_name=customer.display_name,
    )
    set_time(out.create_time, customer.create_time)
    return out
