"""The memory repository: memories and their revisions, one aggregate (a revision is never
read or written without its memory), and the deletion markers a deleted memory leaves.

Every statement starts from a `TenantScoped` helper (`kernel/storage/scoped.py`), so none can forget
the tenant. How the columns are read back is `memories/storage/memory_rows.py`'s, and how a listing
is read `memories/storage/memory_listing.py`'s."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, and_, bindparam, func, or_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import EvidenceType, Memory, Revision, RevisionStatus, Scope
from memory_service.kernel.domain.ports import MemoryQuery, chunks
from memory_service.kernel.domain.rules import lineage_ref_hash, scoped_key_hash
from memory_service.kernel.storage.models import MemoryRow, MemoryUsageRow, RevisionRow
from memory_service.kernel.storage.rows import IN_CLAUSE_CHUNK
from memory_service.kernel.storage.scoped import AllTenants, Prepare, TenantScoped
from memory_service.memories.storage.memory_listing import MemoryListing, listing_parameters
from memory_service.memories.storage.memory_rows import (
    ANY_EVIDENCE_TYPE,
    MEMORY_COLUMNS,
    REVISION_COLUMNS,
    memories_with_revisions,
    memory_of,
    revision_at,
    revision_columns,
)


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
        live = self._read_live(wanted)
        deleted = self._read_deletions(wanted)
        withdrawn = self._read_withdrawn(set(lineages))
        self._preloaded_live, self._deleted, self._withdrawn = live, deleted, withdrawn
        deferred: dict[type[Any], list[dict[str, Any]]] = {MemoryRow: [], RevisionRow: []}
        self._deferred = deferred
        try:
            yield
            self._insert_deferred(deferred)
        finally:
            self._preloaded_live, self._deleted, self._withdrawn = None, {}, {}
            self._deferred = None

    def _read_live(
        self, wanted: set[tuple[Scope, str, str]]
    ) -> dict[tuple[Scope, str, str], Memory | None]:
        """`preloaded`'s live memory of each scoped key (None: none), a chunk of keys a read."""
        live: dict[tuple[Scope, str, str], Memory | None] = dict.fromkeys(wanted)
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
        return live

    def _read_deletions(self, wanted: set[tuple[Scope, str, str]]) -> dict[str, datetime | None]:
        """`preloaded`'s last deletion of each scoped key, by its hash (None: never deleted)."""
        hashes = {
            scoped_key_hash(scope.type.value, scope.id, key, context)
            for scope, key, context in wanted
        }
        deleted: dict[str, datetime | None] = dict.fromkeys(hashes)
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
        return deleted

    def _read_withdrawn(self, lineages: set[str]) -> dict[str, bool]:
        """`preloaded`'s answer for each evidence lineage: whether it underlies a deleted
        revision."""
        withdrawn = {lineage_ref_hash(lineage): lineage for lineage in lineages}
        lineage_known = dict.fromkeys(withdrawn.values(), False)
        for group_hashes in chunks(sorted(withdrawn), IN_CLAUSE_CHUNK):
            for evidence_ref in self._run(
                "memories.preload_withdrawn",
                lambda p: (
                    p.select(RevisionRow, RevisionRow.evidence_ref)
                    .where(
                        ANY_EVIDENCE_TYPE,
                        RevisionRow.evidence_ref.in_(bindparam("refs", expanding=True)),
                        RevisionRow.status == RevisionStatus.DELETED.value,
                    )
                    .distinct()
                ),
                refs=group_hashes,
            ).scalars():
                lineage_known[withdrawn[evidence_ref]] = True
        return lineage_known

    def _insert_deferred(self, deferred: dict[type[Any], list[dict[str, Any]]]) -> None:
        """The rows `add` kept back while `preloaded`, memories before revisions; a lost unique
        race is a WriteConflict, as it is one by one."""
        try:
            for model, pending in deferred.items():
                self._insert_many(model, pending)
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def get(self, memory_id: str) -> Memory | None:
        """The memory and its revisions in one read (every correction and GetMemory starts
        here): a second statement cost more than the rows it read."""
        rows = self._run(
            "memories.get",
            lambda p: (
                _joined_with_revisions(p)
                .where(MemoryRow.id == bindparam("id"))
                .order_by(RevisionRow.number)
            ),
            id=memory_id,
        ).all()
        found = memories_with_revisions(rows)
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
                    _joined_with_revisions(p)
                    .where(MemoryRow.id.in_(bindparam("ids", expanding=True)))
                    .order_by(MemoryRow.id, RevisionRow.number)
                ),
                ids=ids,
            )
            found.update((memory.id, memory) for memory in memories_with_revisions(rows))
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
            # uncorrelated, so the subquery is scoped on its own (kernel/storage/scoped.py)
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
                    ANY_EVIDENCE_TYPE,
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
                    ANY_EVIDENCE_TYPE,
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
        self._add_row(RevisionRow, revision_columns(revision))

    def _add_row(self, model: type[MemoryRow] | type[RevisionRow], row: dict[str, Any]) -> None:
        if self._deferred is not None:
            self._deferred[model].append(row)  # inserted with the others when `preloaded` ends
        else:
            self._insert(model, **row)

    def update_revision(self, revision: Revision) -> None:
        """Every column but the source-change mark, which only `mark_source_changed` writes: a
        correction racing a document report must not erase the mark, nor the report the
        correction's supersession."""
        columns = revision_columns(revision)
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

    def advance_version(self, memory_id: str, expected_version: int, now: datetime) -> bool:
        result = self._run(
            "memories.advance_version",
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
        """One prepared statement per combination of the filters given (`MemoryListing`): the
        page of memories and their revisions in one read, decoded by position (a context reads
        every visible memory through here)."""
        listing = MemoryListing.of(query, after_id)
        rows = self._run(
            listing, listing.statement, **listing_parameters(query, after_id, limit)
        ).all()  # one fetch: row by row, the result layer cost more than the rows
        return memories_with_revisions(rows)

    def _with_revisions(self, rows: Sequence[Any]) -> list[Memory]:
        by_memory: dict[str, list[Revision]] = defaultdict(list)
        for ids in chunks([row.id for row in rows], IN_CLAUSE_CHUNK):
            revisions = self._run(
                "memories.revisions",
                lambda p: (
                    p.select(RevisionRow, RevisionRow.memory_id, *REVISION_COLUMNS)
                    .where(RevisionRow.memory_id.in_(bindparam("ids", expanding=True)))
                    .order_by(RevisionRow.memory_id, RevisionRow.number)
                ),
                ids=ids,
            ).all()
            for row in revisions:
                by_memory[row[0]].append(revision_at(row[0], row[1:]))
        return [memory_of(row, by_memory[row.id]) for row in rows]


def _joined_with_revisions(p: Prepare) -> Select[Any]:
    """Memories joined with their revisions, in the columns `memories_with_revisions` decodes
    (outer: a memory read may have none left)."""
    return p.select(MemoryRow, *MEMORY_COLUMNS, *REVISION_COLUMNS).select_from(
        MemoryRow.__table__.outerjoin(
            RevisionRow,
            and_(RevisionRow.memory_id == MemoryRow.id, p.mine(RevisionRow)),
        )
    )


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
