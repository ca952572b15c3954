"""The fake repositories of the smaller tables: transcript, grants, request ids, the tenant's
outbox, overrides, customers, usage and tasks; each a few dict reads and writes."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.domain.model import (
    Conversation,
    Customer,
    CustomerGrant,
    Message,
    Override,
    ParentType,
    Task,
    TaskCheckpoint,
)
from memory_service.kernel.domain.ports import ON_ITS_WAY, OutboxKind, StoredResponse
from memory_service.testing.fake_tables import OutboxEntry, TenantTables


class FakeTranscriptRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get_conversation(self, owner_user_id: str, conversation_id: str) -> Conversation | None:
        return self._t.conversations.get((owner_user_id, conversation_id))

    def add_conversation(self, conversation: Conversation) -> None:
        key = (conversation.owner_user_id, conversation.id)
        if key in self._t.conversations:
            raise WriteConflict("conversation exists")
        self._t.conversations[key] = conversation
        self._t.sequences[key] = 0

    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        return sorted(o for o, c in self._t.conversations if c == conversation_id)[:limit]

    def allocate_sequences(self, owner_user_id: str, conversation_id: str, count: int) -> int:
        key = (owner_user_id, conversation_id)
        self._t.sequences[key] += count
        return self._t.sequences[key] - count + 1

    def add_messages(self, messages: Sequence[Message]) -> None:
        ids = [m.id for m in messages]
        if len(set(ids)) != len(ids) or any(i in self._t.messages for i in ids):
            raise WriteConflict("message id exists")  # and, as one INSERT, none is kept
        for message in messages:
            self._t.messages[message.id] = message

    def preload_messages(
        self, message_ids: Collection[str], known: Collection[Message] = ()
    ) -> None:
        """Nothing to read ahead: every message is at hand."""

    def get_message(self, message_id: str) -> Message | None:
        return self._t.messages.get(message_id)

    def _of(self, owner_user_id: str, conversation_id: str) -> list[Message]:
        return sorted(
            (
                m
                for m in self._t.messages.values()
                if (m.author_user_id, m.conversation_id) == (owner_user_id, conversation_id)
            ),
            key=lambda m: m.sequence,
        )

    def list_messages(
        self, owner_user_id: str, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]:
        messages = self._of(owner_user_id, conversation_id)
        return [m for m in messages if m.sequence > after_sequence][:limit]

    def recent_messages(
        self, owner_user_id: str, conversation_id: str, count: int
    ) -> list[Message]:
        return self._of(owner_user_id, conversation_id)[-count:] if count > 0 else []


class FakeGrantRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, user_id: str, customer_id: str) -> CustomerGrant | None:
        return self._t.grants.get((user_id, customer_id))

    def add(self, grant: CustomerGrant) -> None:
        key = (grant.user_id, grant.customer_id)
        if key in self._t.grants:
            raise WriteConflict("grant exists")
        self._t.grants[key] = grant

    def remove(self, user_id: str, customer_id: str) -> bool:
        return self._t.grants.pop((user_id, customer_id), None) is not None

    def customers_of(self, user_id: str) -> frozenset[str]:
        return frozenset(c for u, c in self._t.grants if u == user_id)

    def granted_among(self, user_id: str, customer_ids: Collection[str]) -> frozenset[str]:
        return self.customers_of(user_id) & frozenset(customer_ids)

    def list_after(
        self, user_id: str | None, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]:
        keys = sorted(k for k in self._t.grants if user_id is None or k[0] == user_id)
        return [self._t.grants[k] for k in keys if k > after][:limit]


class FakeIdempotencyRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, user_id: str, request_id: str) -> StoredResponse | None:
        return self._t.requests.get((user_id, request_id))

    def reserve(
        self, user_id: str, request_id: str, stored: StoredResponse, expired: datetime | None
    ) -> None:
        key = (user_id, request_id)
        old = self._t.requests.get(key)
        if old is not None and (expired is None or old.create_time >= expired):
            raise WriteConflict("request id reserved")
        self._t.requests[key] = stored
        self._t.shown.pop(key, None)

    def record(self, user_id: str, request_id: str, response: bytes, shown: Sequence[str]) -> None:
        key = (user_id, request_id)
        if key in self._t.requests:
            self._t.requests[key] = replace(
                self._t.requests[key], response=response, memory_id=shown[0] if shown else ""
            )
            self._t.shown[key] = tuple(shown)

    def redact_shown(self, record_ids: list[str]) -> int:
        gone = set(record_ids)
        reached = [
            k
            for k, s in self._t.requests.items()
            if (s.memory_id and s.memory_id in gone) or gone & set(self._t.shown.get(k, ()))
        ]
        for key in reached:
            self._t.requests[key] = replace(self._t.requests[key], response=b"")
        return len(reached)


class FakeOutboxRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables
        self.queued_now = False

    def enqueue(self, memory_id: str, due_time: datetime, now: datetime) -> None:
        self.queued_now = self.queued_now or due_time <= now
        self._t.outbox.append(OutboxEntry(memory_id, due_time, now, OutboxKind.MEMORY))

    def enqueue_tenant(self, kind: OutboxKind, now: datetime) -> None:
        self.queued_now = True
        self._t.outbox.append(OutboxEntry("", now, now, kind))

    def queued_changes(self) -> dict[str, datetime]:
        changes: dict[str, datetime] = {}
        for e in self._t.outbox:
            if e.kind is OutboxKind.MEMORY:
                due = ON_ITS_WAY if e.attempts > 0 else e.due_time
                changes[e.memory_id] = min(due, changes.get(e.memory_id, due))
        return changes

    def tenant_work(self) -> bool:
        return any(e.kind is not OutboxKind.MEMORY for e in self._t.outbox)


class FakeOverrideRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def add(self, override: Override) -> None:
        if override.id in self._t.overrides:
            raise WriteConflict("override id exists")
        self._t.overrides[override.id] = override

    def active(
        self,
        parent_type: ParentType,
        parent_id: str,
        instant: datetime,
        after_id: str,
        limit: int,
        author_user_id: str | None,
    ) -> list[Override]:
        found = [
            o
            for i, o in sorted(self._t.overrides.items())
            if (o.parent_type, o.parent_id) == (parent_type, parent_id)
            and o.active_at(instant)
            and (author_user_id is None or o.author_user_id == author_user_id)
            and i > after_id
        ]
        return found[:limit]

    def get(self, override_id: str) -> Override | None:
        return self._t.overrides.get(override_id)

    def remove(self, override_id: str) -> bool:
        return self._t.overrides.pop(override_id, None) is not None


class FakeCustomerRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def upsert(self, customer: Customer, match_name: str) -> Customer:
        existing = self._t.customers.get(customer.customer_id)
        if existing is not None:
            customer = replace(customer, create_time=existing[0].create_time)
        self._t.customers[customer.customer_id] = (customer, match_name)
        return customer

    def get(self, customer_id: str) -> Customer | None:
        found = self._t.customers.get(customer_id)
        return None if found is None else found[0]

    def by_match_name(self, match_name: str) -> list[Customer]:
        return [c for _, (c, m) in sorted(self._t.customers.items()) if m == match_name]

    def list_after(
        self, after_id: str, limit: int, among: Collection[str] | None
    ) -> list[Customer]:
        return [
            c
            for i, (c, _) in sorted(self._t.customers.items())
            if i > after_id and (among is None or i in among)
        ][:limit]

    def remove(self, customer_id: str) -> bool:
        return self._t.customers.pop(customer_id, None) is not None


class FakeUsageRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def last_used(self, memory_ids: list[str]) -> dict[str, datetime]:
        return {i: self._t.usage[i] for i in memory_ids if i in self._t.usage}


class FakeTaskRepository:
    def __init__(self, tables: TenantTables) -> None:
        self._t = tables

    def get(self, owner_user_id: str, task_id: str, *, lock: bool = False) -> Task | None:
        task = self._t.tasks.get((owner_user_id, task_id))
        if task is None:
            return None
        latest = [
            c
            for c in self._t.checkpoints.get((owner_user_id, task_id), [])
            if c.sequence == task.checkpoint_count
        ]
        return replace(task, current=latest[0] if latest else None)

    def owners_of(self, task_id: str, limit: int) -> list[str]:
        return sorted(o for o, t in self._t.tasks if t == task_id)[:limit]

    def add(self, task: Task) -> None:
        key = (task.owner_user_id, task.id)
        if key in self._t.tasks:
            raise WriteConflict("task exists")
        self._t.tasks[key] = replace(task, current=None)
        self._t.checkpoints[key] = []

    def add_checkpoint(self, owner_user_id: str, task_id: str, checkpoint: TaskCheckpoint) -> None:
        stored = self._t.checkpoints.setdefault((owner_user_id, task_id), [])
        if any(c.sequence == checkpoint.sequence for c in stored):
            raise WriteConflict("checkpoint sequence taken")
        stored.append(checkpoint)
        stored.sort(key=lambda c: c.sequence)

    def update(self, task: Task, expected: Task) -> None:
        key = (task.owner_user_id, task.id)
        stored = self._t.tasks.get(key)
        if stored is None or (stored.state, stored.checkpoint_count) != (
            expected.state,
            expected.checkpoint_count,
        ):
            raise WriteConflict(f"tasks/{task.id} changed meanwhile")
        self._t.tasks[key] = replace(
            stored,
            state=task.state,
            checkpoint_count=task.checkpoint_count,
            update_time=task.update_time,
            end_time=task.end_time,
        )

    def list_checkpoints(
        self, owner_user_id: str, task_id: str, after_sequence: int, limit: int
    ) -> list[TaskCheckpoint]:
        stored = self._t.checkpoints.get((owner_user_id, task_id), [])
        return [c for c in stored if c.sequence > after_sequence][:limit]
