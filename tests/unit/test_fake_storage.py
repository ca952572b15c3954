"""The dict-backed fake (memory_service/testing/fake_storage.py) implements every port of
kernel/domain/ports.py, with the ports' own method names and parameters, and keeps one tenant's rows
from another's; the decision tables rely on both."""

from __future__ import annotations

import inspect
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, get_type_hints

import pytest

from memory_service.kernel.domain import ports
from memory_service.kernel.domain.model import Task, TaskCheckpoint, TaskState
from memory_service.testing.fake_storage import FakeUnitOfWorkFactory, Ports, fake_ports

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _protocols() -> dict[str, type]:
    return {
        name: value
        for name, value in vars(ports).items()
        if inspect.isclass(value)
        and getattr(value, "_is_protocol", False)
        and value.__module__ == ports.__name__
    }


def _members(protocol: type) -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


def _implementations() -> dict[type, object]:
    """Each port, and the fake that stands for it: the fields of `Ports`, and the repositories
    of one fake unit of work (named by the properties of `UnitOfWork`)."""
    made = fake_ports()
    found: dict[type, object] = {}
    for port in fields(Ports):
        found[get_type_hints(Ports)[port.name]] = getattr(made, port.name)
    with FakeUnitOfWorkFactory()("acme", write=False) as uow:
        found[ports.UnitOfWork] = uow
        for name, member in _members(ports.UnitOfWork).items():
            if isinstance(member, property):
                found[get_type_hints(member.fget)["return"]] = getattr(uow, name)
    return found


def test_every_port_has_a_fake() -> None:
    covered = {port.__name__ for port in _implementations()}
    assert sorted(set(_protocols()) - covered) == []


@pytest.mark.parametrize("name", sorted(_protocols()))
def test_the_fake_has_every_method_of_the_port_with_its_parameters(name: str) -> None:
    protocol = _protocols()[name]
    fake = _implementations()[protocol]
    for member, declared in _members(protocol).items():
        assert hasattr(fake, member), f"{type(fake).__name__} lacks {member}"
        if isinstance(declared, property):
            continue
        wanted = inspect.signature(declared).parameters
        got = inspect.signature(getattr(type(fake), member)).parameters
        assert [(p.name, p.kind) for p in got.values()] == [
            (p.name, p.kind) for p in wanted.values()
        ], f"{type(fake).__name__}.{member}"


def test_a_unit_of_work_sees_its_own_tenant_only_and_nothing_before_commit() -> None:
    units = FakeUnitOfWorkFactory()
    task = Task("acme", "t1", "mara", TaskState.OPEN, 0, T0, T0)
    with units("acme", write=True) as uow:
        uow.tasks.add(task)
        with units("acme", write=False) as meanwhile:
            assert meanwhile.tasks.get("mara", "t1") is None
        uow.commit()
    with units("other", write=False) as uow:
        assert uow.tasks.get("mara", "t1") is None
        assert uow.archive.ids_in_use("memory", []) == set()
    with units("acme", write=False) as uow:
        assert uow.tasks.get("mara", "t1") == task


def test_task_writes_conflict_as_in_sql() -> None:
    """A taken checkpoint number and a task that changed meanwhile are WriteConflicts (the
    use case retries), not silent overwrites."""
    from memory_service.kernel.domain.errors import WriteConflict

    units = FakeUnitOfWorkFactory()
    task = Task("acme", "t1", "mara", TaskState.OPEN, 0, T0, T0)
    step = TaskCheckpoint(1, 1, 3, "parsing", "", T0)
    with units("acme", write=True) as uow:
        uow.tasks.add(task)
        uow.tasks.add_checkpoint("mara", "t1", step)
        with pytest.raises(WriteConflict):
            uow.tasks.add_checkpoint("mara", "t1", step)
        moved = Task("acme", "t1", "mara", TaskState.OPEN, 1, T0, T0)
        uow.tasks.update(moved, task)
        with pytest.raises(WriteConflict):
            uow.tasks.update(moved, task)
        assert uow.tasks.get("mara", "t1") == Task(
            "acme", "t1", "mara", TaskState.OPEN, 1, T0, T0, current=step
        )
