"""Tables. Times are stored as naive UTC so SQLite and PostgreSQL compare them the same way."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from memory_service.kernel.domain import rules

ID = String(32)
NAME = String(rules.MAX_ID_CHARS)
EVIDENCE_REF = String(rules.MAX_EVIDENCE_REF_CHARS)
SOURCE_REF = String(rules.MAX_SOURCE_REF_CHARS)
DISPLAY_NAME = String(rules.MAX_DISPLAY_NAME_CHARS)
DOCUMENT_VERSION = String(rules.MAX_DOCUMENT_VERSION_CHARS)


class UtcDateTime(TypeDecorator[datetime]):
    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Callable[[Any], Any]:
        """`process_result_value` after the dialect's own parsing, in one function: a context
        reads several hundred times."""
        parse: Callable[[Any], Any] | None = self.impl_instance.result_processor(dialect, coltype)

        def process(value: Any) -> datetime | None:
            if value is None:
                return None
            parsed: datetime = value if parse is None else parse(value)
            return parsed.replace(tzinfo=UTC)

        if dialect.name != "sqlite":
            return process

        def from_text(value: Any) -> datetime | None:
            """SQLite keeps UTC times as ISO text: read straight into an aware datetime, about
            five times cheaper than the dialect's parser and a `replace`."""
            if value is None:
                return None
            try:
                return datetime.fromisoformat(value + "+00:00")
            except (TypeError, ValueError):  # text of another shape
                return process(value)

        return from_text


class Base(DeclarativeBase):
    pass


class MemoryRow(Base):
    __tablename__ = "memories"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(NAME)
    scope_type: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(NAME)
    key: Mapped[str] = mapped_column(NAME)
    key_context: Mapped[str] = mapped_column(NAME)
    kind: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer)
    # True while live, NULL once deleted: the unique key below then admits a new live memory.
    live: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    update_time: Mapped[datetime] = mapped_column(UtcDateTime)
    delete_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    key_hash: Mapped[str] = mapped_column(String(64), server_default="")

    __table_args__ = (
        UniqueConstraint(
            "tenant_id", "scope_type", "scope_id", "key", "key_context", "live",
            name="uq_memories_live_key",
        ),
        # Covering: a context tests scope and liveness without reading the table.
        Index("ix_memories_tenant_scope", "tenant_id", "id", "scope_type", "scope_id", "live"),
        # A caller's subjects, each an index range in id order.
        Index("ix_memories_subject", "tenant_id", "scope_type", "scope_id", "live", "id"),
        Index("ix_memories_key_hash", "tenant_id", "key_hash"),
    )  # fmt: skip


class RevisionRow(Base):
    __tablename__ = "memory_revisions"

    memory_id: Mapped[str] = mapped_column(ID, ForeignKey("memories.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(NAME)
    value: Mapped[str] = mapped_column(Text)
    valid_from: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    valid_until: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    superseded_from: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    superseded_by_number: Mapped[int] = mapped_column(Integer)
    replaces_number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    speaker: Mapped[str] = mapped_column(String(16))
    method: Mapped[str] = mapped_column(String(32))
    evidence_type: Mapped[str] = mapped_column(String(32))
    evidence_ref: Mapped[str] = mapped_column(EVIDENCE_REF)
    quote: Mapped[str] = mapped_column(Text)
    source_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    author_user_id: Mapped[str] = mapped_column(NAME)
    confirmed_by: Mapped[str | None] = mapped_column(NAME, nullable=True)
    confirm_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # A confirmation brought back by a restore: who restored it and when.
    confirm_restored_by: Mapped[str | None] = mapped_column(NAME, nullable=True)
    confirm_restore_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    status_reason: Mapped[str] = mapped_column(Text, server_default="")
    document_version: Mapped[str] = mapped_column(DOCUMENT_VERSION, server_default="")
    excerpt: Mapped[str] = mapped_column(Text, server_default="")
    source_change_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)

    __table_args__ = (
        # A memory's revisions by tenant and memory, in order (every read of memories).
        Index("ix_memory_revisions_tenant_memory", "tenant_id", "memory_id", "number"),
        # Finds the revisions citing one document when its connector reports a new version.
        Index("ix_memory_revisions_evidence", "tenant_id", "evidence_type", "evidence_ref"),
    )


class DocumentRow(Base):
    """The version of each document its connector last reported; never the document."""

    __tablename__ = "documents"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    uri: Mapped[str] = mapped_column(EVIDENCE_REF, primary_key=True)
    version: Mapped[str] = mapped_column(DOCUMENT_VERSION)
    report_time: Mapped[datetime] = mapped_column(UtcDateTime)
    reported_by: Mapped[str] = mapped_column(NAME)


class ConversationRow(Base):
    """Keyed by owner: each user names their own conversations, so ids can neither be squatted
    by another user nor tell anyone that another user's conversation exists."""

    __tablename__ = "conversations"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    owner_user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    id: Mapped[str] = mapped_column(NAME, primary_key=True)
    last_sequence: Mapped[int] = mapped_column(Integer)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)


class MessageRow(Base):
    __tablename__ = "transcript_messages"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(NAME)
    conversation_id: Mapped[str] = mapped_column(NAME)
    sequence: Mapped[int] = mapped_column(Integer)
    speaker: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    # Only a conversation's owner appends to it, so the author is also the conversation's owner.
    author_user_id: Mapped[str] = mapped_column(NAME)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)

    __table_args__ = (
        UniqueConstraint(
            "tenant_id", "author_user_id", "conversation_id", "sequence",
            name="uq_transcript_messages_owner_sequence",
        ),
    )  # fmt: skip


class CustomerGrantRow(Base):
    __tablename__ = "customer_grants"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    customer_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    granted_by_user_id: Mapped[str] = mapped_column(NAME)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)


class IdempotencyRow(Base):
    __tablename__ = "idempotency_keys"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    request_id: Mapped[str] = mapped_column(String(rules.MAX_REQUEST_ID_CHARS), primary_key=True)
    method: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    response: Mapped[bytes] = mapped_column(LargeBinary)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    # The memory the response shows: a deletion finds and redacts it by this.
    memory_id: Mapped[str | None] = mapped_column(ID, nullable=True)

    __table_args__ = (Index("ix_idempotency_keys_memory", "tenant_id", "memory_id"),)


class IdempotencyShownRow(Base):
    """Every memory a batch's stored response shows (one response, many memories), so that
    deleting any one of them redacts the response, as `IdempotencyRow.memory_id` does for one."""

    __tablename__ = "idempotency_shown"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    memory_id: Mapped[str] = mapped_column(ID, primary_key=True)
    user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    request_id: Mapped[str] = mapped_column(String(rules.MAX_REQUEST_ID_CHARS), primary_key=True)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime, index=True)


class OutboxRow(Base):
    """Index work written in the same transaction as the record change it follows."""

    __tablename__ = "index_outbox"

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    tenant_id: Mapped[str] = mapped_column(NAME)
    memory_id: Mapped[str] = mapped_column(ID)  # empty for a whole-tenant rebuild or resync
    due_time: Mapped[datetime] = mapped_column(UtcDateTime)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    attempts: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16), server_default="memory")
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        Index("ix_index_outbox_due_time", "due_time"),
        # The drain finds a memory's queued boundaries by it.
        Index("ix_index_outbox_memory", "memory_id", "due_time"),
    )


class OverrideRow(Base):
    """A temporary instruction on a conversation or task; never durable memory."""

    __tablename__ = "overrides"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(NAME)
    parent_type: Mapped[str] = mapped_column(String(16))
    parent_id: Mapped[str] = mapped_column(NAME)
    key: Mapped[str] = mapped_column(NAME)
    key_context: Mapped[str] = mapped_column(NAME)
    scope_type: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(NAME)
    value: Mapped[str] = mapped_column(Text)
    expire_time: Mapped[datetime] = mapped_column(UtcDateTime)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    author_user_id: Mapped[str] = mapped_column(NAME)
    evidence_ref: Mapped[str] = mapped_column(EVIDENCE_REF)

    __table_args__ = (
        Index("ix_overrides_parent", "tenant_id", "parent_type", "parent_id", "expire_time"),
    )


class CustomerRow(Base):
    """The tenant's customer directory, so a spoken name can be resolved (or found ambiguous)."""

    __tablename__ = "customers"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    customer_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    display_name: Mapped[str] = mapped_column(DISPLAY_NAME)
    match_name: Mapped[str] = mapped_column(DISPLAY_NAME)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)

    __table_args__ = (Index("ix_customers_match_name", "tenant_id", "match_name"),)


class ImportBatchRow(Base):
    __tablename__ = "import_batches"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(NAME)
    user_id: Mapped[str] = mapped_column(NAME)
    format: Mapped[str] = mapped_column(String(32))
    archive_sha256: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    error: Mapped[str] = mapped_column(Text)
    # The raw archive is kept only until it is parsed: it may hold secrets.
    archive: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    accepted_count: Mapped[int] = mapped_column(Integer)
    skipped_count: Mapped[int] = mapped_column(Integer)
    unresolved_count: Mapped[int] = mapped_column(Integer)
    missing_count: Mapped[int] = mapped_column(Integer)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    complete_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # Background parses started (counted before each) and the replica holding the batch.
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    restore_mode: Mapped[str] = mapped_column(String(16), server_default="CLEAN")

    __table_args__ = (
        UniqueConstraint(
            "tenant_id", "user_id", "archive_sha256", name="uq_import_batches_archive"
        ),
        Index("ix_import_batches_state", "state", "create_time"),
    )


class ImportItemRow(Base):
    __tablename__ = "import_items"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    batch_id: Mapped[str] = mapped_column(ID)
    tenant_id: Mapped[str] = mapped_column(NAME)
    user_id: Mapped[str] = mapped_column(NAME)
    ordinal: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(24))
    skip_reason: Mapped[str] = mapped_column(String(24))
    speaker: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    lineage_hash: Mapped[str] = mapped_column(String(64))
    source_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    source_ref: Mapped[str] = mapped_column(SOURCE_REF)
    attachment: Mapped[str] = mapped_column(SOURCE_REF)
    review: Mapped[str] = mapped_column(String(16))
    memory_id: Mapped[str] = mapped_column(String(32))

    __table_args__ = (
        Index("ix_import_items_batch", "tenant_id", "batch_id", "ordinal"),
        Index("ix_import_items_lineage", "tenant_id", "user_id", "lineage_hash"),
        Index("ix_import_items_memory", "tenant_id", "memory_id"),
    )


class MemoryUsageRow(Base):
    """When a memory was last used in a context or a recall. Kept apart from `memories` so the
    batched usage writes never contend with corrections for the memory's row; a memory with
    no row has not been used since usage tracking began."""

    __tablename__ = "memory_usage"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    memory_id: Mapped[str] = mapped_column(ID, primary_key=True)
    last_used_time: Mapped[datetime] = mapped_column(UtcDateTime)

    __table_args__ = (Index("ix_memory_usage_last_used", "tenant_id", "last_used_time"),)


class TaskRow(Base):
    """Task state, never memory. Keyed by owner like conversations: a task id names the
    caller's own task, so it can neither be squatted nor tell anyone it is in use."""

    __tablename__ = "tasks"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    owner_user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    id: Mapped[str] = mapped_column(NAME, primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    checkpoint_count: Mapped[int] = mapped_column(Integer)
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
    update_time: Mapped[datetime] = mapped_column(UtcDateTime)
    end_time: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)

    __table_args__ = (
        Index("ix_tasks_id", "tenant_id", "id"),
        Index("ix_tasks_end_time", "end_time"),
    )


class TaskCheckpointRow(Base):
    __tablename__ = "task_checkpoints"

    tenant_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    owner_user_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    task_id: Mapped[str] = mapped_column(NAME, primary_key=True)
    sequence: Mapped[int] = mapped_column(Integer, primary_key=True)
    step: Mapped[int] = mapped_column(Integer)
    total_steps: Mapped[int] = mapped_column(Integer)
    status_text: Mapped[str] = mapped_column(Text)
    payload: Mapped[str] = mapped_column(Text)  # a JSON object, or "" for none
    create_time: Mapped[datetime] = mapped_column(UtcDateTime)
