"""One SQL transaction over one tenant. Write transactions take SQLite's write lock up front
(BEGIN IMMEDIATE) so two writers queue instead of deadlocking on a lock upgrade.

Connection-level failures become `DatabaseUnavailable` (nothing committed) or, when they strike
during COMMIT, `OutcomeUnknown`: both are retryable, and only a request_id makes the second safe."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from memory_service.access.storage.access import SqlCustomerRepository, SqlGrantRepository
from memory_service.context.storage.overrides import SqlOverrideRepository
from memory_service.documents.storage.documents import SqlDocumentRepository
from memory_service.imports.storage.archive import SqlArchiveRepository
from memory_service.imports.storage.imports import SqlImportQueue, SqlImportRepository
from memory_service.kernel.domain.errors import DatabaseUnavailable, OutcomeUnknown, WriteConflict
from memory_service.kernel.storage.idempotency import SqlIdempotencyRepository
from memory_service.kernel.storage.scoped import (
    EVERY_TENANT,
    SCOPE_OPTION,
    AllTenants,
    TenantScope,
    guard_tenant_scope,
)
from memory_service.memories.storage.memories import SqlMemoryRepository
from memory_service.memories.storage.outbox import SqlOutboxRepository, SqlOutboxStore
from memory_service.memories.storage.usage import SqlUsageRepository, SqlUsageStore
from memory_service.review.storage.review import SqlReviewRepository
from memory_service.tasks.storage.tasks import SqlTaskRepository, purge_ended_tasks
from memory_service.transcripts.storage.transcripts import SqlTranscriptRepository

READ_ONLY = "crmmem_read_only"
BEGIN = "crmmem_begin"  # the BEGIN statement a SQLite connection's next transaction starts with
# As long as SQLite's busy timeout (unit_of_work's PRAGMA): a writer queued in the process
# gives up when it would have given up queued in SQLite.
WRITER_WAIT_SECONDS = 30.0


def create_database_engine(url: str) -> Engine:
    """Statement errors never carry their parameters: those are memory text and may reach logs."""
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(
        url,
        pool_size=10,
        max_overflow=20,
        pool_pre_ping=True,
        hide_parameters=True,
        pool_timeout=10,
        # An unreachable host fails the call (and the health probe) in seconds, not minutes.
        connect_args={"connect_timeout": 5},
    )


def unreachable(error: BaseException) -> bool:
    """A failure of the connection rather than of the statement: server down, connection lost,
    no connection free in the pool, or SQLite still locked after its busy timeout."""
    if isinstance(error, OperationalError | InterfaceError | PoolTimeout):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


def _sqlite_engine(url: str) -> Engine:
    path = url.split("///", 1)[-1]
    if path and path != ":memory:":
        Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for file in (path, f"{path}-wal", f"{path}-shm"):
            if Path(file).exists():
                Path(file).chmod(0o600)  # memory text: never readable by other local users
    engine = create_engine(
        url, connect_args={"check_same_thread": False, "timeout": 30}, hide_parameters=True
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        # Freed pages are zeroed: a dropped import archive (or any deleted memory text) leaves
        # no bytes in the file, whatever default the SQLite library was built with.
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.connection.info[BEGIN] = "BEGIN" if read_only else "BEGIN IMMEDIATE"

    def _begin(dbapi_connection: Any) -> None:
        """The BEGIN chosen above, sent on the driver's cursor (as the dialect's own BEGIN, so a
        locked database fails like any statement): `exec_driver_sql` would cost more than the rest
        of an empty transaction."""
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(dbapi_connection.info.pop(BEGIN, "BEGIN IMMEDIATE"))
        finally:
            cursor.close()

    engine.dialect.do_begin = _begin  # type: ignore[method-assign]  # this engine's dialect only
    return engine


def trace_sql(engine: Engine, tracer_provider: TracerProvider) -> None:
    """A client span per statement, so a trace shows the SQL that validated a recall."""
    tracer = tracer_provider.get_tracer("memory_service.storage")
    system = "postgresql" if engine.dialect.name == "postgresql" else engine.dialect.name

    @event.listens_for(engine, "before_cursor_execute")
    def _start(
        conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: Any
    ) -> None:
        operation = statement.split(None, 1)[0].upper() if statement.strip() else "SQL"
        span = tracer.start_span(f"SQL {operation}", kind=SpanKind.CLIENT)
        span.set_attribute("db.system", system)
        span.set_attribute("db.statement", statement[:1000])  # parameters are never recorded
        conn.info.setdefault("crmmem_spans", []).append(span)

    @event.listens_for(engine, "after_cursor_execute")
    def _end(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: Any) -> None:
        spans = conn.info.get("crmmem_spans")
        if spans:
            spans.pop().end()

    @event.listens_for(engine, "handle_error")
    def _failed(context: Any) -> None:
        spans = context.connection.info.get("crmmem_spans") if context.connection else None
        if spans:
            span = spans.pop()
            span.set_status(Status(StatusCode.ERROR, type(context.original_exception).__name__))
            span.end()


class SqlUnitOfWork:
    def __init__(
        self, session: Session, tenant_id: str, *, serialised: bool = False, read_only: bool = False
    ) -> None:
        """`serialised`: a write that holds the database's only writer lock (SQLite).
        `read_only`: a read, whose transaction is ended by its factory, never committed."""
        self.tenant_id = tenant_id
        self.session = session
        self._read_only = read_only
        self.memories = SqlMemoryRepository(session, tenant_id)
        self.transcript = SqlTranscriptRepository(session, tenant_id)
        self.grants = SqlGrantRepository(session, tenant_id)
        self.idempotency = SqlIdempotencyRepository(session, tenant_id, serialised=serialised)
        self.outbox = SqlOutboxRepository(session, tenant_id)
        self.overrides = SqlOverrideRepository(session, tenant_id)
        self.customers = SqlCustomerRepository(session, tenant_id)
        self.imports = SqlImportRepository(session, tenant_id)
        self.documents = SqlDocumentRepository(session, tenant_id)
        self.review = SqlReviewRepository(session, tenant_id)
        self.usage = SqlUsageRepository(session, tenant_id)
        self.archive = SqlArchiveRepository(session, tenant_id)
        self.tasks = SqlTaskRepository(session, tenant_id)

    def commit(self) -> None:
        if self._read_only:
            raise RuntimeError("a read unit of work does not commit: open it with write=True")
        self.idempotency.flush()
        self.outbox.flush()  # raises WriteConflict on a unique clash, before COMMIT
        try:
            self.session.flush()  # a failure here is before COMMIT: nothing was written
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error
        try:
            self.session.commit()
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error
        except Exception as error:
            # COMMIT was sent, or may have been: only the database knows whether it applied.
            raise OutcomeUnknown() from error


class SqlUnitOfWorkFactory:
    """Units of work over one tenant, and the one named unit of work across all of them.

    With `check_scope` every statement a unit of work sends is checked against its tenant
    (`kernel/storage/scoped.py`); the tests and their servers run so."""

    def __init__(self, engine: Engine, *, check_scope: bool = False) -> None:
        self.engine = engine
        self._read_engine = engine.execution_options(**{READ_ONLY: True})
        self._check_scope = check_scope
        if check_scope:
            guard_tenant_scope(engine)
        # SQLite has one writer at a time, and a writer that finds the lock taken sleeps in
        # growing steps (up to 100 ms) before it looks again, so under load writers would spend
        # more time asleep than writing. This process's writers queue here instead and start the
        # moment the previous one ends; other processes still meet SQLite's busy timeout.
        self._writers = threading.RLock() if engine.dialect.name == "sqlite" else None

    def _bind(self, engine: Engine, scope: TenantScope) -> Engine:
        """The connection carries its scope only while it is checked: nothing changes otherwise."""
        return engine.execution_options(**{SCOPE_OPTION: scope}) if self._check_scope else engine

    @contextmanager
    def _writing(self) -> Iterator[None]:
        if self._writers is None:
            yield
            return
        if not self._writers.acquire(timeout=WRITER_WAIT_SECONDS):  # read at call time (tests)
            raise DatabaseUnavailable()
        try:
            yield
        finally:
            self._writers.release()

    @contextmanager
    def __call__(self, tenant_id: str, *, write: bool) -> Iterator[SqlUnitOfWork]:
        if not write:
            with self._reading(tenant_id) as uow:
                yield uow
            return
        bind = self._bind(self.engine, TenantScope(tenant_id))
        with (
            self._writing(),
            Session(bind=bind, expire_on_commit=False, autoflush=False) as session,
        ):
            try:
                with _unreachable_is_unavailable():
                    yield SqlUnitOfWork(session, tenant_id, serialised=self._writers is not None)
            finally:
                _rollback(session)

    @contextmanager
    def _reading(self, tenant_id: str) -> Iterator[SqlUnitOfWork]:
        """A read: its transaction is begun on the connection here and ended by closing the
        connection, one ROLLBACK that also stands for the pool's reset. (Through a Session
        that owned the transaction, the session's rollback and the pool's reset each sent
        one: a round trip more on PostgreSQL.) Whatever happens inside, the connection goes
        back to the pool with no transaction open, or is discarded."""
        bind = self._bind(self._read_engine, TenantScope(tenant_id))
        with _unreachable_is_unavailable():
            connection = bind.connect()
            try:
                connection.begin()
            except BaseException:
                _close(connection)
                raise
        try:
            # The session joins the connection's transaction and never ends it itself.
            session = Session(
                bind=connection,
                expire_on_commit=False,
                autoflush=False,
                join_transaction_mode="rollback_only",
            )
            try:
                with _unreachable_is_unavailable():
                    yield SqlUnitOfWork(session, tenant_id, read_only=True)
            finally:
                session.close()
        finally:
            _close(connection)

    def reachable(self) -> bool:
        """Whether the database answers `SELECT 1` now: the health probe."""
        try:
            with self._read_engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1")
            return True
        except (DBAPIError, PoolTimeout):
            return False

    @contextmanager
    def all_tenants(self) -> Iterator[AllTenants]:
        """One transaction across every tenant, committed on leaving: only for the outbox
        drain, the import lease and retention purges. Connection failures are told apart as in
        a unit of work, so the workers can tell an outage (and say so once) from a fault of
        their own."""
        bind = self._bind(self.engine, EVERY_TENANT)
        with self._writing(), Session(bind=bind, expire_on_commit=False) as session:
            try:
                with _unreachable_is_unavailable():
                    yield AllTenants(session)
                    session.flush()
                try:
                    session.commit()
                except (DBAPIError, PoolTimeout) as error:
                    if unreachable(error):
                        raise OutcomeUnknown() from error
                    raise
            finally:
                _rollback(session)

    def outbox_store(self) -> SqlOutboxStore:
        return SqlOutboxStore(self.all_tenants)

    def import_queue(self) -> SqlImportQueue:
        return SqlImportQueue(self.all_tenants)

    def usage_store(self) -> SqlUsageStore:
        return SqlUsageStore(self.all_tenants)

    def purge_ended_tasks(self, ended_before: datetime) -> int:
        """Tasks of every tenant that ended before then, with their checkpoints."""
        with self.all_tenants() as everyone:
            return purge_ended_tasks(everyone, ended_before)


@contextmanager
def _unreachable_is_unavailable() -> Iterator[None]:
    """A connection-level failure before COMMIT: nothing was written."""
    try:
        yield
    except (DBAPIError, PoolTimeout) as error:
        if unreachable(error):
            raise DatabaseUnavailable() from error
        raise


def _close(connection: Connection) -> None:
    """Roll back and return to the pool (one ROLLBACK); a lost connection is discarded and, as
    in `_rollback`, is not the caller's error."""
    try:
        connection.close()
    except DBAPIError as error:
        if not unreachable(error):
            raise


def _rollback(session: Session) -> None:
    """Roll back what did not commit. On a lost connection there is nothing to roll back (the
    server discards the transaction), so that failure is not the caller's error."""
    if not session.in_transaction():
        return
    try:
        session.rollback()
    except DBAPIError as error:
        if not unreachable(error):
            raise
