"""The composition root: builds the database, adapters, use cases, workers and the gRPC server
from the settings, starts them in order and stops them in reverse (docs/architecture.md)."""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass
from datetime import timedelta

import grpc
from grpc_health.v1 import health
from opentelemetry.sdk.trace import TracerProvider
from sqlalchemy import Engine

from crmmem_runtime.listen import listen
from crmmem_runtime.telemetry import exporting_traces
from memory_service.access.app.access import AccessCommands, AccessQueries
from memory_service.access.domain.access import AccessUseCases
from memory_service.access.transport.access_servicer import AccessServicer
from memory_service.config import Settings
from memory_service.context.app.context import BuildContext, ContextCommands, OverrideQueries
from memory_service.context.domain.context import ContextBuilder
from memory_service.context.domain.overrides import OverrideUseCases
from memory_service.context.domain.proposals import ProposalUseCases
from memory_service.context.transport.context_servicer import ContextServicer
from memory_service.documents.domain.documents import DocumentUseCases
from memory_service.imports.app.imports import ImportCommands, ImportQueries, SubmitImport
from memory_service.imports.domain.service import ImportUseCases
from memory_service.imports.transport.import_servicer import ImportServicer
from memory_service.imports.workers.imports import ImportRunner, release_freed_memory
from memory_service.kernel.adapters.secret_scanning import DetectSecretsScanner
from memory_service.kernel.app.transactions import Transactions
from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import utcnow
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.kernel.storage import migrate
from memory_service.kernel.storage.checkpoint import WalCheckpointer
from memory_service.kernel.storage.idempotency import purge_idempotency_keys
from memory_service.kernel.transport.auth import TokenAuthenticator
from memory_service.kernel.transport.readiness import DatabaseWatch
from memory_service.memories.adapters.retrieval_client import CircuitBreaker, RetrievalClient
from memory_service.memories.adapters.thesaurus import open_thesaurus
from memory_service.memories.app.index_watch import IndexWatch
from memory_service.memories.app.memories import MemoryCommands, MemoryQueries
from memory_service.memories.app.recall import Recaller, RecallMemories, ReplyMargin
from memory_service.memories.domain import grounding
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.memories.domain.recall import RecallUseCases
from memory_service.memories.domain.receipts import RetentionPolicy
from memory_service.memories.storage.memories import purge_deletion_markers
from memory_service.memories.workers.outbox import OutboxWorker
from memory_service.memories.workers.usage import UsageRecorder
from memory_service.review.app.review import ReviewCommands, ReviewQueries
from memory_service.review.domain.review import ReviewUseCases
from memory_service.server import SERVICE_NAMES, MemoryService, Servicers, grpc_server
from memory_service.tasks.app.tasks import TaskCommands, TaskQueries
from memory_service.tasks.domain.tasks import TaskUseCases
from memory_service.tasks.transport.task_servicer import TaskServicer
from memory_service.tasks.workers.retention import TaskHistoryPurge
from memory_service.transcripts.app.transcripts import TranscriptCommands, TranscriptQueries
from memory_service.transcripts.domain.transcripts import TranscriptUseCases
from memory_service.transcripts.transport.transcript_servicer import TranscriptServicer
from memory_service.unit_of_work import SqlUnitOfWorkFactory, create_database_engine, trace_sql

log = logging.getLogger(__name__)


@dataclass
class RunningServer:
    server: grpc.Server
    port: int
    health: health.HealthServicer
    engine: Engine
    search: RetrievalClient | None
    worker: OutboxWorker | None
    imports: ImportRunner
    database_watch: DatabaseWatch
    watch: IndexWatch | None = None
    usage: UsageRecorder | None = None
    task_purge: TaskHistoryPurge | None = None
    checkpointer: WalCheckpointer | None = None

    def stop(self, grace: float, drain: float = 0.0) -> None:
        """Report NOT_SERVING first and keep answering for `drain` seconds, so balancers and
        health pollers see it and move traffic away; then refuse new calls and finish
        in-flight ones within `grace`."""
        self.health.enter_graceful_shutdown()
        self.database_watch.stop()
        time.sleep(drain)
        self.server.stop(grace).wait()
        self.imports.stop()
        if self.task_purge is not None:
            self.task_purge.stop()
        if self.usage is not None:
            self.usage.stop()  # writes the uses noted since the last flush
        if self.worker is not None:
            self.worker.stop()
        if self.watch is not None:
            self.watch.close()
        if self.search is not None:
            self.search.close()
        if self.checkpointer is not None:
            self.checkpointer.stop()
        self.engine.dispose()


def database(settings: Settings, tracer_provider: TracerProvider | None) -> Engine:
    """The engine, with the schema current (migrated here only when MEMORY_AUTO_MIGRATE is on)
    or ahead, from a newer release (`migrate.prepare`)."""
    engine = create_database_engine(settings.database_url)
    if tracer_provider is not None and exporting_traces(settings):
        trace_sql(engine, tracer_provider)
    migrate.prepare(engine, settings.auto_migrate)
    return engine


def forget_expired(units: SqlUnitOfWorkFactory, settings: Settings) -> None:
    ttl = timedelta(hours=settings.idempotency_ttl_hours)
    with units.all_tenants() as everyone:
        purged = purge_idempotency_keys(everyone, utcnow() - ttl)
        markers = purge_deletion_markers(
            everyone, utcnow() - timedelta(days=settings.marker_retention_days)
        )
    if purged or markers:
        log.info("forgot %d request ids and %d expired deletion markers", purged, markers)


def settle_heap() -> None:
    """Moves what start-up allocated (modules, table metadata, protobuf descriptors, about 140k
    objects) out of the collector's reach. A full collection otherwise walks all of it, a pause
    of tens of milliseconds inside whichever call allocated the object that triggered it: the
    tail of every latency. Nothing of it is garbage; later objects are collected as before."""
    gc.collect()
    gc.freeze()


def build_server(
    settings: Settings, tracer_provider: TracerProvider | None = None
) -> RunningServer:
    """`tracer_provider`: the one that records the calls' server and client spans; None (traces
    not exported) records none, and the calls skip their bookkeeping.

    One named step per part (storage, search, the request path, use cases, servicers, start),
    each a screen long, so that wiring a feature touches the one step it belongs to."""
    storage = wire_storage(settings, tracer_provider)
    units = storage.units
    authenticator = TokenAuthenticator(
        settings.jwt_secret,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_max_lifetime_seconds,
    )
    policy = AccessPolicy(GrantTableAuthorizer())
    search = wire_search(settings, units, tracer_provider)
    path = wire_request_path(settings, units, search, policy)
    cases = wire_use_cases(settings, policy)
    import_runner = ImportRunner(
        units.import_queue(),
        units,
        cases.imports,
        settings.import_poll_seconds,
        settings.import_lease_seconds,
        search.worker.work_queued if search.worker is not None else lambda: None,
    )
    servicers = wire_servicers(authenticator, policy, path, cases, search, import_runner, settings)
    workers = Workers(import_runner, path.usage, cases.tasks.history_retention)
    return start_serving(settings, tracer_provider, storage, servicers, search, workers)


@dataclass(frozen=True)
class Storage:
    """The database engine and the units of work over it."""

    engine: Engine
    units: SqlUnitOfWorkFactory


def wire_storage(settings: Settings, tracer_provider: TracerProvider | None) -> Storage:
    """The engine with its schema checked, the units of work over it, and what had expired by
    now (request ids past their time to live, old deletion markers) forgotten."""
    engine = database(settings, tracer_provider)
    units = SqlUnitOfWorkFactory(engine, check_scope=settings.check_tenant_scope)
    forget_expired(units, settings)
    return Storage(engine, units)


@dataclass(frozen=True)
class SearchParts:
    """The sidecar client, the outbox worker that delivers index writes to it, and the index
    watch; each None when not configured (no sidecar address, or the outbox worker off)."""

    client: RetrievalClient | None
    worker: OutboxWorker | None
    watch: IndexWatch | None


def wire_search(
    settings: Settings, units: SqlUnitOfWorkFactory, tracer_provider: TracerProvider | None
) -> SearchParts:
    """The sidecar client behind its breaker; the outbox worker, woken when the sidecar serves
    again; and the watch that tells recall when the index lacks memories."""
    if not settings.retrieval_address:
        return SearchParts(None, None, None)
    client = RetrievalClient(
        settings.retrieval_address,
        settings.retrieval_secret,
        settings.recall_timeout_seconds,
        CircuitBreaker(
            min_calls=settings.breaker_min_calls,
            failure_rate=settings.breaker_failure_rate,
            window_seconds=settings.breaker_window_seconds,
            reset_seconds=settings.breaker_reset_seconds,
            misses_in_a_row=settings.breaker_misses_in_a_row,
        ),
        tracer_provider,
    )
    worker = None
    if settings.outbox_worker:
        worker = OutboxWorker(
            units.outbox_store(), units, client, poll_seconds=settings.outbox_poll_seconds
        )
        client.on_serving(worker.wake)
    watch = IndexWatch(
        client,
        units,
        settings.index_check_seconds,
        on_queued=worker.wake if worker is not None else lambda: None,
    )
    return SearchParts(client, worker, watch)


@dataclass(frozen=True)
class RequestPath:
    """What the app entries run through: the transactions (units of work, request ids, the
    outbox worker woken after a commit), the usage recorder (None when usage tracking is off)
    and recall, shared by RecallMemories and BuildContext."""

    transactions: Transactions
    usage: UsageRecorder | None
    recaller: Recaller


def wire_request_path(
    settings: Settings, units: SqlUnitOfWorkFactory, search: SearchParts, policy: AccessPolicy
) -> RequestPath:
    transactions = Transactions(
        units,
        timedelta(hours=settings.idempotency_ttl_hours),
        search.worker.work_queued if search.worker is not None else lambda: None,
    )
    usage = (
        UsageRecorder(units.usage_store(), settings.usage_flush_seconds)
        if settings.usage_tracking
        else None
    )
    recaller = Recaller(
        transactions,
        RecallUseCases(policy),
        search.client,
        ReplyMargin(settings.recall_margin_seconds),
        search.watch,
        usage,
    )
    return RequestPath(transactions, usage, recaller)


@dataclass(frozen=True)
class UseCases:
    """The domain's use cases, each built once and shared by every app entry that runs it."""

    secrets: SecretDetector
    memories: MemoryUseCases
    overrides: OverrideUseCases
    tasks: TaskUseCases
    imports: ImportUseCases
    review: ReviewUseCases
    transcript: TranscriptUseCases
    access: AccessUseCases
    proposals: ProposalUseCases


def wire_use_cases(settings: Settings, policy: AccessPolicy) -> UseCases:
    secrets = SecretDetector(DetectSecretsScanner())  # one secret rule for every write path
    grounding.use_thesaurus(open_thesaurus())  # paraphrases through the Moby thesaurus
    memories = MemoryUseCases(
        policy,
        retention=RetentionPolicy(settings.backup_retention_days, settings.marker_retention_days),
        secrets=secrets,
    )
    overrides = OverrideUseCases(policy, secrets)
    return UseCases(
        secrets=secrets,
        memories=memories,
        overrides=overrides,
        tasks=TaskUseCases(secrets, timedelta(days=settings.task_history_days)),
        imports=ImportUseCases(memories, secrets),
        review=ReviewUseCases(policy, memories),
        transcript=TranscriptUseCases(),
        access=AccessUseCases(policy),
        proposals=ProposalUseCases(
            policy, memories, overrides, settings.apply_user_corrections, secrets=secrets
        ),
    )


def wire_servicers(
    authenticator: TokenAuthenticator,
    policy: AccessPolicy,
    path: RequestPath,
    cases: UseCases,
    search: SearchParts,
    import_runner: ImportRunner,
    settings: Settings,
) -> Servicers:
    """One servicer per gRPC service, each over the app entries of its calls."""
    transactions = path.transactions
    return Servicers(
        memory=MemoryService(
            authenticator,
            MemoryCommands(transactions, cases.memories, searching=search.client is not None),
            MemoryQueries(transactions, cases.memories),
            RecallMemories(path.recaller),
            ReviewCommands(transactions, DocumentUseCases(cases.secrets), cases.review),
            ReviewQueries(transactions, cases.review),
        ),
        transcript=TranscriptServicer(
            authenticator,
            TranscriptCommands(transactions, cases.transcript),
            TranscriptQueries(transactions, cases.transcript),
        ),
        access=AccessServicer(
            authenticator,
            AccessCommands(transactions, cases.access),
            AccessQueries(transactions, cases.access),
        ),
        context=ContextServicer(
            authenticator,
            BuildContext(
                transactions,
                ContextBuilder(policy, cases.overrides, cases.tasks),
                path.recaller,
                path.usage,
            ),
            ContextCommands(transactions, cases.proposals, cases.overrides),
            OverrideQueries(transactions, cases.overrides),
        ),
        imports=ImportServicer(
            authenticator,
            SubmitImport(transactions, cases.imports, import_runner, release_freed_memory),
            ImportCommands(transactions, cases.imports, settings.backup_retention_days),
            ImportQueries(transactions, cases.imports),
        ),
        tasks=TaskServicer(
            authenticator,
            TaskCommands(transactions, cases.tasks),
            TaskQueries(transactions, cases.tasks),
        ),
    )


@dataclass(frozen=True)
class Workers:
    """The background work built before the server starts: the import runner (which SubmitImport
    also hands batches to), the usage recorder (None when off) and how long ended tasks stay."""

    import_runner: ImportRunner
    usage: UsageRecorder | None
    task_history: timedelta


def start_serving(
    settings: Settings,
    tracer_provider: TracerProvider | None,
    storage: Storage,
    servicers: Servicers,
    search: SearchParts,
    workers: Workers,
) -> RunningServer:
    """Listens and serves, then starts the background work; `RunningServer.stop` stops it all.
    The heap is settled just before serving, when everything start-up allocates exists."""
    server, health_servicer = grpc_server(servicers, settings.max_workers, tracer_provider)
    port = listen(server, settings.listen)
    settle_heap()
    server.start()
    if search.client is not None:
        search.client.start()
    database_watch = DatabaseWatch(
        storage.units.reachable,
        health_servicer,
        ("", *SERVICE_NAMES),
        settings.database_probe_seconds,
    )
    database_watch.start()
    if search.worker is not None:
        search.worker.start()
    if settings.import_worker:
        workers.import_runner.start()
    if workers.usage is not None:
        workers.usage.start()
    task_purge = TaskHistoryPurge(
        storage.units.purge_ended_tasks, workers.task_history, settings.task_purge_seconds
    )
    task_purge.start()
    checkpointer = (
        WalCheckpointer(storage.engine) if WalCheckpointer.wanted(storage.engine) else None
    )
    if checkpointer is not None:
        checkpointer.start()
    return RunningServer(
        server,
        port,
        health_servicer,
        storage.engine,
        search.client,
        search.worker,
        workers.import_runner,
        database_watch,
        search.watch,
        workers.usage,
        task_purge,
        checkpointer,
    )
