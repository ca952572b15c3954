"""The rows behind the dict-backed fake (`fake_storage.py`): one `TenantTables` per tenant in a
`FakeDatabase`. A module of its own so that the fake repositories and the cross-tenant stores
all depend on the rows, and none of them on the unit of work that assembles them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime

from memory_service.kernel.domain.model import (
    Conversation,
    Customer,
    CustomerGrant,
    DocumentVersion,
    ImportBatch,
    ImportItem,
    Memory,
    Message,
    Override,
    Task,
    TaskCheckpoint,
)
from memory_service.kernel.domain.ports import OutboxKind, StoredResponse

_ids = itertools.count(1)  # outbox ids, ascending like a sequence


@dataclass
class OutboxEntry:
    """One outbox row: queued by a tenant's repository, leased and removed by the store."""

    memory_id: str
    due_time: datetime
    create_time: datetime
    kind: OutboxKind
    attempts: int = 0
    id: int = field(default_factory=lambda: next(_ids))
    lease_owner: str | None = None
    lease_until: datetime | None = None
    last_error: str = ""


@dataclass
class TenantTables:
    """One tenant's rows."""

    memories: dict[str, Memory] = field(default_factory=dict)
    conversations: dict[tuple[str, str], Conversation] = field(default_factory=dict)
    sequences: dict[tuple[str, str], int] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    grants: dict[tuple[str, str], CustomerGrant] = field(default_factory=dict)
    requests: dict[tuple[str, str], StoredResponse] = field(default_factory=dict)
    shown: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    outbox: list[OutboxEntry] = field(default_factory=list)
    overrides: dict[str, Override] = field(default_factory=dict)
    customers: dict[str, tuple[Customer, str]] = field(default_factory=dict)
    batches: dict[str, tuple[ImportBatch, bytes | None]] = field(default_factory=dict)
    items: dict[str, ImportItem] = field(default_factory=dict)
    usage: dict[str, datetime] = field(default_factory=dict)
    documents: dict[str, DocumentVersion] = field(default_factory=dict)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)
    checkpoints: dict[tuple[str, str], list[TaskCheckpoint]] = field(default_factory=dict)
    batch_leases: dict[str, datetime] = field(default_factory=dict)


@dataclass
class FakeDatabase:
    """Every tenant's committed rows: what the units of work copy from and commit to."""

    tenants: dict[str, TenantTables] = field(default_factory=dict)
