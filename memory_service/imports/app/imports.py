"""The import service's write use cases. CreateImportBatch: the batch is stored (and parsed at
once when small) in one transaction under the request id; after the commit the background
worker is told, and memory the archive held is handed back to the system. Then review
(confirm, reject) and deletion of a batch; reading a batch and its items (`ImportQueries`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from memory_service.imports.domain.service import ImportUseCases
from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import (
    ArchiveFormat,
    Identity,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    Memory,
    MemoryKind,
    RestoreMode,
    Revision,
    utcnow,
)
from memory_service.kernel.domain.ports import ImportWork, UnitOfWork
from memory_service.memories.public import DeletionReceipt

A = TypeVar("A")


class SubmitImport:
    def __init__(
        self,
        transactions: Transactions,
        imports: ImportUseCases,
        worker: ImportWork,
        release_memory: Callable[[], None] = lambda: None,
    ) -> None:
        self._tx = transactions
        self._imports = imports
        self._worker = worker
        self._release_memory = release_memory

    def __call__(
        self,
        identity: Identity,
        key: RequestKey[A],
        archive_format: ArchiveFormat,
        archive: bytes,
        present: Callable[[ImportBatch, bool], A],
        restore_mode: RestoreMode = RestoreMode.CLEAN,
    ) -> A:
        """`present(batch, already_imported)` is the answer stored under the request id;
        `restore_mode` says how a restore meets the tenant's data."""
        queued: list[str] = []

        def work(uow: UnitOfWork) -> Answer[A]:
            batch, again = self._imports.submit(
                uow, identity, archive_format, archive, utcnow(), restore_mode
            )
            if batch.state is ImportState.PENDING:
                queued.append(batch.id)
            return Answer(present(batch, again))

        try:
            reply = self._tx.write(identity, key, work)
        finally:
            self._release_memory()
        for batch_id in queued:  # committed: any worker may take it now
            self._worker.submit(identity.tenant_id, batch_id)
        return reply


@dataclass(eq=False)
class ImportCommands:
    """Review and deletion of imported items, each under the request id in one transaction."""

    _tx: Transactions
    _imports: ImportUseCases
    _backup_days: int

    def delete_batch(
        self,
        identity: Identity,
        key: RequestKey[A],
        batch_id: str,
        present: Callable[[int, DeletionReceipt], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            removed, receipt = self._imports.delete_batch(
                uow, identity, batch_id, utcnow(), self._backup_days
            )
            return Answer(present(removed, receipt))

        return self._tx.write(identity, key, work)

    def confirm_item(
        self,
        identity: Identity,
        key: RequestKey[A],
        item_id: str,
        memory: tuple[str, str, MemoryKind],
        value: str,
        present: Callable[[ImportItem, Memory, Revision, datetime], A],
    ) -> A:
        """The item becomes an ACTIVE revision of the caller's own memory (`memory` is its key,
        key context and kind)."""
        memory_key, key_context, kind = memory

        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            item, confirmed, revision = self._imports.confirm(
                uow, identity, item_id, memory_key, key_context, kind, value, now
            )
            return Answer(present(item, confirmed, revision, now), confirmed.id)

        return self._tx.write(identity, key, work)

    def reject_item(
        self,
        identity: Identity,
        key: RequestKey[A],
        item_id: str,
        present: Callable[[ImportItem], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            item = self._imports.reject(uow, identity, item_id)
            return Answer(present(item), item.id)

        return self._tx.write(identity, key, work)


@dataclass(eq=False)
class ImportQueries:
    """Reading the caller's own batches and their items."""

    _tx: Transactions
    _imports: ImportUseCases

    def batch(self, identity: Identity, batch_id: str) -> ImportBatch:
        return self._tx.read(identity, lambda uow: self._imports.get(uow, identity, batch_id))

    def items(
        self,
        identity: Identity,
        batch_id: str,
        outcome: ItemOutcome | None,
        after_ordinal: int,
        limit: int,
    ) -> list[ImportItem]:
        """`outcome` None: every item."""
        return self._tx.read(
            identity,
            lambda uow: self._imports.items(uow, identity, batch_id, outcome, after_ordinal, limit),
        )
