"""The review queue's "unused for N days" on real SQLite and PostgreSQL: it reads the usage
times, counts a memory never used from its creation, and stays in its tenant."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from memory_service.kernel.domain.authorization import AccessPolicy, GrantTableAuthorizer
from memory_service.kernel.domain.model import Identity, utcnow
from memory_service.memories.domain.memory_writes import MemoryUseCases
from memory_service.review.domain.review import ReviewQuery, ReviewReason, ReviewUseCases
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.integration.test_storage import EVERYTHING, make_memory


def test_unused_memories_are_those_not_used_since_the_cutoff(units: SqlUnitOfWorkFactory) -> None:
    now = utcnow()
    old = now - timedelta(days=40)
    forgotten = replace(make_memory("t1", key="forgotten"), create_time=old)
    used = replace(make_memory("t1", key="used"), create_time=old)
    fresh = make_memory("t1", key="fresh")
    foreign = replace(make_memory("t2", key="forgotten"), create_time=old)
    with units("t1", write=True) as uow:
        for memory in (forgotten, used, fresh):
            uow.memories.add(memory)
        uow.commit()
    with units("t2", write=True) as uow:
        uow.memories.add(foreign)
        uow.commit()
    units.usage_store().record({("t1", used.id): now - timedelta(days=1)})

    with units("t1", write=False) as uow:
        unused = uow.review.unused_since(EVERYTHING, now - timedelta(days=30), "", 10)
        assert [m.id for m in unused] == [forgotten.id]
        assert uow.review.unused_since(EVERYTHING, now - timedelta(days=30), forgotten.id, 10) == []
        assert len(uow.review.unused_since(EVERYTHING, now + timedelta(days=1), "", 10)) == 3

        policy = AccessPolicy(GrantTableAuthorizer())
        review = ReviewUseCases(policy, MemoryUseCases(policy))
        owner = Identity("t1", "u1")
        items, _ = review.queue(uow, owner, ReviewQuery.of([], 30), None, 10, now)
        assert [(i.reason, i.memory.id if i.memory else "") for i in items] == [
            (ReviewReason.UNUSED, forgotten.id)
        ]
        stranger = Identity("t1", "u2")
        assert review.queue(uow, stranger, ReviewQuery.of([], 30), None, 10, now) == ([], None)
