"""Customers and grants: an admin registers the customers of a tenant and grants users the use
of each; a caller reads only their own grants and the customers they may use (admins: all).
Which memory a grant opens is kernel/domain/authorization.py."""

from __future__ import annotations

from datetime import datetime

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import AccessPolicy, require_admin
from memory_service.kernel.domain.errors import NotFound
from memory_service.kernel.domain.model import Customer, CustomerGrant, Identity
from memory_service.kernel.domain.ports import UnitOfWork


class AccessUseCases:
    def __init__(self, policy: AccessPolicy) -> None:
        self._policy = policy

    def get_customer(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> Customer:
        """A registered customer the caller may use (admins: any); NOT_FOUND otherwise,
        exactly as for a customer that is not registered."""
        customer = uow.customers.get(customer_id)
        if customer is None or not self._policy.authorizer.is_allowed(uow, identity, customer_id):
            raise NotFound(names.customer(customer_id))
        return customer

    def list_customers(
        self, uow: UnitOfWork, identity: Identity, after_id: str, limit: int
    ) -> list[Customer]:
        among = self._policy.authorizer.allowed_customers(uow, identity)
        return uow.customers.list_after(after_id, limit, among)

    def delete_customer(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> Customer:
        """Removes the registration (the display name stops resolving); grants and the
        customer's memory stay. Admin only."""
        require_admin(identity)
        customer = self.get_customer(uow, identity, customer_id)
        if not uow.customers.remove(customer_id):
            raise NotFound(names.customer(customer_id))
        return customer

    def get_grant(
        self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str
    ) -> CustomerGrant:
        """A grant of the caller's own (admins: any); NOT_FOUND otherwise, as for a missing one."""
        grant = uow.grants.get(user_id, customer_id)
        if grant is None or not (identity.is_admin or user_id == identity.user_id):
            raise NotFound(names.grant(user_id, customer_id))
        return grant

    def grant(
        self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str, now: datetime
    ) -> CustomerGrant:
        require_admin(identity)
        existing = uow.grants.get(user_id, customer_id)
        if existing is not None:
            return existing
        grant = CustomerGrant(uow.tenant_id, user_id, customer_id, identity.user_id, now)
        uow.grants.add(grant)
        return grant

    def register_customer(
        self,
        uow: UnitOfWork,
        identity: Identity,
        customer_id: str,
        display_name: str,
        now: datetime,
    ) -> Customer:
        require_admin(identity)
        match_name = rules.customer_match_name(display_name, "customer.display_name")
        customer = Customer(uow.tenant_id, customer_id, display_name, now)
        return uow.customers.upsert(customer, match_name)

    def revoke(self, uow: UnitOfWork, identity: Identity, user_id: str, customer_id: str) -> bool:
        require_admin(identity)
        return uow.grants.remove(user_id, customer_id)

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        user_id: str,
        after: tuple[str, str],
        limit: int,
    ) -> list[CustomerGrant]:
        if user_id and user_id != identity.user_id:
            require_admin(identity)
        if not user_id and not identity.is_admin:
            user_id = identity.user_id
        return uow.grants.list_after(user_id or None, after, limit)
