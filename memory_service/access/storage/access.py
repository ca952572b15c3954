"""The access repositories: the customers of a tenant, and the grants that let a user see a
customer's memories. Both decide what a caller may see, and neither holds memory text.

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import and_, bindparam, or_

from memory_service.kernel.domain.model import Customer, CustomerGrant
from memory_service.kernel.domain.ports import chunks
from memory_service.kernel.storage.models import CustomerGrantRow, CustomerRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK
from memory_service.kernel.storage.scoped import TenantScoped


class SqlGrantRepository(TenantScoped):
    def get(self, user_id: str, customer_id: str) -> CustomerGrant | None:
        row = self._session.execute(
            self._select(CustomerGrantRow).where(
                CustomerGrantRow.user_id == user_id, CustomerGrantRow.customer_id == customer_id
            )
        ).first()
        return None if row is None else grant_of(row)

    def add(self, grant: CustomerGrant) -> None:
        self._insert(
            CustomerGrantRow,
            user_id=grant.user_id,
            customer_id=grant.customer_id,
            granted_by_user_id=grant.granted_by_user_id,
            create_time=grant.create_time,
        )

    def remove(self, user_id: str, customer_id: str) -> bool:
        result = self._session.execute(
            self._delete(CustomerGrantRow).where(
                CustomerGrantRow.user_id == user_id,
                CustomerGrantRow.customer_id == customer_id,
            )
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def granted_among(self, user_id: str, customer_ids: Collection[str]) -> frozenset[str]:
        granted: set[str] = set()
        for ids in chunks(sorted(set(customer_ids)), IN_CLAUSE_CHUNK):
            granted.update(
                self._run(
                    "grants.granted_among",
                    lambda p: p.select(CustomerGrantRow, CustomerGrantRow.customer_id).where(
                        CustomerGrantRow.user_id == bindparam("user"),
                        CustomerGrantRow.customer_id.in_(bindparam("ids", expanding=True)),
                    ),
                    user=user_id,
                    ids=ids,
                ).scalars()
            )
        return frozenset(granted)

    def customers_of(self, user_id: str) -> frozenset[str]:
        return frozenset(
            self._run(
                "grants.customers_of",
                lambda p: p.select(CustomerGrantRow, CustomerGrantRow.customer_id).where(
                    CustomerGrantRow.user_id == bindparam("user")
                ),
                user=user_id,
            ).scalars()
        )

    def list_after(
        self, user_id: str | None, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]:
        statement = self._select(CustomerGrantRow)
        if user_id is not None:
            statement = statement.where(CustomerGrantRow.user_id == user_id)
        if after != ("", ""):
            statement = statement.where(
                or_(
                    CustomerGrantRow.user_id > after[0],
                    and_(
                        CustomerGrantRow.user_id == after[0],
                        CustomerGrantRow.customer_id > after[1],
                    ),
                )
            )
        rows = self._session.execute(
            statement.order_by(CustomerGrantRow.user_id, CustomerGrantRow.customer_id).limit(limit)
        )
        return [grant_of(row) for row in rows]


def grant_of(row: Any) -> CustomerGrant:
    return CustomerGrant(
        row.tenant_id, row.user_id, row.customer_id, row.granted_by_user_id, row.create_time
    )


class SqlCustomerRepository(TenantScoped):
    def upsert(self, customer: Customer, match_name: str) -> Customer:
        existing = self.get(customer.customer_id)
        if existing is None:
            self._insert(
                CustomerRow,
                customer_id=customer.customer_id,
                display_name=customer.display_name,
                match_name=match_name,
                create_time=customer.create_time,
            )
            return customer
        self._session.execute(
            self._update(CustomerRow)
            .where(CustomerRow.customer_id == customer.customer_id)
            .values(display_name=customer.display_name, match_name=match_name)
        )
        return Customer(
            self._tenant_id, customer.customer_id, customer.display_name, existing.create_time
        )

    def get(self, customer_id: str) -> Customer | None:
        row = self._session.execute(
            self._select(CustomerRow).where(CustomerRow.customer_id == customer_id)
        ).first()
        return None if row is None else customer_of(row)

    def by_match_name(self, match_name: str) -> list[Customer]:
        rows = self._session.execute(
            self._select(CustomerRow)
            .where(CustomerRow.match_name == match_name)
            .order_by(CustomerRow.customer_id)
        )
        return [customer_of(row) for row in rows]

    def list_after(
        self, after_id: str, limit: int, among: Collection[str] | None
    ) -> list[Customer]:
        """Customers by id after `after_id`; only those in `among` unless it is None."""
        if among is None:
            rows = self._session.execute(
                self._select(CustomerRow)
                .where(CustomerRow.customer_id > after_id)
                .order_by(CustomerRow.customer_id)
                .limit(limit)
            )
            return [customer_of(row) for row in rows]
        found: list[Customer] = []
        for ids in chunks(sorted(i for i in set(among) if i > after_id), IN_CLAUSE_CHUNK):
            rows = self._session.execute(
                self._select(CustomerRow)
                .where(CustomerRow.customer_id.in_(ids))
                .order_by(CustomerRow.customer_id)
                .limit(limit - len(found))
            )
            found.extend(customer_of(row) for row in rows)
            if len(found) >= limit:
                break
        return found

    def remove(self, customer_id: str) -> bool:
        result = self._session.execute(
            self._delete(CustomerRow).where(CustomerRow.customer_id == customer_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def customer_of(row: Any) -> Customer:
    return Customer(row.tenant_id, row.customer_id, row.display_name, row.create_time)
