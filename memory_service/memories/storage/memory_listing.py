"""Listing memories (`SqlMemoryRepository.list_after`, through which a context reads every
visible memory): which filters a listing has decides its statement, and that statement is
prepared once for each combination (`MemoryListing`), so the filters are a value of their own
rather than a tuple of flags read by position."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, false, select, union_all

from memory_service.kernel.domain.model import ScopeType
from memory_service.kernel.domain.ports import MemoryQuery
from memory_service.kernel.storage.models import MemoryRow, RevisionRow
from memory_service.kernel.storage.scoped import Prepare
from memory_service.memories.storage.memory_rows import (
    MEMORY_COLUMNS,
    REVISION_COLUMNS,
    visible_among,
)

# A caller's memories are read subject by subject (an index range each) up to this many granted
# customers, else by a walk of the tenant in id order.
SUBJECT_RANGES_MAX_CUSTOMERS = 50


@dataclass(frozen=True, slots=True)
class MemoryListing:
    """Which filters a listing has, not their values (those are bound parameters,
    `listing_parameters`): it decides the statement's form, and is the key its prepared
    statement is kept under (`TenantScoped._run`)."""

    by_subject: bool  # the caller's own subjects, an index range each; else the tenant by id
    user_range: bool  # by subject: the caller's users are read (a range is read only when
    customer_range: bool  # it has ids: SQLite walks the whole index for an empty list)
    users_listed: bool  # the visibility names its users (else every user's memories)
    customers_listed: bool  # the visibility names its customers (else every customer's)
    organization: bool  # the organization's memories are visible
    after: bool  # a page after an id
    scope_type: bool
    scope_id: bool  # only with a scope type
    key: bool
    kind: bool
    show_deleted: bool  # deletion markers are listed too
    changed_since: bool

    @classmethod
    def of(cls, query: MemoryQuery, after_id: str) -> MemoryListing:
        visibility = query.visibility
        # A caller of many customers (or every one) sees much of the tenant: walking it in id
        # order stops sooner than reading and sorting every memory of each subject.
        by_subject = (
            visibility.user_ids is not None
            and visibility.customer_ids is not None
            and len(visibility.customer_ids) <= SUBJECT_RANGES_MAX_CUSTOMERS
        )
        return cls(
            by_subject=by_subject,
            user_range=by_subject and bool(visibility.user_ids),
            customer_range=by_subject and bool(visibility.customer_ids),
            users_listed=visibility.user_ids is not None,
            customers_listed=visibility.customer_ids is not None,
            organization=visibility.organization,
            after=bool(after_id),
            scope_type=query.scope_type is not None,
            scope_id=query.scope_type is not None and bool(query.scope_id),
            key=bool(query.key),
            kind=query.kind is not None,
            show_deleted=query.show_deleted,
            changed_since=query.changed_since is not None,
        )

    def statement(self, p: Prepare) -> Any:
        """The page of memories and their revisions in one read, ordered by memory id and
        revision number, in the columns `memory_rows.memories_with_revisions` decodes."""
        page = self._subject_page(p) if self.by_subject else self._tenant_page(p)
        # Outer join: a deletion marker listed with show_deleted may have no revision left.
        return (
            select(*page.c, *REVISION_COLUMNS)
            .select_from(
                page.outerjoin(
                    RevisionRow,
                    and_(RevisionRow.memory_id == page.c.id, p.mine(RevisionRow)),
                )
            )
            .order_by(page.c.id, RevisionRow.number)
        )

    def _filtered(self, statement: Select[Any]) -> Select[Any]:
        """The query's own filters, the same on every way of reading."""
        if self.after:
            statement = statement.where(MemoryRow.id > bindparam("after_id"))
        if self.scope_type:
            statement = statement.where(MemoryRow.scope_type == bindparam("scope_type"))
        if self.scope_id:
            statement = statement.where(MemoryRow.scope_id == bindparam("scope_id"))
        if self.key:
            statement = statement.where(MemoryRow.key == bindparam("key"))
        if self.kind:
            statement = statement.where(MemoryRow.kind == bindparam("kind"))
        if not self.show_deleted:
            statement = statement.where(MemoryRow.live.is_(True))
        if self.changed_since:
            statement = statement.where(MemoryRow.update_time >= bindparam("changed_since"))
        return statement

    def _subject_page(self, p: Prepare) -> Any:
        """A caller's own subjects: one range per kind of scope of the index by subject (tenant,
        scope type, scope id, live, id), merged in id order, so the read costs what the caller
        sees, not the tenant's size."""

        def first(arm: list[ColumnElement[bool]]) -> Select[Any]:
            """The arm's own first page: each arm stops early on its own plan (PostgreSQL
            merges no ordered arms; a caller of many customers is walked in id order), and the
            page is among their union."""
            statement = self._filtered(p.select(MemoryRow, *MEMORY_COLUMNS).where(*arm))
            own = statement.order_by(MemoryRow.id).limit(bindparam("limit")).subquery()
            return select(*own.c)

        arms = self._arms() or [[false()]]  # sees nothing: an arm that matches no row keeps
        merged = union_all(*(first(arm) for arm in arms)).subquery()  # one statement
        return select(*merged.c).order_by(merged.c.id).limit(bindparam("limit")).subquery()

    def _arms(self) -> list[list[ColumnElement[bool]]]:
        """The conditions of each subject range the caller sees."""
        arms: list[list[ColumnElement[bool]]] = []
        if self.user_range:
            arms.append(
                [
                    MemoryRow.scope_type == ScopeType.USER.value,
                    MemoryRow.scope_id.in_(bindparam("user_ids", expanding=True)),
                ]
            )
        if self.customer_range:
            arms.append(
                [
                    MemoryRow.scope_type == ScopeType.CUSTOMER.value,
                    MemoryRow.scope_id.in_(bindparam("customer_ids", expanding=True)),
                ]
            )
        if self.organization:  # its id is always empty: every write path gives it that id
            arms.append(
                [MemoryRow.scope_type == ScopeType.ORGANIZATION.value, MemoryRow.scope_id == ""]
            )
        return arms

    def _tenant_page(self, p: Prepare) -> Any:
        """An administrator, or a caller of many customers: the tenant in id order."""
        statement = p.select(MemoryRow, *MEMORY_COLUMNS).where(
            visible_among(
                bindparam("user_ids", expanding=True) if self.users_listed else None,
                bindparam("customer_ids", expanding=True) if self.customers_listed else None,
                self.organization,
            )
        )
        return self._filtered(statement).order_by(MemoryRow.id).limit(bindparam("limit")).subquery()


def listing_parameters(query: MemoryQuery, after_id: str, limit: int) -> dict[str, Any]:
    """The values of a listing's filters, bound into its prepared statement (`MemoryListing`);
    those a form does not use are ignored."""
    visibility = query.visibility
    return {
        "user_ids": sorted(visibility.user_ids or ()),
        "customer_ids": sorted(visibility.customer_ids or ()),
        "after_id": after_id,
        "scope_type": query.scope_type.value if query.scope_type is not None else None,
        "scope_id": query.scope_id,
        "key": query.key,
        "kind": query.kind.value if query.kind is not None else None,
        "changed_since": query.changed_since,
        "limit": limit,
    }
