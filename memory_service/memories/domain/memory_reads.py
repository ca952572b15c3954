"""Reading memories (GetMemory, ListMemories): what the caller may see decides what is read,
so another user's or tenant's memory is never read, and a memory the caller may not see
answers exactly like a missing one (I7). The writes (memory_writes.py) find the memory they
change through the same check."""

from __future__ import annotations

from datetime import datetime

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.errors import NotFound
from memory_service.kernel.domain.model import Identity, Memory
from memory_service.kernel.domain.ports import MemoryQuery, UnitOfWork
from memory_service.memories.domain.memory_requests import MemoryFilter


class MemoryReads:
    def __init__(self, policy: AccessPolicy) -> None:
        self._policy = policy

    def get(self, uow: UnitOfWork, identity: Identity, memory_id: str) -> Memory:
        return self._visible(uow, identity, memory_id)

    def list(
        self,
        uow: UnitOfWork,
        identity: Identity,
        memory_filter: MemoryFilter,
        after_id: str,
        limit: int,
        instant: datetime,
    ) -> list[Memory]:
        """Up to `limit` visible memories matching the filter, after `after_id` in id order."""
        query = MemoryQuery(
            visibility=self._policy.visibility(uow, identity),
            scope_type=memory_filter.scope_type,
            scope_id=memory_filter.scope_id,
            key=memory_filter.key,
            kind=memory_filter.kind,
            show_deleted=memory_filter.show_deleted,
        )
        page: list[Memory] = []
        cursor = after_id
        batch_size = max(limit, 100)
        while True:
            batch = uow.memories.list_after(query, cursor, batch_size)
            for memory in batch:
                cursor = memory.id
                if self._matches(memory, memory_filter, instant):
                    page.append(memory)
                    if len(page) == limit:
                        return page
            if len(batch) < batch_size:
                return page

    @staticmethod
    def _matches(memory: Memory, memory_filter: MemoryFilter, instant: datetime) -> bool:
        if memory_filter.revision_state is not None and not any(
            rules.state_at(r, instant) is memory_filter.revision_state for r in memory.revisions
        ):
            return False
        if memory_filter.value_contains:
            needle = memory_filter.value_contains.casefold()
            shown = (rules.applicable_revision(memory, instant), memory.latest)
            if not any(r is not None and needle in r.value.casefold() for r in shown):
                return False
        return True

    def _visible(self, uow: UnitOfWork, identity: Identity, memory_id: str) -> Memory:
        """I7: a foreign, unauthorized or deleted memory answers exactly like a missing one."""
        memory = uow.memories.get(memory_id)
        if (
            memory is None
            or memory.deleted
            or not self._policy.can_read(uow, identity, memory.scope)
        ):
            raise NotFound(names.memory(memory_id))
        return memory
