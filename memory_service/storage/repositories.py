"""Repositories bound to one tenant. Every statement starts from a `TenantScoped` helper
(`storage/scoped.py`), so none can forget the tenant (I7)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    bindparam,
    false,
    func,
    or_,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memory_service.domain.errors import WriteConflict
from memory_service.domain.model import (
    Confirmation,
    Conversation,
    Customer,
    CustomerGrant,
    EvidenceRef,
    EvidenceType,
    Memory,
    MemoryKind,
    Message,
    Override,
    ParentType,
    Provenance,
    ProvenanceMethod,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
    TurnStatus,
    utcnow,
)
from memory_service.domain.ports import (
    EMPTY_AHEAD,
    ON_ITS_WAY,
    MemoryQuery,
    OutboxItem,
    OutboxKind,
    StoredResponse,
    Visibility,
    chunks,
)
from memory_service.domain.rules import lineage_ref_hash, scoped_key_hash
from memory_service.storage.models import (
    ConversationRow,
    CustomerGrantRow,
    CustomerRow,
    IdempotencyRow,
    IdempotencyShownRow,
    MemoryRow,
    MemoryUsageRow,
    MessageRow,
    OutboxRow,
    OverrideRow,
    RevisionRow,
)
from memory_service.storage.scoped import AllTenants, Prepare, TenantScoped

IN_CLAUSE_CHUNK = 500
# A caller's memories are read subject by subject (an index range each) up to this many granted
# customers, else by a walk of the tenant in id order (`SqlMemoryRepository.list_after`).
SUBJECT_RANGES_MAX_CUSTOMERS = 50
# Stored values to their enum members: a dict lookup where calling the enum costs a few times
# more, for every row of a context.
_STATUSES = {member.value: member for member in RevisionStatus}
_SPEAKERS = {member.value: member for member in Speaker}
_METHODS = {member.value: member for member in ProvenanceMethod}
_EVIDENCE_TYPES = {member.value: member for member in EvidenceType}
_SCOPE_TYPES = {member.value: member for member in ScopeType}
_KINDS = {member.value: member for member in MemoryKind}
_TURN_STATUSES = {member.value: member for member in TurnStatus}
_PARENT_TYPES = {member.value: member for member in ParentType}
# Always true, and it lets a lookup by evidence_ref use the (tenant_id, evidence_type,
# evidence_ref) index with one seek per type; without it SQLite reads every revision of the
# tenant (a withdrawn-lineage check on every write).
_ANY_EVIDENCE_TYPE = RevisionRow.evidence_type.in_([member.value for member in EvidenceType])


class SqlMemoryRepository(TenantScoped):
    def __init__(self, session: Session, tenant_id: str) -> None:
        super().__init__(session, tenant_id)
        # Inside `preloaded`: what find_live and deletions answer without a statement.
        self._preloaded_live: dict[tuple[Scope, str, str], Memory | None] | None = None
        self._deleted: dict[str, datetime | None] = {}
        self._withdrawn: dict[str, bool] = {}
        # Inside `preloaded`: rows of added memories and revisions, inserted together at its end.
        self._deferred: dict[type[Any], list[dict[str, Any]]] | None = None

    @contextmanager
    def preloaded(
        self, keys: Collection[tuple[Scope, str, str]], lineages: Collection[str] = ()
    ) -> Iterator[None]:
        """Many creates in one transaction: the live memory and the last deletion of every
        scoped key, and whether each evidence lineage was withdrawn, are read up front, and
        the rows of the memories added are flushed once at the end (a lost unique race is then
        a WriteConflict, as one by one). Only `add` may change memories meanwhile: it keeps
        the preloaded answers current."""
        wanted = set(keys)
        live: dict[tuple[Scope, str, str], Memory | None] = dict.fromkeys(wanted)
        hashes = {
            scoped_key_hash(scope.type.value, scope.id, key, context): (scope, key, context)
            for scope, key, context in wanted
        }
        deleted: dict[str, datetime | None] = dict.fromkeys(hashes)
        ordered = list(wanted)
        for start in range(0, len(ordered), IN_CLAUSE_CHUNK):
            group = ordered[start : start + IN_CLAUSE_CHUNK]
            rows = self._run(
                "memories.preload_live",
                lambda p: p.select(MemoryRow).where(
                    MemoryRow.live.is_(True),
                    MemoryRow.scope_type.in_(bindparam("scope_types", expanding=True)),
                    MemoryRow.scope_id.in_(bindparam("scope_ids", expanding=True)),
                    MemoryRow.key.in_(bindparam("keys", expanding=True)),
                ),
                scope_types=sorted({scope.type.value for scope, _, _ in group}),
                scope_ids=sorted({scope.id for scope, _, _ in group}),
                keys=sorted({key for _, key, _ in group}),
            ).all()
            for memory in self._with_revisions(list(rows)):
                held = (memory.scope, memory.key, memory.key_context)
                if held in live:
                    live[held] = memory
        for group_hashes in chunks(sorted(hashes), IN_CLAUSE_CHUNK):
            for row in self._run(
                "memories.preload_deleted",
                lambda p: (
                    p.select(
                        MemoryRow,
                        MemoryRow.key_hash,
                        func.max(MemoryRow.delete_time).label("deleted_at"),
                    )
                    .where(
                        MemoryRow.key_hash.in_(bindparam("hashes", expanding=True)),
                        MemoryRow.live.is_(None),
                    )
                    .group_by(MemoryRow.key_hash)
                ),
                hashes=group_hashes,
            ):
                at = row.deleted_at
                deleted[row.key_hash] = None if at is None else at.replace(tzinfo=UTC)
        withdrawn = {lineage_ref_hash(lineage): lineage for lineage in set(lineages)}
        lineage_known = dict.fromkeys(withdrawn.values(), False)
        for group_hashes in chunks(sorted(withdrawn), IN_CLAUSE_CHUNK):
            for evidence_ref in self._run(
                "memories.preload_withdrawn",
                lambda p: (
                    p.select(RevisionRow, RevisionRow.evidence_ref)
                    .where(
                        _ANY_EVIDENCE_TYPE,
                        RevisionRow.evidence_ref.in_(bindparam("refs", expanding=True)),
                        RevisionRow.status == RevisionStatus.DELETED.value,
                    )
                    .distinct()
                ),
                refs=group_hashes,
            ).scalars():
                lineage_known[withdrawn[evidence_ref]] = True
        self._preloaded_live, self._deleted, self._withdrawn = live, deleted, lineage_known
        self._deferred = {MemoryRow: [], RevisionRow: []}
        try:
            yield
            try:
                for model, pending in self._deferred.items():  # memories before revisions
                    self._insert_many(model, pending)
            except IntegrityError as error:
                raise WriteConflict(str(error.orig)) from error
        finally:
            self._preloaded_live, self._deleted, self._withdrawn = None, {}, {}
            self._deferred = None

    def get(self, memory_id: str) -> Memory | None:
        """The memory and its revisions in one read (every correction and GetMemory starts
        here): a second statement cost more than the rows it read."""
        rows = self._run(
            "memories.get",
            lambda p: (
                p.select(MemoryRow, *_MEMORY_COLUMNS, *_REVISION_COLUMNS)
                .select_from(
                    MemoryRow.__table__.outerjoin(
                        RevisionRow,
                        and_(RevisionRow.memory_id == MemoryRow.id, p.mine(RevisionRow)),
                    )
                )
                .where(MemoryRow.id == bindparam("id"))
                .order_by(RevisionRow.number)
            ),
            id=memory_id,
        ).all()
        found = _memories_with_revisions(rows)
        return found[0] if found else None

    def get_many(self, memory_ids: list[str]) -> dict[str, Memory]:
        """The memories and their revisions, one joined read per chunk of ids (as `get`):
        recall validates every candidate through here, and a second statement for the
        revisions cost it more than the rows it read."""
        found: dict[str, Memory] = {}
        for ids in chunks(sorted(set(memory_ids)), IN_CLAUSE_CHUNK):
            rows = self._run(
                "memories.get_many",
                lambda p: (
                    p.select(MemoryRow, *_MEMORY_COLUMNS, *_REVISION_COLUMNS)
                    .select_from(
                        MemoryRow.__table__.outerjoin(
                            RevisionRow,
                            and_(RevisionRow.memory_id == MemoryRow.id, p.mine(RevisionRow)),
                        )
                    )
                    .where(MemoryRow.id.in_(bindparam("ids", expanding=True)))
                    .order_by(MemoryRow.id, RevisionRow.number)
                ),
                ids=ids,
            )
            found.update((memory.id, memory) for memory in _memories_with_revisions(rows))
        return found

    def count_live(self) -> int:
        count: int = self._run(
            "memories.count_live",
            lambda p: p.select(MemoryRow, func.count(MemoryRow.id)).where(MemoryRow.live.is_(True)),
        ).scalar_one()
        return count

    def count_searchable(self, instant: datetime) -> int:
        """`rules.applicable_revision` as SQL: a live memory with an active revision whose
        validity and supersession include `instant` (the storage congruence test holds the
        two to the same answers)."""

        def build(p: Prepare) -> Any:
            at: Any = bindparam("instant")
            # uncorrelated, so the subquery is scoped on its own (storage/scoped.py)
            applicable = p.select(RevisionRow, RevisionRow.memory_id).where(
                RevisionRow.status == RevisionStatus.ACTIVE.value,
                or_(RevisionRow.valid_from.is_(None), RevisionRow.valid_from <= at),
                or_(RevisionRow.valid_until.is_(None), RevisionRow.valid_until > at),
                or_(RevisionRow.superseded_from.is_(None), RevisionRow.superseded_from > at),
            )
            return p.select(MemoryRow, func.count(MemoryRow.id)).where(
                MemoryRow.live.is_(True), MemoryRow.id.in_(applicable)
            )

        count: int = self._run("memories.count_searchable", build, instant=instant).scalar_one()
        return count

    def live_versions(self) -> dict[str, int]:
        rows = self._session.execute(
            self._select(MemoryRow, MemoryRow.id, MemoryRow.version)
            .where(MemoryRow.live.is_(True))
            .order_by(MemoryRow.id)
        )
        return {memory_id: version for memory_id, version in rows}

    def find_live(self, scope: Scope, key: str, key_context: str) -> Memory | None:
        if self._preloaded_live is not None and (scope, key, key_context) in self._preloaded_live:
            return self._preloaded_live[(scope, key, key_context)]
        row = self._session.execute(
            self._select(MemoryRow).where(
                MemoryRow.scope_type == scope.type.value,
                MemoryRow.scope_id == scope.id,
                MemoryRow.key == key,
                MemoryRow.key_context == key_context,
                MemoryRow.live.is_(True),
            )
        ).first()
        return None if row is None else self._with_revisions([row])[0]

    def deletions(
        self, scope: Scope, key: str, key_context: str, lineage: str
    ) -> tuple[datetime | None, bool]:
        """When the scoped key was last deleted, and whether `lineage` underlies a deleted
        revision ('' names none), in one statement (every create, correction and
        confirmation asks both)."""
        key_hash = scoped_key_hash(scope.type.value, scope.id, key, key_context)
        if key_hash in self._deleted and (not lineage or lineage in self._withdrawn):
            return self._deleted[key_hash], bool(lineage) and self._withdrawn[lineage]
        found: Sequence[Any] = self._run(
            "memories.deletions",
            lambda p: p.row(
                p.select(MemoryRow, func.max(MemoryRow.delete_time))
                .where(MemoryRow.key_hash == bindparam("key_hash"), MemoryRow.live.is_(None))
                .scalar_subquery(),
                p.select(RevisionRow, RevisionRow.memory_id)
                .where(
                    _ANY_EVIDENCE_TYPE,
                    RevisionRow.evidence_ref == bindparam("ref"),
                    RevisionRow.status == RevisionStatus.DELETED.value,
                )
                .exists(),
            ),
            key_hash=key_hash,
            ref=lineage_ref_hash(lineage) if lineage else "",
        ).one()
        deleted: datetime | None = found[0]
        withdrawn = bool(lineage) and bool(found[1])
        return None if deleted is None else deleted.replace(tzinfo=UTC), withdrawn

    def deleted_lineage(self, evidence_ref: str) -> bool:
        if evidence_ref in self._withdrawn:
            return self._withdrawn[evidence_ref]
        row = self._run(
            "memories.deleted_lineage",
            lambda p: (
                p.select(RevisionRow, RevisionRow.memory_id)
                .where(
                    _ANY_EVIDENCE_TYPE,
                    RevisionRow.evidence_ref == bindparam("ref"),
                    RevisionRow.status == RevisionStatus.DELETED.value,
                )
                .limit(1)
            ),
            ref=lineage_ref_hash(evidence_ref),
        ).first()
        return row is not None

    def add(self, memory: Memory) -> None:
        if self._preloaded_live is not None and not memory.deleted:
            self._preloaded_live[(memory.scope, memory.key, memory.key_context)] = memory
        self._add_row(
            MemoryRow,
            {
                "id": memory.id,
                "scope_type": memory.scope.type.value,
                "scope_id": memory.scope.id,
                "key": memory.key,
                "key_context": memory.key_context,
                "kind": memory.kind.value,
                "version": memory.version,
                "live": None if memory.deleted else True,
                "create_time": memory.create_time,
                "update_time": memory.update_time,
                "delete_time": memory.delete_time,
                "key_hash": memory.key_hash,
            },
        )
        for revision in memory.revisions:
            self.add_revision(revision)

    def add_revision(self, revision: Revision) -> None:
        self._add_row(RevisionRow, _revision_columns(revision))

    def _add_row(self, model: type[MemoryRow] | type[RevisionRow], row: dict[str, Any]) -> None:
        if self._deferred is not None:
            self._deferred[model].append(row)  # inserted with the others when `preloaded` ends
        else:
            self._insert(model, **row)

    def update_revision(self, revision: Revision) -> None:
        """Every column but the source-change mark, which only `mark_source_changed` writes: a
        correction racing a document report must not erase the mark, nor the report the
        correction's supersession."""
        columns = _revision_columns(revision)
        del columns["source_change_time"], columns["memory_id"], columns["number"]
        self._run(
            "memories.update_revision",
            lambda p: (
                p.update(RevisionRow)
                .where(
                    RevisionRow.memory_id == bindparam("at_memory_id"),
                    RevisionRow.number == bindparam("at_number"),
                )
                .values({name: bindparam(name) for name in columns})
            ),
            at_memory_id=revision.memory_id,
            at_number=revision.number,
            **columns,
        )

    def citing_document(self, uri: str) -> list[Memory]:
        """Live memories with a revision whose evidence is this document, oldest first."""
        cited = (
            self._select(RevisionRow, RevisionRow.memory_id)
            .where(
                RevisionRow.evidence_type == EvidenceType.DOCUMENT.value,
                RevisionRow.evidence_ref == uri,
            )
            .distinct()
        )
        rows = list(
            self._session.execute(
                self._select(MemoryRow)
                .where(MemoryRow.id.in_(cited), MemoryRow.live.is_(True))
                .order_by(MemoryRow.id)
            )
        )
        return self._with_revisions(rows)

    def claim_version(self, memory_id: str, expected_version: int, now: datetime) -> bool:
        result = self._run(
            "memories.claim_version",
            lambda p: (
                p.update(MemoryRow)
                .where(
                    MemoryRow.id == bindparam("at_id"), MemoryRow.version == bindparam("expected")
                )
                .values(version=bindparam("version"), update_time=bindparam("update_time"))
            ),
            at_id=memory_id,
            expected=expected_version,
            version=expected_version + 1,
            update_time=now,
        )
        return bool(result.rowcount == 1)

    def mark_deleted(self, memory_id: str, now: datetime, key_hash: str) -> None:
        """The row stays as a marker: the key is replaced by its hash."""
        self._session.execute(
            self._update(MemoryRow)
            .where(MemoryRow.id == memory_id)
            .values(
                live=None,
                delete_time=now,
                update_time=now,
                key="deleted",
                key_context="",
                key_hash=key_hash,
            )
        )

    def list_after(self, query: MemoryQuery, after_id: str, limit: int) -> list[Memory]:
        """One prepared statement per combination of the filters given (its shape): the page of
        memories and their revisions in one read, decoded by position (a context reads every
        visible memory through here)."""
        visibility = query.visibility
        # A caller of many customers (or every one) sees much of the tenant: walking it in id
        # order stops sooner than reading and sorting every memory of each subject.
        by_subject = (
            visibility.user_ids is not None
            and visibility.customer_ids is not None
            and len(visibility.customer_ids) <= SUBJECT_RANGES_MAX_CUSTOMERS
        )
        shape = (
            "memories.list_after",
            by_subject,
            by_subject and bool(visibility.user_ids),  # a subject range is read only when
            by_subject and bool(visibility.customer_ids),  # it has ids (SQLite walks for none)
            visibility.user_ids is not None,
            visibility.customer_ids is not None,
            visibility.organization,
            bool(after_id),
            query.scope_type is not None,
            query.scope_type is not None and bool(query.scope_id),
            bool(query.key),
            query.kind is not None,
            query.show_deleted,
            query.changed_since is not None,
        )

        def build(p: Prepare) -> Any:
            _, _, some_users, some_customers, users, customers, organization = shape[:7]
            after, scope_type, scope_id, key, kind, show_deleted, changed_since = shape[7:]

            def filtered(statement: Select[Any]) -> Select[Any]:
                if after:
                    statement = statement.where(MemoryRow.id > bindparam("after_id"))
                if scope_type:
                    statement = statement.where(MemoryRow.scope_type == bindparam("scope_type"))
                if scope_id:
                    statement = statement.where(MemoryRow.scope_id == bindparam("scope_id"))
                if key:
                    statement = statement.where(MemoryRow.key == bindparam("key"))
                if kind:
                    statement = statement.where(MemoryRow.kind == bindparam("kind"))
                if not show_deleted:
                    statement = statement.where(MemoryRow.live.is_(True))
                if changed_since:
                    statement = statement.where(MemoryRow.update_time >= bindparam("changed_since"))
                return statement

            if by_subject:
                # A caller's own subjects: one index range per kind of scope, merged in id
                # order (0018), so the read costs what the caller sees, not the tenant's size.
                arms: list[list[ColumnElement[bool]]] = []
                if some_users:
                    arms.append(
                        [
                            MemoryRow.scope_type == ScopeType.USER.value,
                            MemoryRow.scope_id.in_(bindparam("user_ids", expanding=True)),
                        ]
                    )
                if some_customers:
                    arms.append(
                        [
                            MemoryRow.scope_type == ScopeType.CUSTOMER.value,
                            MemoryRow.scope_id.in_(bindparam("customer_ids", expanding=True)),
                        ]
                    )
                if organization:  # its id is always empty (transport, restore, 0019)
                    arms.append(
                        [
                            MemoryRow.scope_type == ScopeType.ORGANIZATION.value,
                            MemoryRow.scope_id == "",
                        ]
                    )

                def first(arm: list[ColumnElement[bool]]) -> Select[Any]:
                    """The arm's own first page: each arm stops early on its own plan
                    (PostgreSQL merges no ordered arms; a caller of many customers is walked
                    in id order), and the page is among their union."""
                    statement = filtered(p.select(MemoryRow, *_MEMORY_COLUMNS).where(*arm))
                    own = statement.order_by(MemoryRow.id).limit(bindparam("limit")).subquery()
                    return select(*own.c)

                if not arms:  # sees nothing: an arm that matches no row keeps one statement
                    arms.append([false()])
                merged = union_all(*(first(arm) for arm in arms)).subquery()
                page = select(*merged.c).order_by(merged.c.id).limit(bindparam("limit")).subquery()
            else:  # an administrator, or a caller of many customers: the tenant in id order
                statement = p.select(MemoryRow, *_MEMORY_COLUMNS).where(
                    _visible_among(
                        bindparam("user_ids", expanding=True) if users else None,
                        bindparam("customer_ids", expanding=True) if customers else None,
                        organization,
                    )
                )
                page = (
                    filtered(statement).order_by(MemoryRow.id).limit(bindparam("limit")).subquery()
                )
            # Outer join: a deletion marker listed with show_deleted may have no revision left.
            return (
                select(*page.c, *_REVISION_COLUMNS)
                .select_from(
                    page.outerjoin(
                        RevisionRow,
                        and_(RevisionRow.memory_id == page.c.id, p.mine(RevisionRow)),
                    )
                )
                .order_by(page.c.id, RevisionRow.number)
            )

        rows = self._run(
            shape,
            build,
            user_ids=sorted(visibility.user_ids or ()),
            customer_ids=sorted(visibility.customer_ids or ()),
            after_id=after_id,
            scope_type=query.scope_type.value if query.scope_type is not None else None,
            scope_id=query.scope_id,
            key=query.key,
            kind=query.kind.value if query.kind is not None else None,
            changed_since=query.changed_since,
            limit=limit,
        ).all()  # one fetch: row by row, the result layer cost more than the rows
        return _memories_with_revisions(rows)

    def _with_revisions(self, rows: Sequence[Any]) -> list[Memory]:
        by_memory: dict[str, list[Revision]] = defaultdict(list)
        for ids in chunks([row.id for row in rows], IN_CLAUSE_CHUNK):
            revisions = self._run(
                "memories.revisions",
                lambda p: (
                    p.select(RevisionRow, RevisionRow.memory_id, *_REVISION_COLUMNS)
                    .where(RevisionRow.memory_id.in_(bindparam("ids", expanding=True)))
                    .order_by(RevisionRow.memory_id, RevisionRow.number)
                ),
                ids=ids,
            ).all()
            for row in revisions:
                by_memory[row[0]].append(_revision_at(row[0], row[1:]))
        return [_memory(row, by_memory[row.id]) for row in rows]


def _visible(visibility: Visibility) -> Any:
    """The visibility rule as SQL, so pagination never counts rows the caller cannot see."""
    return _visible_among(
        None if visibility.user_ids is None else sorted(visibility.user_ids),
        None if visibility.customer_ids is None else sorted(visibility.customer_ids),
        visibility.organization,
    )


def _visible_among(user_ids: Any, customer_ids: Any, organization: bool) -> Any:
    """`_visible` with the user and customer ids as lists or as (expanding) bound parameters;
    None: every one."""
    user = MemoryRow.scope_type == ScopeType.USER.value
    if user_ids is not None:
        user = and_(user, MemoryRow.scope_id.in_(user_ids))
    customer = MemoryRow.scope_type == ScopeType.CUSTOMER.value
    if customer_ids is not None:
        customer = and_(customer, MemoryRow.scope_id.in_(customer_ids))
    scope = (
        and_(MemoryRow.scope_type == ScopeType.ORGANIZATION.value, MemoryRow.scope_id == "")
        if organization
        else false()
    )
    return or_(user, customer, scope)


def _revision_columns(revision: Revision) -> dict[str, Any]:
    provenance = revision.provenance
    confirmation = revision.confirmation
    return {
        "memory_id": revision.memory_id,
        "number": revision.number,
        "value": revision.value,
        "valid_from": revision.valid_from,
        "valid_until": revision.valid_until,
        "superseded_from": revision.superseded_from,
        "superseded_by_number": revision.superseded_by_number,
        "replaces_number": revision.replaces_number,
        "status": revision.status.value,
        "speaker": provenance.speaker.value,
        "method": provenance.method.value,
        "evidence_type": provenance.evidence.type.value,
        "evidence_ref": provenance.evidence.ref,
        "quote": provenance.quote,
        "source_time": provenance.source_time,
        "create_time": revision.create_time,
        "author_user_id": revision.author_user_id,
        "confirmed_by": confirmation.user_id if confirmation else None,
        "confirm_time": confirmation.confirm_time if confirmation else None,
        "confirm_restored_by": (confirmation.restored_by or None) if confirmation else None,
        "confirm_restore_time": confirmation.restore_time if confirmation else None,
        "status_reason": revision.status_reason,
        "document_version": provenance.document_version,
        "excerpt": provenance.excerpt,
        "source_change_time": revision.source_change_time,
    }


def _memory(found: Any, revisions: list[Revision]) -> Memory:
    row = found._mapping
    return Memory(
        id=row["id"],
        tenant_id=row["tenant_id"],
        scope=Scope(_SCOPE_TYPES[row["scope_type"]], row["scope_id"]),
        key=row["key"],
        key_context=row["key_context"],
        kind=_KINDS[row["kind"]],
        version=row["version"],
        create_time=row["create_time"],
        update_time=row["update_time"],
        delete_time=row["delete_time"],
        revisions=revisions,
        key_hash=row["key_hash"],
    )


# Column orders of `list_after`'s joined rows: a memory's columns, then one revision's.
_MEMORY_COLUMNS = (
    MemoryRow.id,
    MemoryRow.tenant_id,
    MemoryRow.scope_type,
    MemoryRow.scope_id,
    MemoryRow.key,
    MemoryRow.key_context,
    MemoryRow.kind,
    MemoryRow.version,
    MemoryRow.create_time,
    MemoryRow.update_time,
    MemoryRow.delete_time,
    MemoryRow.key_hash,
)
_REVISION_COLUMNS = (
    RevisionRow.number,
    RevisionRow.value,
    RevisionRow.valid_from,
    RevisionRow.valid_until,
    RevisionRow.status,
    RevisionRow.speaker,
    RevisionRow.method,
    RevisionRow.evidence_type,
    RevisionRow.evidence_ref,
    RevisionRow.quote,
    RevisionRow.source_time,
    RevisionRow.document_version,
    RevisionRow.excerpt,
    RevisionRow.create_time,
    RevisionRow.author_user_id,
    RevisionRow.replaces_number,
    RevisionRow.superseded_from,
    RevisionRow.superseded_by_number,
    RevisionRow.confirmed_by,
    RevisionRow.confirm_time,
    RevisionRow.confirm_restored_by,
    RevisionRow.confirm_restore_time,
    RevisionRow.status_reason,
    RevisionRow.source_change_time,
)
_MEMORY_WIDTH = len(_MEMORY_COLUMNS)


# Scopes are frozen values: one object for each one read, not one per memory read (a context
# builds a few dozen, each a frozen dataclass's slow __init__). Bounded: cleared when full.
_scopes: dict[tuple[str, str], Scope] = {}
_MAX_SCOPES = 10_000


def _scope(scope_type: str, scope_id: str) -> Scope:
    scope = _scopes.get((scope_type, scope_id))
    if scope is None:
        if len(_scopes) >= _MAX_SCOPES:
            _scopes.clear()
        scope = _scopes[(scope_type, scope_id)] = Scope(_SCOPE_TYPES[scope_type], scope_id)
    return scope


def _memories_with_revisions(rows: Iterable[Sequence[Any]]) -> list[Memory]:
    """Memories from rows of `_MEMORY_COLUMNS + _REVISION_COLUMNS`, ordered by memory id and
    revision number (a memory without revisions: one row whose revision columns are NULL)."""
    memories: list[Memory] = []
    current: Memory | None = None
    for row in rows:
        memory_id = row[0]
        if current is None or current.id != memory_id:
            (
                _,
                tenant_id,
                scope_type,
                scope_id,
                key,
                key_context,
                kind,
                version,
                create_time,
                update_time,
                delete_time,
                key_hash,
            ) = row[:_MEMORY_WIDTH]
            current = Memory(
                memory_id,
                tenant_id,
                _scope(scope_type, scope_id),
                key,
                key_context,
                _KINDS[kind],
                version,
                create_time,
                update_time,
                delete_time,
                [],
                key_hash,
            )
            memories.append(current)
        if row[_MEMORY_WIDTH] is not None:
            current.revisions.append(_revision_at(memory_id, row[_MEMORY_WIDTH:]))
    return memories


def _revision_at(memory_id: str, columns: Sequence[Any]) -> Revision:
    """A revision from the values of `_REVISION_COLUMNS`, in that order: the one decoder of a
    stored revision (every read selects those columns), by position because recall and
    BuildContext decode one for every candidate they read."""
    (
        number,
        value,
        valid_from,
        valid_until,
        status,
        speaker,
        method,
        evidence_type,
        evidence_ref,
        quote,
        source_time,
        document_version,
        excerpt,
        create_time,
        author_user_id,
        replaces_number,
        superseded_from,
        superseded_by_number,
        confirmed_by,
        confirm_time,
        confirm_restored_by,
        confirm_restore_time,
        status_reason,
        source_change_time,
    ) = columns
    confirmation = None
    if confirmed_by is not None and confirm_time is not None:
        confirmation = Confirmation(
            confirmed_by, confirm_time, confirm_restored_by or "", confirm_restore_time
        )
    return Revision(
        memory_id,
        number,
        value,
        valid_from,
        valid_until,
        _STATUSES[status],
        Provenance(
            _SPEAKERS[speaker],
            _METHODS[method],
            EvidenceRef(_EVIDENCE_TYPES[evidence_type], evidence_ref),
            quote,
            source_time,
            document_version,
            excerpt,
        ),
        create_time,
        author_user_id,
        replaces_number,
        superseded_from,
        superseded_by_number,
        confirmation,
        status_reason,
        source_change_time,
    )


class SqlTranscriptRepository(TenantScoped):
    def __init__(self, session: Session, tenant_id: str) -> None:
        super().__init__(session, tenant_id)
        self._known: dict[str, Message | None] = {}

    def preload_messages(
        self, message_ids: Collection[str], known: Collection[Message] = ()
    ) -> None:
        """Reads these messages in one statement; `get_message` then answers them (and the
        missing ones) without another. Messages never change once appended and are never
        removed, so those `known` from an earlier read of this tenant are not read again
        (only found ones: a message missing then may have been appended since)."""
        for message in known:
            if message.tenant_id == self._tenant_id:
                self._known.setdefault(message.id, message)
        wanted = sorted(set(message_ids) - self._known.keys())
        for ids in chunks(wanted, IN_CLAUSE_CHUNK):
            self._known.update(dict.fromkeys(ids))
            for row in self._run(
                "transcript.preload_messages",
                lambda p: p.select(MessageRow).where(
                    MessageRow.id.in_(bindparam("ids", expanding=True))
                ),
                ids=ids,
            ):
                self._known[row.id] = _message(row)

    def get_conversation(self, owner_user_id: str, conversation_id: str) -> Conversation | None:
        row = self._run(
            "transcript.get_conversation",
            lambda p: p.select(ConversationRow).where(
                ConversationRow.owner_user_id == bindparam("owner"),
                ConversationRow.id == bindparam("id"),
            ),
            owner=owner_user_id,
            id=conversation_id,
        ).first()
        if row is None:
            return None
        return Conversation(row.tenant_id, row.id, row.owner_user_id, row.create_time)

    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        rows = self._session.execute(
            self._select(ConversationRow, ConversationRow.owner_user_id)
            .where(ConversationRow.id == conversation_id)
            .order_by(ConversationRow.owner_user_id)
            .limit(limit)
        )
        return [row.owner_user_id for row in rows]

    def add_conversation(self, conversation: Conversation) -> None:
        self._insert(
            ConversationRow,
            id=conversation.id,
            owner_user_id=conversation.owner_user_id,
            last_sequence=0,
            create_time=conversation.create_time,
        )

    def claim_sequences(self, owner_user_id: str, conversation_id: str, count: int) -> int:
        """The row update also serializes concurrent appends to one conversation."""
        last = self._session.execute(
            self._update(ConversationRow)
            .where(
                ConversationRow.owner_user_id == owner_user_id,
                ConversationRow.id == conversation_id,
            )
            .values(last_sequence=ConversationRow.last_sequence + count)
            .returning(ConversationRow.last_sequence)
        ).scalar_one()
        return int(last) - count + 1

    def add_message(self, message: Message) -> None:
        self.add_messages([message])

    def add_messages(self, messages: Sequence[Message]) -> None:
        """One multi-row INSERT."""
        try:
            self._insert_many(
                MessageRow,
                [
                    {
                        "id": message.id,
                        "conversation_id": message.conversation_id,
                        "sequence": message.sequence,
                        "speaker": message.speaker.value,
                        "text": message.text,
                        "status": message.status.value,
                        "author_user_id": message.author_user_id,
                        "create_time": message.create_time,
                    }
                    for message in messages
                ],
            )
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def recent_messages(
        self, owner_user_id: str, conversation_id: str, count: int
    ) -> list[Message]:
        rows = self._run(
            "transcript.recent_messages",
            lambda p: (
                p.select(MessageRow)
                .where(
                    MessageRow.author_user_id == bindparam("owner"),
                    MessageRow.conversation_id == bindparam("conversation"),
                )
                .order_by(MessageRow.sequence.desc())
                .limit(bindparam("count"))
            ),
            owner=owner_user_id,
            conversation=conversation_id,
            count=count,
        ).all()
        return [_message(row) for row in reversed(rows)]

    def get_message(self, message_id: str) -> Message | None:
        if message_id in self._known:
            return self._known[message_id]
        row = self._run(
            "transcript.get_message",
            lambda p: p.select(MessageRow).where(MessageRow.id == bindparam("id")),
            id=message_id,
        ).first()
        return None if row is None else _message(row)

    def list_messages(
        self, owner_user_id: str, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]:
        rows = self._session.execute(
            self._select(MessageRow)
            .where(
                MessageRow.author_user_id == owner_user_id,
                MessageRow.conversation_id == conversation_id,
                MessageRow.sequence > after_sequence,
            )
            .order_by(MessageRow.sequence)
            .limit(limit)
        )
        return [_message(row) for row in rows]


def _message(found: Any) -> Message:
    """Columns read through the row's mapping (see `_revision`): a batch of creates reads the
    message each memory cites inside the write transaction."""
    row = found._mapping
    return Message(
        id=row["id"],
        tenant_id=row["tenant_id"],
        conversation_id=row["conversation_id"],
        sequence=row["sequence"],
        speaker=_SPEAKERS[row["speaker"]],
        text=row["text"],
        status=_TURN_STATUSES[row["status"]],
        author_user_id=row["author_user_id"],
        create_time=row["create_time"],
    )


class SqlGrantRepository(TenantScoped):
    def get(self, user_id: str, customer_id: str) -> CustomerGrant | None:
        row = self._session.execute(
            self._select(CustomerGrantRow).where(
                CustomerGrantRow.user_id == user_id, CustomerGrantRow.customer_id == customer_id
            )
        ).first()
        return None if row is None else _grant(row)

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
        return [_grant(row) for row in rows]


def _grant(row: Any) -> CustomerGrant:
    return CustomerGrant(
        row.tenant_id, row.user_id, row.customer_id, row.granted_by_user_id, row.create_time
    )


class SqlIdempotencyRepository(TenantScoped):
    def __init__(self, session: Session, tenant_id: str, *, serialised: bool = False) -> None:
        """`serialised`: this write transaction holds the database's only writer lock from its
        BEGIN (SQLite), so no other transaction can claim a request id before it ends."""
        super().__init__(session, tenant_id)
        self._serialised = serialised
        self._claimed: dict[str, Any] | None = None  # a claim whose INSERT waits for its answer

    def get(self, user_id: str, request_id: str) -> StoredResponse | None:
        row = self._run(
            "idempotency.get",
            lambda p: p.select(IdempotencyRow).where(
                IdempotencyRow.user_id == bindparam("user"),
                IdempotencyRow.request_id == bindparam("request"),
            ),
            user=user_id,
            request=request_id,
        ).first()
        if row is None:
            return None
        return StoredResponse(
            row.method, row.fingerprint, row.response, row.create_time, row.memory_id or ""
        )

    def claim(
        self, user_id: str, request_id: str, stored: StoredResponse, expired: datetime | None
    ) -> None:
        """Insert the request id's row before the work, so a duplicate in flight waits on it.

        On PostgreSQL a second INSERT of the same key blocks until the first transaction ends and
        then fails (WriteConflict), and the retry replays the stored response. Only an expired row
        is removed (`expired` is None when the lookup found no row: nothing to remove): deleting
        a live one would let a duplicate do the work twice. When writers are serialised the
        row goes in with its answer (`record`), one statement instead of an INSERT and an
        UPDATE: no other writer can look for it in between.
        """
        if expired is not None:
            for model in (IdempotencyRow, IdempotencyShownRow):
                self._run(
                    ("idempotency.forget_expired", model),
                    _forget_expired(model),
                    user=user_id,
                    request=request_id,
                    expired=expired,
                )
        row = {
            "user_id": user_id,
            "request_id": request_id,
            "method": stored.method,
            "fingerprint": stored.fingerprint,
            "response": stored.response,
            "create_time": stored.create_time,
            "memory_id": stored.memory_id or None,
        }
        if self._serialised:
            self._claimed = row
        else:
            self._insert(IdempotencyRow, **row)

    def flush(self) -> None:
        """Writes a claim still waiting for its answer; the unit of work calls it before
        COMMIT."""
        row, self._claimed = self._claimed, None
        if row is not None:
            self._insert(IdempotencyRow, **row)

    def record(self, user_id: str, request_id: str, response: bytes, shown: Sequence[str]) -> None:
        """The response of a claimed request id (and the memories it shows), in the same
        transaction as its effect. The first shown memory marks the row as showing one; a
        batch lists all of them in `idempotency_shown` as well."""
        claimed = self._claimed
        if claimed is not None and (claimed["user_id"], claimed["request_id"]) == (
            user_id,
            request_id,
        ):
            self._claimed = None
            claimed.update(response=response, memory_id=shown[0] if shown else None)
            self._insert(IdempotencyRow, **claimed)
        else:
            self._run(
                "idempotency.record",
                lambda p: (
                    p.update(IdempotencyRow)
                    .where(
                        IdempotencyRow.user_id == bindparam("user"),
                        IdempotencyRow.request_id == bindparam("request"),
                    )
                    .values(response=bindparam("response"), memory_id=bindparam("memory_id"))
                ),
                user=user_id,
                request=request_id,
                response=response,
                memory_id=shown[0] if shown else None,
            )
        if len(shown) > 1:
            now = utcnow()
            self._insert_many(
                IdempotencyShownRow,
                [
                    {
                        "memory_id": memory_id,
                        "user_id": user_id,
                        "request_id": request_id,
                        "create_time": now,
                    }
                    for memory_id in dict.fromkeys(shown)
                ],
            )

    def redact_shown(self, record_ids: list[str]) -> int:
        if not record_ids:
            return 0
        result = self._session.execute(
            self._update(IdempotencyRow)
            .where(
                or_(
                    IdempotencyRow.memory_id.in_(record_ids),
                    # uncorrelated, so the subquery is scoped on its own (storage/scoped.py)
                    tuple_(IdempotencyRow.user_id, IdempotencyRow.request_id).in_(
                        self._select(
                            IdempotencyShownRow,
                            IdempotencyShownRow.user_id,
                            IdempotencyShownRow.request_id,
                        ).where(IdempotencyShownRow.memory_id.in_(record_ids))
                    ),
                ),
            )
            .values(response=b"")
        )
        return int(result.rowcount)  # type: ignore[attr-defined]


def _forget_expired(
    model: type[IdempotencyRow] | type[IdempotencyShownRow],
) -> Callable[[Prepare], Any]:
    """Deletes the row of a request id (user, request) created before `expired`."""
    return lambda p: p.delete(model).where(
        model.user_id == bindparam("user"),
        model.request_id == bindparam("request"),
        model.create_time < bindparam("expired"),
    )


def purge_idempotency_keys(everyone: AllTenants, older_than: datetime) -> int:
    """Retention across tenants: forget request ids past their retention, with every row
    listing what their answers show (written a moment after the request id's own row, so
    possibly not yet past retention): a claim looks for those only when the lookup found the
    request id's row."""
    purged = everyone.select(
        IdempotencyRow, IdempotencyRow.tenant_id, IdempotencyRow.user_id, IdempotencyRow.request_id
    ).where(IdempotencyRow.create_time < older_than)
    everyone.session.execute(
        everyone.delete(IdempotencyShownRow).where(
            or_(
                IdempotencyShownRow.create_time < older_than,
                tuple_(
                    IdempotencyShownRow.tenant_id,
                    IdempotencyShownRow.user_id,
                    IdempotencyShownRow.request_id,
                ).in_(purged),
            )
        )
    )
    result = everyone.session.execute(
        everyone.delete(IdempotencyRow).where(IdempotencyRow.create_time < older_than)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


class SqlOutboxRepository(TenantScoped):
    """Memory items are kept until the unit of work commits (or reads the outbox) and then go
    in as one multi-row INSERT, in the order they were queued: a batch of creates costs one
    statement for its index work, not one per memory and boundary."""

    queued_now = False

    def __init__(self, session: Session, tenant_id: str) -> None:
        super().__init__(session, tenant_id)
        self._queued: list[dict[str, Any]] = []

    def enqueue(self, memory_id: str, due_time: datetime, now: datetime) -> None:
        self.queued_now = self.queued_now or due_time <= now
        self._queued.append(
            {
                "memory_id": memory_id,
                "due_time": due_time,
                "create_time": now,
                "attempts": 0,
                "kind": OutboxKind.MEMORY.value,
            }
        )

    def flush(self) -> None:
        """Writes the queued items; the unit of work calls it before COMMIT."""
        rows, self._queued = self._queued, []
        try:
            self._insert_many(OutboxRow, rows)
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def enqueue_tenant(self, kind: OutboxKind, now: datetime) -> None:
        self.queued_now = True
        self.flush()  # after the memory items queued before it
        self._insert(
            OutboxRow, memory_id="", due_time=now, create_time=now, attempts=0, kind=kind.value
        )

    def queued_changes(self) -> dict[str, datetime]:
        self.flush()
        rows = self._session.execute(
            self._select(
                OutboxRow, OutboxRow.memory_id, OutboxRow.due_time, OutboxRow.attempts
            ).where(OutboxRow.kind == OutboxKind.MEMORY.value)
        )
        changes: dict[str, datetime] = {}
        for memory_id, due_time, attempts in rows:
            due = ON_ITS_WAY if attempts else due_time
            if memory_id not in changes or due < changes[memory_id]:
                changes[memory_id] = due
        return changes

    def tenant_work(self) -> bool:
        self.flush()
        found = self._session.scalar(
            self._select(OutboxRow, OutboxRow.id)
            .where(OutboxRow.kind != OutboxKind.MEMORY.value)
            .limit(1)
        )
        return found is not None


class SqlOutboxStore:
    """Cross-tenant by design: the drain worker serves every tenant. `FOR UPDATE SKIP LOCKED`
    lets several replicas claim disjoint items on PostgreSQL; SQLite serializes writers anyway."""

    def __init__(self, all_tenants: Callable[[], AbstractContextManager[AllTenants]]) -> None:
        self._all_tenants = all_tenants

    def claim(
        self, owner: str, limit: int, now: datetime, lease_seconds: float
    ) -> list[OutboxItem]:
        with self._all_tenants() as everyone:
            rows = list(
                everyone.session.scalars(
                    everyone.select(OutboxRow)
                    .where(
                        OutboxRow.due_time <= now,
                        or_(OutboxRow.lease_until.is_(None), OutboxRow.lease_until < now),
                    )
                    .order_by(OutboxRow.id)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
            )
            if not rows:
                return []
            everyone.session.execute(
                everyone.update(OutboxRow)
                .where(OutboxRow.id.in_([row.id for row in rows]))
                .values(lease_owner=owner, lease_until=now + timedelta(seconds=lease_seconds))
            )
            return [
                OutboxItem(
                    row.id,
                    row.tenant_id,
                    row.memory_id,
                    row.due_time,
                    row.create_time,
                    row.attempts,
                    OutboxKind(row.kind),
                )
                for row in rows
            ]

    def expand(self, owner: str, item: OutboxItem, memory_ids: list[str], now: datetime) -> bool:
        with self._all_tenants() as everyone:
            done = everyone.session.execute(
                everyone.delete(OutboxRow).where(
                    OutboxRow.id == item.id, OutboxRow.lease_owner == owner
                )
            )
            if not done.rowcount:  # type: ignore[attr-defined]
                return False
            everyone.insert_many(
                OutboxRow,
                [
                    {
                        "tenant_id": item.tenant_id,
                        "memory_id": memory_id,
                        "due_time": now,
                        "create_time": now,
                        "attempts": 0,
                        "kind": OutboxKind.REFILL.value,
                    }
                    for memory_id in memory_ids
                ],
            )
            return True

    def complete(
        self,
        owner: str,
        ids: list[int],
        ahead: Mapping[tuple[str, str], Sequence[datetime]] = EMPTY_AHEAD,
    ) -> None:
        with self._all_tenants() as everyone:
            completed: set[tuple[str, str]] = set()
            for chunk in chunks([str(i) for i in ids], IN_CLAUSE_CHUNK):
                mine = (OutboxRow.id.in_([int(i) for i in chunk]), OutboxRow.lease_owner == owner)
                if ahead:
                    rows = everyone.session.execute(
                        everyone.select(OutboxRow, OutboxRow.tenant_id, OutboxRow.memory_id)
                        .where(*mine)
                        .with_for_update()
                    )
                    completed.update((tenant_id, memory_id) for tenant_id, memory_id in rows)
                everyone.session.execute(everyone.delete(OutboxRow).where(*mine))
            # A memory whose items went to another drain (this lease expired) is that drain's
            # to follow: its read is newer than ours.
            mine_ahead = {key: instants for key, instants in ahead.items() if key in completed}
            if mine_ahead:
                _queue_missing(everyone, mine_ahead)

    def retry(self, owner: str, items: list[OutboxItem], error: str, now: datetime) -> None:
        with self._all_tenants() as everyone:
            for item in items:
                delay = min(60.0, 0.5 * 2**item.attempts) * random.uniform(0.8, 1.2)
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(OutboxRow.id == item.id, OutboxRow.lease_owner == owner)
                    .values(
                        attempts=item.attempts + 1,
                        due_time=now + timedelta(seconds=delay),
                        lease_owner=None,
                        lease_until=None,
                        last_error=error[:2000],
                    )
                )

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        with self._all_tenants() as everyone:
            values = {"lease_owner": None, "lease_until": None, "last_error": error[:2000]}
            if ids is None:
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(OutboxRow.lease_owner == owner)
                    .values(**values)
                )
                return
            for chunk in chunks([str(i) for i in ids], IN_CLAUSE_CHUNK):
                everyone.session.execute(
                    everyone.update(OutboxRow)
                    .where(
                        OutboxRow.id.in_([int(i) for i in chunk]), OutboxRow.lease_owner == owner
                    )
                    .values(**values)
                )

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        with self._all_tenants() as everyone:
            count, oldest = everyone.session.execute(
                everyone.select(
                    OutboxRow, func.count(OutboxRow.id), func.min(OutboxRow.create_time)
                ).where(OutboxRow.due_time <= now)
            ).one()
        return int(count), (oldest.replace(tzinfo=UTC) if oldest is not None else None)


def _queue_missing(
    everyone: AllTenants, ahead: Mapping[tuple[str, str], Sequence[datetime]]
) -> None:
    """A MEMORY item for each boundary in `ahead` with none queued at that instant (found by
    the outbox's index on memory and due time). Two drains completing changes of one memory
    at the same moment can both queue an instant: the memory is then indexed twice at it."""
    queued: set[tuple[str, str, datetime]] = set()
    for chunk in chunks(sorted({memory_id for _, memory_id in ahead}), IN_CLAUSE_CHUNK):
        rows = everyone.session.execute(
            everyone.select(
                OutboxRow, OutboxRow.tenant_id, OutboxRow.memory_id, OutboxRow.due_time
            ).where(OutboxRow.memory_id.in_(chunk))
        )
        queued.update((tenant, memory, due) for tenant, memory, due in rows)
    everyone.insert_many(
        OutboxRow,
        [
            {
                "tenant_id": tenant_id,
                "memory_id": memory_id,
                "due_time": instant,
                "create_time": instant,  # its lag and age count from when it is due
                "attempts": 0,
                "kind": OutboxKind.MEMORY.value,
            }
            for (tenant_id, memory_id), instants in ahead.items()
            for instant in instants
            if (tenant_id, memory_id, instant) not in queued
        ],
    )


class SqlOverrideRepository(TenantScoped):
    def add(self, override: Override) -> None:
        self._insert(
            OverrideRow,
            id=override.id,
            parent_type=override.parent_type.value,
            parent_id=override.parent_id,
            key=override.key,
            key_context=override.key_context,
            scope_type=override.scope.type.value,
            scope_id=override.scope.id,
            value=override.value,
            expire_time=override.expire_time,
            create_time=override.create_time,
            author_user_id=override.author_user_id,
            evidence_ref=override.evidence_ref,
        )

    def active(
        self,
        parent_type: ParentType,
        parent_id: str,
        instant: datetime,
        after_id: str,
        limit: int,
        author_user_id: str | None,
    ) -> list[Override]:
        shape = ("overrides.active", author_user_id is not None, bool(after_id))

        def build(p: Prepare) -> Any:
            statement = p.select(OverrideRow).where(
                OverrideRow.parent_type == bindparam("parent_type"),
                OverrideRow.parent_id == bindparam("parent_id"),
                OverrideRow.expire_time > bindparam("instant"),
                OverrideRow.create_time <= bindparam("instant"),
            )
            if shape[1]:
                statement = statement.where(OverrideRow.author_user_id == bindparam("author"))
            if shape[2]:
                statement = statement.where(OverrideRow.id > bindparam("after_id"))
            return statement.order_by(OverrideRow.id).limit(bindparam("limit"))

        rows = self._run(
            shape,
            build,
            parent_type=parent_type.value,
            parent_id=parent_id,
            instant=instant,
            author=author_user_id,
            after_id=after_id,
            limit=limit,
        )
        return [_override(row) for row in rows]

    def get(self, override_id: str) -> Override | None:
        row = self._session.execute(
            self._select(OverrideRow).where(OverrideRow.id == override_id)
        ).first()
        return None if row is None else _override(row)

    def remove(self, override_id: str) -> bool:
        result = self._session.execute(
            self._delete(OverrideRow).where(OverrideRow.id == override_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def _override(row: Any) -> Override:
    return Override(
        id=row.id,
        tenant_id=row.tenant_id,
        parent_type=_PARENT_TYPES[row.parent_type],
        parent_id=row.parent_id,
        key=row.key,
        key_context=row.key_context,
        scope=Scope(_SCOPE_TYPES[row.scope_type], row.scope_id),
        value=row.value,
        expire_time=row.expire_time,
        create_time=row.create_time,
        author_user_id=row.author_user_id,
        evidence_ref=row.evidence_ref,
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
        return None if row is None else _customer(row)

    def by_match_name(self, match_name: str) -> list[Customer]:
        rows = self._session.execute(
            self._select(CustomerRow)
            .where(CustomerRow.match_name == match_name)
            .order_by(CustomerRow.customer_id)
        )
        return [_customer(row) for row in rows]

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
            return [_customer(row) for row in rows]
        found: list[Customer] = []
        for ids in chunks(sorted(i for i in set(among) if i > after_id), IN_CLAUSE_CHUNK):
            rows = self._session.execute(
                self._select(CustomerRow)
                .where(CustomerRow.customer_id.in_(ids))
                .order_by(CustomerRow.customer_id)
                .limit(limit - len(found))
            )
            found.extend(_customer(row) for row in rows)
            if len(found) >= limit:
                break
        return found

    def remove(self, customer_id: str) -> bool:
        result = self._session.execute(
            self._delete(CustomerRow).where(CustomerRow.customer_id == customer_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def _customer(row: Any) -> Customer:
    return Customer(row.tenant_id, row.customer_id, row.display_name, row.create_time)


def purge_deletion_markers(everyone: AllTenants, older_than: datetime) -> int:
    """Retention across tenants: drop deletion markers (no text) past their retention."""
    expired = everyone.select(MemoryRow, MemoryRow.id).where(
        MemoryRow.live.is_(None), MemoryRow.delete_time < older_than
    )
    everyone.session.execute(everyone.delete(RevisionRow).where(RevisionRow.memory_id.in_(expired)))
    everyone.session.execute(
        everyone.delete(MemoryUsageRow).where(MemoryUsageRow.memory_id.in_(expired))
    )
    result = everyone.session.execute(
        everyone.delete(MemoryRow).where(
            MemoryRow.live.is_(None), MemoryRow.delete_time < older_than
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
