"""The memory use cases, one entry each. A write opens the unit of work under the request id,
lets the domain decide (`domain.memory_writes.MemoryUseCases`), stores the answer and commits; a
read (`MemoryQueries`) opens a read unit of work and returns what the domain lets the caller see.

The answer is built inside the transaction by `present`, the transport's conversion, so a
replay returns exactly the bytes the first caller received; `present` is handed the memory
shown (`domain.shown`: what applies, each revision's state), so it formats and decides
nothing. The reads return memories shown as well. Index writes are side effects
queued in the same transaction (the outbox) and delivered by `workers.outbox`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from memory_service.exports.public import ExportUseCases
from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.authorization import require_admin
from memory_service.kernel.domain.errors import Unavailable
from memory_service.kernel.domain.model import Identity, Memory, Message, Revision, utcnow
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.memories.domain.memory_requests import CreateMemory, MemoryFilter, RevisionDraft
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.memories.domain.receipts import DeletionReceipt
from memory_service.memories.domain.shown import (
    ShownMemory,
    ShownRevision,
    show_memory,
    show_revision,
    show_written,
)

A = TypeVar("A")
Changed = Callable[[ShownMemory, ShownRevision], A]


Decide = Callable[[UnitOfWork, datetime], tuple[Memory, Revision]]


class MemoryCommands:
    def __init__(
        self, transactions: Transactions, memories: MemoryUseCases, searching: bool = False
    ) -> None:
        """`searching`: whether a search index is configured (ReindexMemories needs one)."""
        self._tx = transactions
        self._memories = memories
        self._searching = searching

    def _revision_write(
        self, identity: Identity, key: RequestKey[A], decide: Decide, present: Changed[A]
    ) -> A:
        """One transaction under the request id whose answer shows the memory and its revision."""

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            memory, revision = decide(uow, now)
            return Answer(present(*show_written(memory, revision, now)), memory.id)

        return self._tx.write(identity, key, work)

    def create(
        self, identity: Identity, key: RequestKey[A], command: CreateMemory, present: Changed[A]
    ) -> A:
        with self._memories.remembering():
            self._scan_ahead(identity, [command])
            return self._revision_write(
                identity,
                key,
                lambda uow, now: self._memories.create(uow, identity, command, now),
                present,
            )

    def _scan_ahead(
        self, identity: Identity, commands: Sequence[CreateMemory]
    ) -> Sequence[Message]:
        """The secret and grounding checks before the write transaction, so its writer lock
        (one per SQLite database, shared by every tenant) is not held while they run; returns
        the cited messages read, which the write does not read again."""
        return self._tx.read(
            identity, lambda uow: self._memories.scan_ahead(uow, identity, commands)
        )

    def batch_create(
        self,
        identity: Identity,
        key: RequestKey[A],
        commands: Sequence[CreateMemory],
        present: Callable[[Sequence[tuple[ShownMemory, ShownRevision]]], A],
    ) -> A:
        """Every item through the one create rule, in one transaction: all or nothing, and the
        first refusal names its item (`requests[i]`). Each memory queues its own index work."""

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            created = self._memories.create_many(uow, identity, commands, now, cited)
            return Answer.later(
                lambda: present([show_written(m, r, now) for m, r in created]),
                tuple(memory.id for memory, _ in created),
            )

        with self._memories.remembering():
            cited = self._scan_ahead(identity, commands)
            return self._tx.write(identity, key, work)

    def correct(
        self,
        identity: Identity,
        key: RequestKey[A],
        memory_id: str,
        expected_version: int,
        draft: RevisionDraft,
        present: Changed[A],
    ) -> A:
        """A new revision that cuts the current one, only at the caller's etag (I3)."""

        return self._revision_write(
            identity,
            key,
            lambda uow, now: self._memories.correct(
                uow, identity, memory_id, expected_version, draft, now
            ),
            present,
        )

    def confirm(
        self,
        identity: Identity,
        key: RequestKey[A],
        memory_id: str,
        number: int,
        expected_version: int | None,
        confirming_message: str,
        present: Changed[A],
    ) -> A:
        return self._revision_write(
            identity,
            key,
            lambda uow, now: self._memories.confirm(
                uow, identity, memory_id, number, expected_version, confirming_message, now
            ),
            present,
        )

    def reject(
        self,
        identity: Identity,
        key: RequestKey[A],
        memory_id: str,
        number: int,
        expected_version: int | None,
        present: Changed[A],
    ) -> A:
        return self._revision_write(
            identity,
            key,
            lambda uow, now: self._memories.reject(
                uow, identity, memory_id, number, expected_version, now
            ),
            present,
        )

    def delete(
        self,
        identity: Identity,
        key: RequestKey[A],
        memory_id: str,
        expected_version: int | None,
        present: Callable[[ShownMemory, DeletionReceipt], A],
    ) -> A:
        """Deletion and the purge of every copy we keep, in one transaction (I9)."""

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            memory, receipt = self._memories.delete(uow, identity, memory_id, expected_version, now)
            return Answer(present(show_memory(memory, now), receipt), memory.id)

        return self._tx.write(identity, key, work)

    def reindex(self, identity: Identity, key: RequestKey[A], present: Callable[[int], A]) -> A:
        """Queues a rebuild of the tenant's index from the records: admins only, and only when
        there is an index to rebuild."""
        require_admin(identity)
        if not self._searching:
            raise Unavailable("search is turned off (MEMORY_RETRIEVAL_ADDRESS is empty)")

        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._memories.reindex(uow, identity, utcnow())))

        return self._tx.write(identity, key, work)


class MemoryQueries:
    """The memory reads, one read unit of work each; the domain decides what the caller sees."""

    def __init__(self, transactions: Transactions, memories: MemoryUseCases) -> None:
        self._tx = transactions
        self._memories = memories
        self._exports = ExportUseCases()

    def get(self, identity: Identity, memory_id: str, instant: datetime) -> ShownMemory:
        """A visible memory, shown at `instant`."""
        return show_memory(self._get(identity, memory_id), instant)

    def _get(self, identity: Identity, memory_id: str) -> Memory:
        return self._tx.read(identity, lambda uow: self._memories.get(uow, identity, memory_id))

    def memories(
        self,
        identity: Identity,
        memory_filter: MemoryFilter,
        after_id: str,
        limit: int,
        instant: datetime,
    ) -> list[ShownMemory]:
        """Up to `limit` visible memories matching the filter, after `after_id` in id order,
        shown at `instant`."""
        memories = self._tx.read(
            identity,
            lambda uow: self._memories.list(uow, identity, memory_filter, after_id, limit, instant),
        )
        return [show_memory(memory, instant) for memory in memories]

    def revisions(
        self, identity: Identity, memory_id: str, after_number: int, limit: int, instant: datetime
    ) -> list[ShownRevision]:
        """Up to `limit` revisions of a visible memory numbered above `after_number`, shown at
        `instant`."""
        memory = self._get(identity, memory_id)
        kept = [r for r in memory.revisions if r.number > after_number][:limit]
        return [show_revision(revision, instant) for revision in kept]

    def export(
        self,
        identity: Identity,
        user_id: str | None,
        include_deleted: bool,
        since: datetime | None,
    ) -> Iterator[dict[str, Any]]:
        """The export's records, read a page per read unit of work as the stream is consumed
        (so no transaction stays open while the caller reads). Raises before yielding
        anything when the caller may not export `user_id` (None: the whole tenant)."""
        return self._exports.records(
            lambda work: self._tx.read(identity, work),
            identity,
            user_id,
            include_deleted,
            since,
            utcnow(),
        )
