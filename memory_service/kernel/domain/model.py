"""Domain records. Plain dataclasses so rules can be tested without a database or a wire format."""

from __future__ import annotations

import enum
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime


class ScopeType(enum.StrEnum):
    USER = "USER"
    CUSTOMER = "CUSTOMER"
    ORGANIZATION = "ORGANIZATION"


class MemoryKind(enum.StrEnum):
    PREFERENCE = "PREFERENCE"
    FACT = "FACT"


class RevisionStatus(enum.StrEnum):
    """SUPERSEDED is never stored: it follows from `superseded_from` and the clock."""

    CANDIDATE = "CANDIDATE"
    ACTIVE = "ACTIVE"
    SUPERSEDED = "SUPERSEDED"
    REJECTED = "REJECTED"
    DELETED = "DELETED"


class Speaker(enum.StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    THIRD_PARTY = "THIRD_PARTY"
    TOOL = "TOOL"


class ProvenanceMethod(enum.StrEnum):
    USER_STATEMENT = "USER_STATEMENT"
    USER_CONFIRMATION = "USER_CONFIRMATION"
    ASSISTANT_INFERENCE = "ASSISTANT_INFERENCE"
    IMPORT = "IMPORT"
    RULE = "RULE"
    DOCUMENT = "DOCUMENT"  # a passage of a document at its source
    REVIEW_DECISION = "REVIEW_DECISION"  # a person resolved a conflict in the review queue


class EvidenceType(enum.StrEnum):
    TRANSCRIPT_MESSAGE = "TRANSCRIPT_MESSAGE"
    IMPORT_ITEM = "IMPORT_ITEM"
    DOCUMENT = "DOCUMENT"  # ref: the document's URI; the version and excerpt ride along
    KEPT_MEMORY = "KEPT_MEMORY"  # ref: memories/{id}, the memory a conflict resolution kept


class TurnStatus(enum.StrEnum):
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


ADMIN_ROLE = "admin"
RESTORER_ROLE = "restorer"  # may merge an export into a tenant that already has memories
DOCUMENT_CONNECTOR_ROLE = "document-connector"


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """32 hex characters: 48-bit milliseconds then 80 random bits, so ids sort by age."""
    millis = int(time.time() * 1000) & ((1 << 48) - 1)
    return f"{millis:012x}{os.urandom(10).hex()}"


@dataclass(frozen=True)
class Identity:
    """Who is calling, as established from verified credentials only."""

    tenant_id: str
    user_id: str
    roles: frozenset[str] = frozenset()

    @property
    def is_admin(self) -> bool:
        return ADMIN_ROLE in self.roles


@dataclass(frozen=True)
class Scope:
    type: ScopeType
    id: str


@dataclass(frozen=True)
class EvidenceRef:
    type: EvidenceType
    ref: str  # the evidence's resource name


@dataclass(frozen=True)
class Provenance:
    speaker: Speaker
    method: ProvenanceMethod
    evidence: EvidenceRef
    quote: str = ""
    source_time: datetime | None = None
    document_version: str = ""  # DOCUMENT evidence: the version read
    excerpt: str = ""  # DOCUMENT evidence: the passage that supports the value


@dataclass(frozen=True)
class Confirmation:
    """`restored_by` is set when the confirmation came back from an export: the user confirmed
    at `confirm_time` in the exporting store, and `restored_by` brought it here at
    `restore_time`; nobody confirmed again."""

    user_id: str
    confirm_time: datetime
    restored_by: str = ""
    restore_time: datetime | None = None


@dataclass
class Revision:
    memory_id: str
    number: int
    value: str
    valid_from: datetime | None
    valid_until: datetime | None
    status: RevisionStatus
    provenance: Provenance
    create_time: datetime
    author_user_id: str
    replaces_number: int = 0
    superseded_from: datetime | None = None
    superseded_by_number: int = 0
    confirmation: Confirmation | None = None
    status_reason: str = ""  # why a revision is a CANDIDATE, e.g. its value is not grounded
    # When the document it cites was reported at another version; None while it is current.
    source_change_time: datetime | None = None


@dataclass
class Memory:
    id: str
    tenant_id: str
    scope: Scope
    key: str
    key_context: str
    kind: MemoryKind
    version: int
    create_time: datetime
    update_time: datetime
    delete_time: datetime | None = None
    revisions: list[Revision] = field(default_factory=list)
    key_hash: str = ""  # set on deletion: the marker keeps a hash, not the key

    @property
    def deleted(self) -> bool:
        return self.delete_time is not None

    @property
    def latest(self) -> Revision | None:
        return self.revisions[-1] if self.revisions else None

    def revision(self, number: int) -> Revision | None:
        for revision in self.revisions:
            if revision.number == number:
                return revision
        return None


@dataclass(frozen=True)
class DocumentVersion:
    """The version of a document its connector last reported; the document stays at its source."""

    tenant_id: str
    uri: str
    version: str
    report_time: datetime
    reported_by: str


@dataclass(frozen=True)
class Message:
    id: str
    tenant_id: str
    conversation_id: str
    sequence: int
    speaker: Speaker
    text: str
    status: TurnStatus
    author_user_id: str
    create_time: datetime


@dataclass(frozen=True)
class Conversation:
    tenant_id: str
    id: str
    owner_user_id: str
    create_time: datetime


class TaskState(enum.StrEnum):
    OPEN = "OPEN"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"


@dataclass(frozen=True)
class TaskCheckpoint:
    """One step of a task's progress. Task state, never memory: it lives until the task ends."""

    sequence: int
    step: int
    total_steps: int
    status_text: str
    payload_json: str  # "" when none; else a JSON object
    create_time: datetime


@dataclass(frozen=True)
class Task:
    """Keyed by (owner, id) like a conversation: each user names their own tasks."""

    tenant_id: str
    id: str
    owner_user_id: str
    state: TaskState
    checkpoint_count: int
    create_time: datetime
    update_time: datetime
    end_time: datetime | None = None
    current: TaskCheckpoint | None = None


@dataclass(frozen=True)
class CustomerGrant:
    tenant_id: str
    user_id: str
    customer_id: str
    granted_by_user_id: str
    create_time: datetime


class ParentType(enum.StrEnum):
    CONVERSATION = "CONVERSATION"
    TASK = "TASK"


@dataclass(frozen=True)
class Override:
    """ "For now": bound to one conversation or task, expiring, never durable memory."""

    id: str
    tenant_id: str
    parent_type: ParentType
    parent_id: str
    key: str
    key_context: str
    scope: Scope
    value: str
    expire_time: datetime
    create_time: datetime
    author_user_id: str
    evidence_ref: str = ""

    def active_at(self, instant: datetime) -> bool:
        return self.create_time <= instant < self.expire_time


@dataclass(frozen=True)
class Customer:
    tenant_id: str
    customer_id: str
    display_name: str
    create_time: datetime


class ArchiveFormat(enum.StrEnum):
    CHATGPT_CONVERSATIONS = "CHATGPT_CONVERSATIONS"
    MEMORY_SUMMARY = "MEMORY_SUMMARY"
    CRMMEM_EXPORT = "CRMMEM_EXPORT"


class ImportState(enum.StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class ItemOutcome(enum.StrEnum):
    ACCEPTED = "ACCEPTED"
    SKIPPED = "SKIPPED"
    UNRESOLVED = "UNRESOLVED"
    MISSING_ATTACHMENT = "MISSING_ATTACHMENT"


class SkipReason(enum.StrEnum):
    NONE = "NONE"
    SECRET = "SECRET"
    ASSISTANT_AUTHORED = "ASSISTANT_AUTHORED"
    DUPLICATE = "DUPLICATE"
    UNSUPPORTED_CONTENT = "UNSUPPORTED_CONTENT"
    ID_COLLISION = "ID_COLLISION"  # restore: the id is used in this store
    KEY_DELETED = "KEY_DELETED"  # restore: the key was deleted here after it was said
    KEY_HELD = "KEY_HELD"  # restore: another live memory holds the key here


class RestoreMode(enum.StrEnum):
    """CLEAN: only into a tenant with no memories. MERGE: into one with data, refusing
    conflicts record by record (role `restorer`)."""

    CLEAN = "CLEAN"
    MERGE = "MERGE"


class ItemReview(enum.StrEnum):
    PENDING = "PENDING"
    CONFIRMED = "CONFIRMED"
    REJECTED = "REJECTED"
    NONE = "NONE"


@dataclass
class ImportBatch:
    id: str
    tenant_id: str
    user_id: str
    format: ArchiveFormat
    archive_sha256: str
    state: ImportState
    create_time: datetime
    error: str = ""
    accepted_count: int = 0
    skipped_count: int = 0
    unresolved_count: int = 0
    missing_count: int = 0
    complete_time: datetime | None = None
    attempts: int = 0  # background parses started, counted before each one
    restore_mode: RestoreMode = RestoreMode.CLEAN  # restores only


@dataclass
class ImportItem:
    id: str
    batch_id: str
    tenant_id: str
    user_id: str
    ordinal: int
    outcome: ItemOutcome
    skip_reason: SkipReason
    speaker: Speaker
    text: str
    lineage_hash: str
    source_time: datetime | None
    source_ref: str
    attachment: str = ""
    review: ItemReview = ItemReview.NONE
    memory_id: str = ""
