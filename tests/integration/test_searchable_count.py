"""`count_searchable` is `rules.applicable_revision` in SQL: the index watch's second count must
agree with the rule it stands for in every state a memory can be in, at the boundaries
themselves, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Memory, RevisionStatus, new_id
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.support import records

T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EDGES = [T, T + timedelta(microseconds=1), T - timedelta(microseconds=1), T + timedelta(seconds=1)]
MOMENTS = [None, None, *EDGES, T + timedelta(days=1), T - timedelta(days=1)]


def _random_memory(rng: random.Random, tenant: str, n: int) -> Memory:
    """Up to 4 revisions of any status (several active at once included), each bound open or set
    at or around `T`; some memories deleted."""
    memory_id = new_id()
    revisions = [
        records.revision(
            number,
            T,
            memory_id=memory_id,
            valid_from=rng.choice(MOMENTS),
            valid_until=rng.choice(MOMENTS),
            status=rng.choice(list(RevisionStatus)),
            superseded_from=rng.choice(MOMENTS),
        )
        for number in range(1, rng.randint(0, 4) + 1)
    ]
    memory = records.memory(*revisions, created=T, memory_id=memory_id, tenant=tenant, key=f"k{n}")
    if rng.random() < 0.15:
        memory.delete_time = T
    return memory


def test_the_searchable_count_is_the_rule_at_every_boundary(units: SqlUnitOfWorkFactory) -> None:
    rng = random.Random(7)
    memories = {tenant: [_random_memory(rng, tenant, n) for n in range(300)] for tenant in "ab"}
    for tenant, written in memories.items():
        with units(tenant, write=True) as uow:
            for memory in written:
                uow.memories.add(memory)
            uow.commit()
    counts = set()
    for instant in [*EDGES, T + timedelta(days=2), T - timedelta(days=2)]:
        for zone in (UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))):
            at = instant.astimezone(zone)
            expected = sum(1 for m in memories["a"] if rules.applicable_revision(m, at))
            with units("a", write=False) as uow:
                assert uow.memories.count_searchable(at) == expected, at
            counts.add(expected)
    assert len(counts) > 3  # the instants tell the memories apart
