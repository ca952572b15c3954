"""Who may read, write, confirm and delete which memory (I6, I7).

The customer authorizer stands for the live CRM's permissions. The shipped implementation
reads a grants table; another CRM plugs in behind the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol

from memory_service.kernel.domain.errors import InvalidArgument, NotFound, PermissionDenied, Reason
from memory_service.kernel.domain.model import DOCUMENT_CONNECTOR_ROLE, Identity, Scope, ScopeType
from memory_service.kernel.domain.ports import UnitOfWork, Visibility
from memory_service.kernel.domain.rules import normalize_for_match


class CustomerAuthorizer(Protocol):
    def is_allowed(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> bool: ...

    def allowed_customers(self, uow: UnitOfWork, identity: Identity) -> frozenset[str] | None:
        """The customers the caller may use; None means all of the tenant's."""

    def allowed_among(
        self, uow: UnitOfWork, identity: Identity, customer_ids: Collection[str]
    ) -> frozenset[str]:
        """Which of `customer_ids` the caller may use, asked at once (one query, not one each)."""

    def resolve_name(self, uow: UnitOfWork, identity: Identity, name: str) -> list[str]:
        """Every customer id the spoken name matches, allowed or not (the caller decides)."""


class GrantTableAuthorizer:
    """Tenant admins see every customer; other callers the customers granted to them."""

    def is_allowed(self, uow: UnitOfWork, identity: Identity, customer_id: str) -> bool:
        return identity.is_admin or uow.grants.get(identity.user_id, customer_id) is not None

    def allowed_customers(self, uow: UnitOfWork, identity: Identity) -> frozenset[str] | None:
        return None if identity.is_admin else uow.grants.customers_of(identity.user_id)

    def allowed_among(
        self, uow: UnitOfWork, identity: Identity, customer_ids: Collection[str]
    ) -> frozenset[str]:
        if identity.is_admin:
            return frozenset(customer_ids)
        return uow.grants.granted_among(identity.user_id, customer_ids)

    def resolve_name(self, uow: UnitOfWork, identity: Identity, name: str) -> list[str]:
        return [c.customer_id for c in uow.customers.by_match_name(normalize_for_match(name))]


class AccessPolicy:
    def __init__(self, authorizer: CustomerAuthorizer) -> None:
        self._authorizer = authorizer

    @property
    def authorizer(self) -> CustomerAuthorizer:
        return self._authorizer

    def visibility(self, uow: UnitOfWork, identity: Identity) -> Visibility:
        users = None if identity.is_admin else frozenset({identity.user_id})
        return Visibility(users, self._authorizer.allowed_customers(uow, identity))

    def can_read(self, uow: UnitOfWork, identity: Identity, scope: Scope) -> bool:
        return scope in self.readable(uow, identity, [scope])

    def readable(
        self, uow: UnitOfWork, identity: Identity, scopes: Collection[Scope]
    ) -> frozenset[Scope]:
        """Which of `scopes` the caller may read, the customer grants asked in one query (recall
        checks every candidate: one grant lookup each would cost a round trip per candidate)."""
        customers = self._authorizer.allowed_among(
            uow, identity, {s.id for s in scopes if s.type is ScopeType.CUSTOMER}
        )
        return frozenset(s for s in scopes if _reads(identity, s, customers))

    def readable_within(
        self, identity: Identity, scopes: Collection[Scope], visibility: Visibility
    ) -> frozenset[Scope]:
        """`readable`, given what the caller may see as `visibility` read in this transaction
        (the authorizer's `allowed_customers`): no second question to the authorizer."""
        customers = visibility.customer_ids
        if customers is None:  # every customer of the tenant
            customers = frozenset(s.id for s in scopes if s.type is ScopeType.CUSTOMER)
        return frozenset(s for s in scopes if _reads(identity, s, customers))

    def can_write(self, uow: UnitOfWork, identity: Identity, scope: Scope) -> bool:
        """User memory is written by its subject only, never on their behalf."""
        match scope.type:
            case ScopeType.USER:
                return scope.id == identity.user_id
            case ScopeType.CUSTOMER:
                return self._authorizer.is_allowed(uow, identity, scope.id)
            case ScopeType.ORGANIZATION:
                return identity.is_admin

    def can_delete(self, uow: UnitOfWork, identity: Identity, scope: Scope) -> bool:
        if scope.type is ScopeType.USER:
            return identity.is_admin or scope.id == identity.user_id
        return self.can_write(uow, identity, scope)

    def require_write(self, uow: UnitOfWork, identity: Identity, scope: Scope) -> None:
        if not self.can_write(uow, identity, scope):
            raise PermissionDenied(f"caller may not write {scope.type.value.lower()} memory here")


def require_admin(identity: Identity) -> None:
    if not identity.is_admin:
        raise PermissionDenied(
            "this call needs the admin role",
            reason=Reason.ROLE_REQUIRED,
            metadata={"role": "admin"},
        )


def require_document_connector(identity: Identity) -> None:
    """Document versions come from a connector the tenant runs (or an admin): a report marks
    memories of every user, so no ordinary caller may send one."""
    if not (identity.is_admin or DOCUMENT_CONNECTOR_ROLE in identity.roles):
        raise PermissionDenied(
            f"this call needs the admin or the {DOCUMENT_CONNECTOR_ROLE} role",
            reason=Reason.ROLE_REQUIRED,
            metadata={"role": f"admin|{DOCUMENT_CONNECTOR_ROLE}"},
        )


def owner_for_reading(
    identity: Identity,
    own: bool,
    owners: Callable[[int], list[str]],
    resource: str,
    field: str,
    several: str,
) -> str:
    """Whose per-user resource (a conversation, a task) an id names for this reader: the
    caller's own when `own`; for a tenant admin otherwise the one user who has one of that id
    (`several` says what to do when more do). Anyone else, or an id nobody has, gets NOT_FOUND
    alike."""
    if own:
        return identity.user_id
    if identity.is_admin:
        found = owners(2)
        if len(found) == 1:
            return found[0]
        if found:
            raise InvalidArgument(field, several)
    raise NotFound(resource)


def _reads(identity: Identity, scope: Scope, customers: frozenset[str]) -> bool:
    """The read rule, given the customers among the scopes that the caller may use."""
    match scope.type:
        case ScopeType.USER:
            return identity.is_admin or scope.id == identity.user_id
        case ScopeType.CUSTOMER:
            return scope.id in customers
        case ScopeType.ORGANIZATION:
            return True
