"""Access use cases (the customer registry and its grants), one entry each. A write: the
unit of work under the request id, the domain's decision, the answer stored, commit. A read:
one read unit of work, the domain's answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memory_service.access.domain.access import AccessUseCases
from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Customer, CustomerGrant, Identity, utcnow
from memory_service.kernel.domain.ports import UnitOfWork

A = TypeVar("A")


@dataclass(eq=False)
class AccessCommands:
    _tx: Transactions
    _access: AccessUseCases

    def grant(
        self,
        identity: Identity,
        key: RequestKey[A],
        user_id: str,
        customer_id: str,
        present: Callable[[CustomerGrant], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            grant = self._access.grant(uow, identity, user_id, customer_id, utcnow())
            return Answer(present(grant))

        return self._tx.write(identity, key, work)

    def revoke(
        self,
        identity: Identity,
        key: RequestKey[A],
        user_id: str,
        customer_id: str,
        present: Callable[[bool], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._access.revoke(uow, identity, user_id, customer_id)))

        return self._tx.write(identity, key, work)

    def register_customer(
        self,
        identity: Identity,
        key: RequestKey[A],
        customer_id: str,
        display_name: str,
        present: Callable[[Customer], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            customer = self._access.register_customer(
                uow, identity, customer_id, display_name, utcnow()
            )
            return Answer(present(customer))

        return self._tx.write(identity, key, work)

    def delete_customer(
        self,
        identity: Identity,
        key: RequestKey[A],
        customer_id: str,
        present: Callable[[Customer], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._access.delete_customer(uow, identity, customer_id)))

        return self._tx.write(identity, key, work)


@dataclass(eq=False)
class AccessQueries:
    """Reading grants and customers; who may see which is `domain.access.AccessUseCases`."""

    _tx: Transactions
    _access: AccessUseCases

    def grants(
        self, identity: Identity, user_id: str, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]:
        """`user_id` empty: the caller's own grants (admins: every user's)."""
        return self._tx.read(
            identity, lambda uow: self._access.list(uow, identity, user_id, after, limit)
        )

    def grant(self, identity: Identity, user_id: str, customer_id: str) -> CustomerGrant:
        return self._tx.read(
            identity, lambda uow: self._access.get_grant(uow, identity, user_id, customer_id)
        )

    def customer(self, identity: Identity, customer_id: str) -> Customer:
        return self._tx.read(
            identity, lambda uow: self._access.get_customer(uow, identity, customer_id)
        )

    def customers(self, identity: Identity, after_id: str, limit: int) -> list[Customer]:
        return self._tx.read(
            identity, lambda uow: self._access.list_customers(uow, identity, after_id, limit)
        )
