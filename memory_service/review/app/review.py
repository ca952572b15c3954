"""Document facts and the review queue. ReportDocumentVersion and ResolveConflict: writes
under the request id (`domain.documents`, `domain.review` decide); the queue: one read unit of
work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from memory_service.documents.public import DocumentReport, DocumentUseCases
from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Identity, Memory, Revision, utcnow
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.review.domain.review import Position, ReviewItem, ReviewQuery, ReviewUseCases

A = TypeVar("A")


@dataclass(eq=False)
class ReviewCommands:
    _tx: Transactions
    _documents: DocumentUseCases
    _review: ReviewUseCases

    def report_version(
        self,
        identity: Identity,
        key: RequestKey[A],
        uri: str,
        version: str,
        present: Callable[[DocumentReport], A],
    ) -> A:
        """Records a document's current version and flags what rests on another one."""

        def work(uow: UnitOfWork) -> Answer[A]:
            report = self._documents.report_version(uow, identity, uri, version, utcnow())
            return Answer(present(report))

        return self._tx.write(identity, key, work)

    def resolve_conflict(
        self,
        identity: Identity,
        key: RequestKey[A],
        memory_id: str,
        kept_id: str,
        expected_version: int | None,
        present: Callable[[Memory, Revision, datetime], A],
    ) -> A:
        """Closes `memory_id` in favour of `kept_id`; the answer shows the closed memory, so
        deleting it redacts the stored answer."""

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            memory, closing = self._review.resolve_conflict(
                uow, identity, memory_id, kept_id, expected_version, now
            )
            return Answer(present(memory, closing, now), shows=memory.id)

        return self._tx.write(identity, key, work)


@dataclass(eq=False)
class ReviewQueries:
    _tx: Transactions
    _review: ReviewUseCases

    def queue(
        self,
        identity: Identity,
        query: ReviewQuery,
        after: Position | None,
        limit: int,
        now: datetime,
    ) -> tuple[list[ReviewItem], Position | None]:
        """A page of the queue in its order, and where the next page starts (None when done)."""
        return self._tx.read(
            identity,
            lambda uow: self._review.queue(uow, identity, query, after, limit, now),
        )
