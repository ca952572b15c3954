"""What the domain needs from outside it: storage (every repository is bound to one tenant when it
is made), a scanner for secret key formats, and the search index."""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from memory_service.kernel.domain.model import (
    Conversation,
    Customer,
    CustomerGrant,
    DocumentVersion,
    ImportBatch,
    ImportItem,
    ItemOutcome,
    Memory,
    MemoryKind,
    Message,
    Override,
    ParentType,
    Revision,
    Scope,
    ScopeType,
    Task,
    TaskCheckpoint,
)


class Thesaurus(Protocol):
    """Words that can stand for a word, for the grounding rule (`grounding.py`)."""

    def entry(self, word: str) -> frozenset[str]:
        """The single words listed under `word` (casefolded), empty when it is no headword."""
        ...


@dataclass(frozen=True)
class Candidate:
    """A memory the search index proposes for a recall, at the revision it indexed: only a
    candidate, which recall checks against the records and the caller's access."""

    memory_id: str
    score: float
    revision_number: int


@dataclass(frozen=True)
class Visibility:
    """Which subjects a caller may see; applied inside the query, never after it."""

    user_ids: frozenset[str] | None  # None: every user of the tenant
    customer_ids: frozenset[str] | None  # None: every customer of the tenant
    organization: bool = True


@dataclass(frozen=True)
class MemoryQuery:
    visibility: Visibility
    scope_type: ScopeType | None = None
    scope_id: str = ""
    key: str = ""
    kind: MemoryKind | None = None
    show_deleted: bool = False
    changed_since: datetime | None = None  # incremental export: update_time at or after


class MemoryRepository(Protocol):
    def get(self, memory_id: str) -> Memory | None: ...
    def get_many(self, memory_ids: list[str]) -> dict[str, Memory]: ...
    def live_versions(self) -> dict[str, int]:
        """Each live memory's version, in id order."""

    def count_live(self) -> int:
        """How many `live_versions` there are, counted by the database."""

    def count_searchable(self, instant: datetime) -> int:
        """How many live memories have an applicable revision at `instant` (what the search
        index should hold), counted by the database."""

    def find_live(self, scope: Scope, key: str, key_context: str) -> Memory | None: ...
    def deletions(
        self, scope: Scope, key: str, key_context: str, lineage: str
    ) -> tuple[datetime | None, bool]:
        """When a memory with this scoped key was last deleted, if ever, and whether the
        evidence lineage `lineage` underlies a deleted revision ('' names none)."""

    def add(self, memory: Memory) -> None: ...
    def preloaded(
        self, keys: Collection[tuple[Scope, str, str]], lineages: Collection[str] = ()
    ) -> AbstractContextManager[None]:
        """For many creates in one transaction: `find_live` and `deletions` of these scoped
        keys and lineages are read up front, and added memories are written together at the
        end. Nothing but `add` may change memories inside."""

    def add_revision(self, revision: Revision) -> None: ...
    def update_revision(self, revision: Revision) -> None: ...
    def advance_version(self, memory_id: str, expected_version: int, now: datetime) -> bool:
        """Compare-and-swap the memory's version; False when another writer moved it first."""

    def mark_deleted(self, memory_id: str, now: datetime, key_hash: str) -> None: ...
    def deleted_lineage(self, evidence_ref: str) -> bool:
        """Whether this evidence underlies a deleted revision (compared by hash)."""

    def list_after(self, query: MemoryQuery, after_id: str, limit: int) -> list[Memory]: ...
    def citing_document(self, uri: str) -> list[Memory]:
        """Live memories with a revision whose evidence is this document, oldest first."""


class DocumentRepository(Protocol):
    """The current version of each document, as its connector reported it (never its text)."""

    def get(self, uri: str) -> DocumentVersion | None: ...
    def put(self, document: DocumentVersion) -> None: ...
    def mark_source_changed(self, memory_id: str, number: int, now: datetime) -> bool:
        """Marks one revision; False when it was marked already. Writes that column only."""


class ReviewRepository(Protocol):
    """The review queue's sources, each ascending by id after `after_id`, visibility applied
    in the query."""

    def flagged(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        """Live memories with an active revision marked source-changed."""

    def with_candidates(self, visibility: Visibility, after_id: str, limit: int) -> list[Memory]:
        """Live memories with a CANDIDATE revision."""

    def sharing_keys(self, visibility: Visibility, limit: int) -> list[Memory]:
        """Live memories whose key and key_context another live memory of another scope has."""

    def unused_since(
        self, visibility: Visibility, cutoff: datetime, after_id: str, limit: int
    ) -> list[Memory]:
        """Live memories last used (or, never used, created) before `cutoff`."""

    def pending_items(self, user_id: str | None, after_id: str, limit: int) -> list[ImportItem]:
        """Import items awaiting review: the user's, or the tenant's when `user_id` is None."""


class TranscriptRepository(Protocol):
    """Conversations are keyed by (owner, id): one user's id never names another's conversation."""

    def get_conversation(self, owner_user_id: str, conversation_id: str) -> Conversation | None: ...
    def add_conversation(self, conversation: Conversation) -> None: ...
    def owners_of(self, conversation_id: str, limit: int) -> list[str]:
        """Users who have a conversation of this id (for admins reviewing transcripts)."""

    def allocate_sequences(self, owner_user_id: str, conversation_id: str, count: int) -> int:
        """Allocates `count` consecutive sequences of the conversation; returns the first."""

    def add_messages(self, messages: Sequence[Message]) -> None: ...
    def get_message(self, message_id: str) -> Message | None:
        """By its id alone: message ids are unique across the tenant's conversations."""

    def preload_messages(
        self, message_ids: Collection[str], known: Collection[Message] = ()
    ) -> None:
        """Reads these messages at once, for a batch that cites them one by one. `known`:
        messages of this tenant an earlier transaction read, kept without reading them again
        (a message never changes once appended, and is never removed)."""

    def list_messages(
        self, owner_user_id: str, conversation_id: str, after_sequence: int, limit: int
    ) -> list[Message]: ...
    def recent_messages(
        self, owner_user_id: str, conversation_id: str, count: int
    ) -> list[Message]:
        """The last `count` messages, oldest first."""


class GrantRepository(Protocol):
    def get(self, user_id: str, customer_id: str) -> CustomerGrant | None: ...
    def add(self, grant: CustomerGrant) -> None: ...
    def remove(self, user_id: str, customer_id: str) -> bool: ...
    def customers_of(self, user_id: str) -> frozenset[str]: ...
    def granted_among(self, user_id: str, customer_ids: Collection[str]) -> frozenset[str]:
        """Which of `customer_ids` are granted to the user, in one query."""

    def list_after(
        self, user_id: str | None, after: tuple[str, str], limit: int
    ) -> list[CustomerGrant]: ...


@dataclass(frozen=True)
class StoredResponse:
    method: str
    fingerprint: str
    response: bytes
    create_time: datetime
    memory_id: str = ""  # the memory the response shows, so a deletion can reach it

    @property
    def redacted(self) -> bool:
        """The memory it showed was deleted and the response with its text dropped."""
        return bool(self.memory_id) and not self.response


class IdempotencyRepository(Protocol):
    def get(self, user_id: str, request_id: str) -> StoredResponse | None: ...
    def reserve(
        self, user_id: str, request_id: str, stored: StoredResponse, expired: datetime | None
    ) -> None:
        """Reserves the request id for this transaction, replacing a row created before
        `expired` (None: the lookup found no row, so there is none to replace)."""

    def record(self, user_id: str, request_id: str, response: bytes, shown: Sequence[str]) -> None:
        """Stores the answer of a reserved request id with the memories (or import items) whose
        text it carries; deleting any of them redacts it."""

    def redact_shown(self, record_ids: list[str]) -> int:
        """Drops the stored responses that show any of these records (memories or import
        items), keeping their request ids so a replay answers that the record is gone."""


class TaskRepository(Protocol):
    """Tasks are keyed by (owner, id), like conversations."""

    def get(self, owner_user_id: str, task_id: str, *, lock: bool = False) -> Task | None:
        """The task with its current (latest) checkpoint; `lock` holds it for this write
        transaction, so concurrent writers of one task take turns."""

    def owners_of(self, task_id: str, limit: int) -> list[str]:
        """Users who have a task of this id (for admins)."""

    def add(self, task: Task) -> None: ...
    def add_checkpoint(self, owner_user_id: str, task_id: str, checkpoint: TaskCheckpoint) -> None:
        """Raises WriteConflict when a concurrent writer took the sequence number."""

    def update(self, task: Task, expected: Task) -> None:
        """Saves state, count and times, provided the stored task still matches `expected`'s
        state and count; otherwise raises WriteConflict (the write is retried and sees why)."""

    def list_checkpoints(
        self, owner_user_id: str, task_id: str, after_sequence: int, limit: int
    ) -> list[TaskCheckpoint]: ...


class OverrideRepository(Protocol):
    def add(self, override: Override) -> None: ...
    def active(
        self,
        parent_type: ParentType,
        parent_id: str,
        instant: datetime,
        after_id: str,
        limit: int,
        author_user_id: str | None,
    ) -> list[Override]:
        """Unexpired overrides of the parent, by `author_user_id` only unless it is None."""

    def get(self, override_id: str) -> Override | None: ...
    def remove(self, override_id: str) -> bool:
        """False when it was already gone (a concurrent delete won)."""


class UsageRepository(Protocol):
    def last_used(self, memory_ids: list[str]) -> dict[str, datetime]:
        """When each of these memories was last used in a context or a recall (absent: not
        since usage tracking began). Written in batches, so a few seconds behind the reads."""


class UsageStore(Protocol):
    """Usage across tenants, for the worker that flushes what reads noted."""

    def record(self, uses: Mapping[tuple[str, str], datetime]) -> None:
        """(tenant, memory id) -> time of use; a stored time only ever moves forward."""


class UsageLog(Protocol):
    """Where reads note the memories they used; written later, never on the read path."""

    def note(self, tenant_id: str, memory_ids: Iterable[str], when: datetime) -> None: ...


class NoUsageLog:
    """Usage tracking turned off (`MEMORY_USAGE_TRACKING=0`)."""

    def note(self, tenant_id: str, memory_ids: Iterable[str], when: datetime) -> None:
        return None


class CustomerRepository(Protocol):
    def upsert(self, customer: Customer, match_name: str) -> Customer: ...
    def get(self, customer_id: str) -> Customer | None: ...
    def by_match_name(self, match_name: str) -> list[Customer]: ...
    def list_after(
        self, after_id: str, limit: int, among: Collection[str] | None
    ) -> list[Customer]: ...
    def remove(self, customer_id: str) -> bool:
        """False when it was already gone (a concurrent delete won)."""


class ImportRepository(Protocol):
    def find_batch(self, user_id: str, archive_sha256: str) -> ImportBatch | None: ...
    def get_batch(self, batch_id: str) -> ImportBatch | None: ...
    def add_batch(self, batch: ImportBatch, archive: bytes | None) -> None: ...
    def remove_batch(self, batch_id: str) -> None: ...
    def update_batch(self, batch: ImportBatch) -> None:
        """Saves state and counts, and drops the raw archive."""

    def archive_of(self, batch_id: str) -> bytes | None: ...
    def add_items(self, items: list[ImportItem]) -> None: ...
    def get_item(self, item_id: str) -> ImportItem | None: ...
    def update_item(self, item: ImportItem) -> None: ...
    def list_items(
        self, batch_id: str, outcome: ItemOutcome | None, after_ordinal: int, limit: int
    ) -> list[ImportItem]: ...
    def known_lineage(self, user_id: str, hashes: list[str]) -> set[str]: ...
    def cancel_pending(self, user_id: str, lineage_hashes: list[str]) -> int:
        """Withdraws items awaiting review whose text a deletion just removed."""

    def blank_text(self, user_id: str, lineage_hashes: list[str], memory_id: str) -> list[str]:
        """Erases the text of the user's items of these lineages and of items confirmed into
        `memory_id`, and returns their ids; their hashes stay so a re-import is still
        recognised."""

    def item_ids(self, batch_id: str) -> list[str]:
        """The ids of every item of the batch."""

    def count_items(self, batch_id: str) -> tuple[int, int]:
        """(all items, items confirmed into memory)."""

    def count_pending(self, user_id: str) -> int:
        """The user's archives still waiting for the background parser."""


class ArchiveRepository(Protocol):
    """Export and restore: paging the records an export carries, and the checks a restore
    makes before it writes a record under the id it had."""

    def has_memories(self) -> bool:
        """Any memory of the tenant, deletion markers included."""

    def ids_in_use(self, kind: str, ids: list[str]) -> set[str]:
        """Which ids are taken in the whole store (`memory`, `message`, `import_batch`,
        `import_item` are keyed by id alone); never whose they are."""

    def messages(self, ids: list[str]) -> dict[str, Message]: ...
    def customers_after(
        self, after_id: str, since: datetime | None, limit: int
    ) -> list[Customer]: ...
    def batches_after(
        self, user_id: str | None, after_id: str, since: datetime | None, limit: int
    ) -> list[ImportBatch]: ...
    def add_message(self, message: Message) -> None:
        """Under its own id and sequence, making its conversation when missing."""

    def sequence_taken(self, message: Message) -> bool: ...
    def replace_memory(self, memory: Memory) -> None:
        """The memory row and all its revisions as given (a merge bringing it forward)."""


class OutboxKind(enum.StrEnum):
    """What an outbox row asks of the index."""

    MEMORY = "memory"  # memory X changed: send its current state
    REBUILD = "rebuild"  # remove the tenant's every point, then refill it from the records
    RESYNC = "resync"  # refill the tenant from the records (points went missing)
    REFILL = "refill"  # one memory of a rebuild or resync: sent like MEMORY


TENANT_KINDS = (OutboxKind.REBUILD, OutboxKind.RESYNC)
ON_ITS_WAY = datetime.min.replace(tzinfo=UTC)  # a queued change that counts as due at any instant
EMPTY_AHEAD: Mapping[tuple[str, str], Sequence[datetime]] = {}


class OutboxRepository(Protocol):
    def enqueue(self, memory_id: str, due_time: datetime, now: datetime) -> None: ...
    @property
    def queued_now(self) -> bool:
        """Whether this unit of work queued index work that is due now (the drain is woken
        once it commits, instead of finding it at its next poll)."""

    def enqueue_tenant(self, kind: OutboxKind, now: datetime) -> None:
        """A REBUILD or RESYNC of this tenant, due now."""

    def queued_changes(self) -> dict[str, datetime]:
        """Each memory whose own change awaits its index write, with the instant its earliest
        queued change is due (`ON_ITS_WAY` for one being retried: due or not, it is on its
        way)."""

    def tenant_work(self) -> bool:
        """Whether a rebuild or resync of the tenant is queued or still refilling."""


@dataclass(frozen=True)
class OutboxItem:
    id: int
    tenant_id: str
    memory_id: str
    due_time: datetime
    create_time: datetime
    attempts: int
    kind: OutboxKind = OutboxKind.MEMORY


class OutboxStore(Protocol):
    """The outbox across tenants, for the workers that drain it."""

    def lease(
        self, owner: str, limit: int, now: datetime, lease_seconds: float
    ) -> list[OutboxItem]:
        """Leases due items; several workers never get the same item while a lease holds."""

    def complete(
        self,
        owner: str,
        ids: list[int],
        ahead: Mapping[tuple[str, str], Sequence[datetime]] = EMPTY_AHEAD,
    ) -> None:
        """Removes the items and, in the same transaction, queues each (tenant, memory)'s
        boundaries in `ahead` that have no item due at that instant yet."""

    def expand(self, owner: str, item: OutboxItem, memory_ids: list[str], now: datetime) -> bool:
        """In one transaction: a REFILL row per memory id, and the tenant item completed.
        False (and nothing written) when the item's lease was lost to another worker."""

    def retry(self, owner: str, items: list[OutboxItem], error: str, now: datetime) -> None:
        """The items failed: each is due again after its own growing backoff."""

    def release(self, owner: str, ids: list[int] | None, error: str) -> None:
        """Hands leased items back as they were (all of `owner`'s when `ids` is None)."""

    def depth(self, now: datetime) -> tuple[int, datetime | None]:
        """Due items waiting, and the oldest one's creation time."""


class ImportQueue(Protocol):
    """Pending import batches across tenants, for the workers that parse them."""

    def lease(self, owner: str, now: datetime, lease_seconds: float) -> tuple[str, str] | None:
        """Leases the oldest unleased pending batch and counts the attempt, committed before
        the parse starts; returns (tenant, batch). Replicas never hold the same batch."""


class UnitOfWork(Protocol):
    """One transaction over one tenant's data."""

    @property
    def tenant_id(self) -> str: ...
    @property
    def memories(self) -> MemoryRepository: ...
    @property
    def transcript(self) -> TranscriptRepository: ...
    @property
    def grants(self) -> GrantRepository: ...
    @property
    def idempotency(self) -> IdempotencyRepository: ...
    @property
    def outbox(self) -> OutboxRepository: ...
    @property
    def overrides(self) -> OverrideRepository: ...
    @property
    def customers(self) -> CustomerRepository: ...
    @property
    def imports(self) -> ImportRepository: ...
    @property
    def usage(self) -> UsageRepository: ...
    @property
    def archive(self) -> ArchiveRepository: ...
    @property
    def documents(self) -> DocumentRepository: ...
    @property
    def review(self) -> ReviewRepository: ...
    @property
    def tasks(self) -> TaskRepository: ...

    def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(
        self, tenant_id: str, *, write: bool
    ) -> AbstractContextManager[UnitOfWork, bool | None]: ...


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SecretScanner(Protocol):
    """Finds key and token formats (cloud keys, API tokens, JWTs, private keys, high-entropy
    strings) in text; `memory_service.kernel.domain.secrets` adds the rules for natural language."""

    def find(self, text: str) -> str:
        """The kind of secret found ("" when none); the text itself is never returned."""


class SearchUnavailable(Exception):
    """Search cannot answer now (turned off, breaker open, too slow, index incomplete): recall
    then answers degraded instead of failing. `reason` is for operators."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Search(Protocol):
    """The search index as recall and the index watch use it: candidates only, which the
    records then decide (I8). Implemented by `adapters.retrieval_client.RetrievalClient`."""

    @property
    def search_timeout(self) -> float:
        """The longest any search may take, and a recall's deadline when the caller set
        none."""

    def refusal(self) -> str | None:
        """Why a search would be refused right now without being tried (the sidecar is known
        to be down), else None: checked before any other work of a recall."""

    def search(
        self,
        tenant_id: str,
        query: str,
        limit: int,
        scopes: Sequence[tuple[str, str]],
        deadline: float | None,
        own_deadline: bool = False,
    ) -> list[Candidate]:
        """Candidates by `deadline` (a `time.monotonic()` instant); `SearchUnavailable` else.
        `own_deadline`: the deadline comes from `search_timeout` (the caller set none), which
        names the reason when no time is left. Whatever set it, a search that had at least half
        of `search_timeout` and missed it counts against the sidecar, a shorter one does not."""

    def tenant_points(self, tenant_id: str) -> int:
        """How many entries the index holds for the tenant."""


class ImportWork(Protocol):
    """The background import worker, told when a batch was queued."""

    def submit(self, tenant_id: str, batch_id: str) -> None:
        """Any worker may take the batch; this one just looks now."""
