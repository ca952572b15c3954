"""The CreateImportBatch use case: the batch is stored (and parsed at once when small) in one
transaction under the request id; after the commit the background worker is told, and memory
the archive held is handed back to the system."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memory_service.app.transactions import Answer, RequestKey, Transactions
from memory_service.domain.importing.service import ImportUseCases
from memory_service.domain.model import ArchiveFormat, Identity, ImportBatch, ImportState, utcnow
from memory_service.domain.ports import ImportWork, UnitOfWork

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
    ) -> A:
        """`present(batch, already_imported)` is the answer stored under the request id."""
        queued: list[str] = []

        def work(uow: UnitOfWork) -> Answer[A]:
            batch, again = self._imports.submit(uow, identity, archive_format, archive, utcnow())
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
