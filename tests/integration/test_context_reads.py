"""BuildContext's read on real SQLite and PostgreSQL: one statement per part of the context
(conversation, window, grants, memories with their revisions, overrides), whatever the number
of memories, and the memories decoded from it as the domain decides them: effective dates,
candidate revisions, deleted memories and scopes the caller cannot see."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from memory_service.context.domain.context import (
    ContextBuilder,
    ContextRequest,
    CustomerRef,
    ExclusionReason,
)
from memory_service.kernel.domain.model import Scope, ScopeType
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.tasks.domain.tasks import TaskUseCases
from memory_service.unit_of_work import SqlUnitOfWorkFactory
from tests.integration.test_recall_reads import statements
from tests.support.world import World, at


def test_a_context_is_five_reads_and_decides_every_edge_case(
    units: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    world = World(units)
    mara, ben = world.who("mara"), world.who("ben")
    admin = world.who("root", admin=True)
    said = world.say(mara, "I prefer mornings")
    kept, _ = world.create(mara, said, "mornings", key="meeting_time")
    unsure = world.say(mara, "hmm, not sure yet", when=at(1))  # says nothing of evenings
    world.correct(mara, kept, unsure, "evenings", now=at(1))
    later, _ = world.create(
        mara, world.say(mara, "from next week: tea"), "tea", key="drink", valid_from=at(100)
    )
    gone, _ = world.create(mara, world.say(mara, "call me Mara"), "Mara", key="name")
    world.write(mara, lambda uow: world.memories.delete(uow, mara, gone.id, None, at(2)))
    world.grant("mara", "globex")
    globex = Scope(ScopeType.CUSTOMER, "globex")
    paid, _ = world.create(
        mara, world.say(mara, "Globex pays by card"), "card", scope=globex, key="payment"
    )
    hidden = Scope(ScopeType.CUSTOMER, "initech")
    world.grant("ben", "initech")
    secret, _ = world.create(
        ben, world.say(ben, "Initech pays late", conversation="b1"), "late", scope=hidden
    )
    org, _ = world.create(
        admin,
        world.say(admin, "we meet at nine", conversation="a1"),
        "nine",
        scope=Scope(ScopeType.ORGANIZATION, ""),
    )
    builder = ContextBuilder(
        world.policy, world.overrides, TaskUseCases(SecretDetector(), timedelta(days=1))
    )
    request = ContextRequest("c1", "", at(10), [CustomerRef("globex"), CustomerRef("initech")], 10)

    with statements(engine) as sent:
        context = world.read(mara, lambda uow: builder.build(uow, mara, request))
    assert len([s for s in sent if s.startswith("SELECT")]) == 5

    applied = {item.memory.id: item.revision.value for item in context.memories}
    assert applied == {kept.id: "mornings", paid.id: "card", org.id: "nine"}
    excluded = dict(context.excluded)
    # a correction its evidence does not say waits for review: a candidate beside the value
    # in force
    assert excluded[f"memories/{kept.id}/revisions/2"] is ExclusionReason.CANDIDATE
    assert excluded[f"memories/{later.id}/revisions/1"] is ExclusionReason.NOT_YET_EFFECTIVE
    assert excluded["customer id initech"] is ExclusionReason.UNAUTHORIZED_CUSTOMER
    assert not any(secret.id in subject or gone.id in subject for subject in excluded)
    # mara's and the organization's meeting times disagree: reported, never resolved
    assert [(c.key, sorted(i.revision.value for i in c.memories)) for c in context.conflicts] == [
        ("meeting_time", ["mornings", "nine"])
    ]

    # what a read shares with the next (scope values, decoded times) changes nothing it decides
    again = world.read(mara, lambda uow: builder.build(uow, mara, request))
    assert [(i.memory.id, i.revision.value) for i in again.memories] == [
        (i.memory.id, i.revision.value) for i in context.memories
    ]
