"""The context service's use cases. BuildContext: the context in one read transaction and, when
asked, recall within the context's scopes after it (the search holds no database connection;
recall validates the candidates in a read of its own); the transport only converts the result.
ProposeMemory and CreateOverride: writes under the request id. Reading overrides:
`OverrideQueries`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from opentelemetry import trace

from memory_service.context.domain.context import (
    Context,
    ContextBuilder,
    ContextRequest,
    scope_selectors,
)
from memory_service.context.domain.overrides import Expiry, OverrideDraft, OverrideUseCases
from memory_service.context.domain.proposals import Outcome as ProposalOutcome
from memory_service.context.domain.proposals import Proposal, ProposalUseCases
from memory_service.kernel.app.transactions import Answer, RequestKey, Transactions
from memory_service.kernel.domain.model import Identity, Override, ParentType, utcnow
from memory_service.kernel.domain.ports import NoUsageLog, UnitOfWork, UsageLog
from memory_service.memories.public import Outcome, Recaller, annotate

A = TypeVar("A")


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
        arrived = time.monotonic()
        built = self._tx.read(identity, lambda uow: self._builder.build(uow, identity, request))
        outcome = None
        if query:
            outcome = self._recaller.run(
                identity,
                query,
                limit,
                request.instant,
                deadline,
                within=built.allowed,
                scopes=scope_selectors(built.allowed),
                arrived=arrived,
            )
        result = BuiltContext(built, outcome)
        used = (item.memory.id for item in result.context.memories)
        self._usage.note(identity.tenant_id, used, utcnow())
        span = trace.get_current_span()
        span.set_attribute("crmmem.context.memories", len(result.context.memories))
        span.set_attribute("crmmem.context.conflicts", len(result.context.conflicts))
        span.set_attribute("crmmem.context.excluded", len(result.context.excluded))
        if result.recall is not None:
            annotate(result.recall)
        return result


@dataclass(eq=False)
class ContextCommands:
    """ProposeMemory and CreateOverride: the unit of work under the request id, the domain's
    decision (`domain.proposals`, `domain.overrides`), the answer stored, commit."""

    _tx: Transactions
    _proposals: ProposalUseCases
    _overrides: OverrideUseCases

    def propose(
        self,
        identity: Identity,
        key: RequestKey[A],
        proposal: Proposal,
        present: Callable[[ProposalOutcome, datetime], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            now = utcnow()
            outcome = self._proposals.propose(uow, identity, proposal, now)
            trace.get_current_span().set_attribute("crmmem.proposal.decision", outcome.decision)
            shows = outcome.memory.id if outcome.memory is not None else ""
            return Answer(present(outcome, now), shows)

        return self._tx.write(identity, key, work)

    def create_override(
        self,
        identity: Identity,
        key: RequestKey[A],
        parent: tuple[ParentType, str],
        draft: OverrideDraft,
        expiry: Expiry,
        present: Callable[[Override], A],
    ) -> A:
        def work(uow: UnitOfWork) -> Answer[A]:
            override = self._overrides.create(uow, identity, parent, draft, expiry, utcnow())
            return Answer(present(override))

        return self._tx.write(identity, key, work)

    def delete_override(
        self,
        identity: Identity,
        key: RequestKey[A],
        name: tuple[ParentType, str, str],
        present: Callable[[Override], A],
    ) -> A:
        """Ends an override at once (`name`: parent type, parent id, override id)."""

        def work(uow: UnitOfWork) -> Answer[A]:
            return Answer(present(self._overrides.delete(uow, identity, name)))

        return self._tx.write(identity, key, work)


@dataclass(eq=False)
class OverrideQueries:
    """Reading overrides; which ones the caller may see is `domain.overrides`."""

    _tx: Transactions
    _overrides: OverrideUseCases

    def active(
        self,
        identity: Identity,
        parent: tuple[ParentType, str],
        instant: datetime,
        after_id: str,
        limit: int,
    ) -> list[Override]:
        """The overrides in force on `parent` at `instant` that the caller may see."""
        return self._tx.read(
            identity,
            lambda uow: self._overrides.active(uow, identity, parent, instant, after_id, limit),
        )

    def get(self, identity: Identity, name: tuple[ParentType, str, str]) -> Override:
        return self._tx.read(identity, lambda uow: self._overrides.get(uow, identity, name))
