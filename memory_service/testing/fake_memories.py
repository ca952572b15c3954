"""The fake repositories over memories: memories, document versions and the review queue's
reads, with the visibility and filter rules their SQL queries apply."""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import (
    DocumentVersion,
    EvidenceType,
    ImportItem,
    ItemReview,
    Memory,
    Revision,
    RevisionStatus,
    Scope,
    ScopeType,
)
from memory_service.kernel.domain.ports import MemoryQuery, Visibility
from memory_service.kernel.domain.rules import (
    applicable_revision,
    lineage_ref_hash,
    scoped_key_hash,
)
from memory_service.testing.fake_tables import TenantTables


class FakeMemoryRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, memory_id: str) -> Memory | None:
        memory = self._t.memories.get(memory_id)
        return None if memory is None else copy.deepcopy(memory)

    def get_many(self, memory_ids: list[str]) -> dict[str, Memory]:
        return {i: copy.deepcopy(self._t.memories[i]) for i in memory_ids if i in self._t.memories}

    def live_versions(self) -> dict[str, int]:
        live = sorted(i for i, m in self._t.memories.items() if not m.deleted)
        return {i: self._t.memories[i].version for i in live}

    def count_live(self) -> int:
        return len(self.live_versions())

    def count_searchable(self, instant: datetime) -> int:
        return sum(1 for m in self._t.memories.values() if applicable_revision(m, instant))

    def find_live(self, scope: Scope, key: str, key_context: str) -> Memory | None:
        for memory in self._t.memories.values():
            if (
                not memory.deleted
                and memory.scope == scope
                and (memory.key, memory.key_context) == (key, key_context)
            ):
                return copy.deepcopy(memory)
        return None

    def deletions(
        self, scope: Scope, key: str, key_context: str, lineage: str
    ) -> tuple[datetime | None, bool]:
        key_hash = scoped_key_hash(scope.type.value, scope.id, key, key_context)
        times = [
            m.delete_time
            for m in self._t.memories.values()
            if m.delete_time is not None and m.key_hash == key_hash
        ]
        return max(times, default=None), bool(lineage) and self.deleted_lineage(lineage)

    def deleted_lineage(self, evidence_ref: str) -> bool:
        hashed = lineage_ref_hash(evidence_ref)
        return any(
            r.status is RevisionStatus.DELETED and r.provenance.evidence.ref == hashed
            for m in self._t.memories.values()
            for r in m.revisions
        )

    def add(self, memory: Memory) -> None:
        if not memory.deleted and self.find_live(memory.scope, memory.key, memory.key_context):
            raise WriteConflict("a live memory with this scoped key exists")
        if memory.id in self._t.memories:
            raise WriteConflict("memory id exists")
        self._t.memories[memory.id] = copy.deepcopy(replace(memory, revisions=[]))
        for revision in memory.revisions:
            self.add_revision(revision)

    @contextmanager
    def preloaded(
        self, keys: Collection[tuple[Scope, str, str]], lineages: Collection[str] = ()
    ) -> Iterator[None]:
        """Nothing to read ahead; a clash on a unique key surfaces at `add` instead of at the
        end, which the caller cannot tell apart (the transaction fails either way)."""
        yield

    def add_revision(self, revision: Revision) -> None:
        memory = self._t.memories[revision.memory_id]
        if memory.revision(revision.number) is not None:
            raise WriteConflict("revision number exists")
        memory.revisions.append(copy.deepcopy(revision))
        memory.revisions.sort(key=lambda r: r.number)

    def update_revision(self, revision: Revision) -> None:
        memory = self._t.memories.get(revision.memory_id)
        if memory is None:
            return
        memory.revisions = [
            copy.deepcopy(revision) if r.number == revision.number else r for r in memory.revisions
        ]

    def advance_version(self, memory_id: str, expected_version: int, now: datetime) -> bool:
        memory = self._t.memories.get(memory_id)
        if memory is None or memory.version != expected_version:
            return False
        memory.version += 1
        memory.update_time = now
        return True

    def mark_deleted(self, memory_id: str, now: datetime, key_hash: str) -> None:
        memory = self._t.memories.get(memory_id)
        if memory is not None:
            memory.delete_time = memory.update_time = now
            memory.key, memory.key_context, memory.key_hash = "deleted", "", key_hash

    def list_after(self, query: MemoryQuery, after_id: str, limit: int) -> list[Memory]:
        found = [
            m
            for i, m in sorted(self._t.memories.items())
            if i > after_id and _visible(m, query.visibility) and _matches(m, query)
        ]
        return copy.deepcopy(found[:limit])

    def citing_document(self, uri: str) -> list[Memory]:
        return [
            copy.deepcopy(m)
            for _, m in sorted(self._t.memories.items())
            if not m.deleted
            and any(
                r.provenance.evidence.type is EvidenceType.DOCUMENT
                and r.provenance.evidence.ref == uri
                for r in m.revisions
            )
        ]

    def _live(self, visibility: Visibility, after_id: str) -> list[Memory]:
        """Live memories the caller may see, ascending by id after `after_id`."""
        return [
            m
            for i, m in sorted(self._t.memories.items())
            if i > after_id and not m.deleted and _visible(m, visibility)
        ]


class FakeDocumentRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, uri: str) -> DocumentVersion | None:
        return self._t.documents.get(uri)

    def put(self, document: DocumentVersion) -> None:
        self._t.documents[document.uri] = document

    def mark_source_changed(self, memory_id: str, number: int, now: datetime) -> bool:
        memory = self._t.memories.get(memory_id)
        revision = None if memory is None else memory.revision(number)
        if memory is None or revision is None or revision.source_change_time is not None:
            return False
        memory.revisions = [
            replace(r, source_change_time=now) if r.number == number else r
            for r in memory.revisions
        ]
        return True


class FakeReviewRepository(FakeMemoryRepository):
    def flagged(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        return self._having(
            visibility,
            after_id,
            limit,
            lambda r: r.source_change_time is not None and r.status is RevisionStatus.ACTIVE,
        )

    def with_candidates(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        return self._having(
            visibility, after_id, limit, lambda r: r.status is RevisionStatus.CANDIDATE
        )

    def sharing_keys(self, visibility: Visibility, limit: int) -> list[Memory]:
        live = self._live(visibility, "")
        scopes: dict[tuple[str, str], set[Scope]] = {}
        for memory in live:
            scopes.setdefault((memory.key, memory.key_context), set()).add(memory.scope)
        shared = [m for m in live if len(scopes[(m.key, m.key_context)]) > 1]
        return copy.deepcopy(shared[:limit])

    def unused_since(
        self, visibility: Visibility, cutoff: datetime, after_id: str, limit: int
    ) -> list[Memory]:
        unused = [
            m
            for m in self._live(visibility, after_id)
            if self._t.usage.get(m.id, m.create_time) < cutoff
        ]
        return copy.deepcopy(unused[:limit])

    def pending_items(self, user_id: str | None, after_id: str, limit: int) -> list[ImportItem]:
        pending = [
            copy.copy(item)
            for i, item in sorted(self._t.items.items())
            if i > after_id
            and item.review is ItemReview.PENDING
            and (user_id is None or item.user_id == user_id)
        ]
        return pending[:limit]

    def _having(
        self, visibility: Visibility, after_id: str, limit: int, test: Callable[[Revision], bool]
    ) -> list[Memory]:
        found = [m for m in self._live(visibility, after_id) if any(map(test, m.revisions))]
        return copy.deepcopy(found[:limit])


def _visible(memory: Memory, visibility: Visibility) -> bool:
    match memory.scope.type:
        case ScopeType.USER:
            return visibility.user_ids is None or memory.scope.id in visibility.user_ids
        case ScopeType.CUSTOMER:
            return visibility.customer_ids is None or memory.scope.id in visibility.customer_ids
        case ScopeType.ORGANIZATION:  # the tenant, under the empty id alone
            return visibility.organization and not memory.scope.id


def _matches(memory: Memory, query: MemoryQuery) -> bool:
    if query.scope_type is not None and memory.scope.type is not query.scope_type:
        return False
    if query.scope_type is not None and query.scope_id and memory.scope.id != query.scope_id:
        return False
    if query.key and memory.key != query.key:
        return False
    if query.kind is not None and memory.kind is not query.kind:
        return False
    if query.changed_since is not None and memory.update_time < query.changed_since:
        return False
    return query.show_deleted or not memory.deleted
