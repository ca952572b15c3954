"""The BuildContext use case: the context and, when asked, recall within the context's scopes,
both in one read transaction. The domain builds the context; recall validates the candidates;
the transport only converts the result."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry import trace

from memory_service.app.recall import Outcome, Recaller, annotate
from memory_service.app.transactions import Transactions
from memory_service.domain.context import Context, ContextBuilder, ContextRequest, scope_selectors
from memory_service.domain.model import Identity, utcnow
from memory_service.domain.ports import NoUsageLog, UnitOfWork, UsageLog


@dataclass(frozen=True)
class BuiltContext:
    context: Context
    recall: Outcome | None  # None: no query was asked


class BuildContext:
    def __init__(
        self,
        transactions: Transactions,
        builder: ContextBuilder,
        recaller: Recaller,
        usage: UsageLog | None = None,
    ) -> None:
        self._tx = transactions
        self._builder = builder
        self._recaller = recaller
        self._usage = usage or NoUsageLog()

    def __call__(
        self,
        identity: Identity,
        request: ContextRequest,
        query: str,
        limit: int,
        deadline: float | None,
    ) -> BuiltContext:
        """`query` empty: no recall. `deadline` is a `time.monotonic()` instant."""

        def work(uow: UnitOfWork) -> BuiltContext:
            built = self._builder.build(uow, identity, request)
            if not query:
                return BuiltContext(built, None)
            outcome = self._recaller.run(
                uow,
                identity,
                query,
                limit,
                request.instant,
                deadline,
                within=built.allowed,
                scopes=scope_selectors(built.allowed),
            )
            return BuiltContext(built, outcome)

        result = self._tx.read(identity, work)
        used = (item.memory.id for item in result.context.memories)
        self._usage.note(identity.tenant_id, used, utcnow())
        span = trace.get_current_span()
        span.set_attribute("crmmem.context.memories", len(result.context.memories))
        span.set_attribute("crmmem.context.conflicts", len(result.context.conflicts))
        span.set_attribute("crmmem.context.excluded", len(result.context.excluded))
        if result.recall is not None:
            annotate(result.recall)
        return result
