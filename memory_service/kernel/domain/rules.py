"""Pure rules about time and state; who may say what is in authority.py and authorization.py."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import (
    EvidenceRef,
    EvidenceType,
    Memory,
    Provenance,
    Revision,
    RevisionStatus,
    ScopeType,
)

# Whole-string patterns: always use them with `fullmatch` (with `match`, `$` also matches before
# a trailing newline, and `acme\n` would be a tenant of its own).
SUBJECT_ID = r"[A-Za-z0-9._@:-]{1,128}"
CONVERSATION_ID = r"[A-Za-z0-9._-]{1,128}"
MEMORY_ID = r"[0-9a-f]{32}"
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_.-]{0,127}")
SUBJECT_ID_PATTERN = re.compile(SUBJECT_ID)
# A stable document reference: an absolute URI of printable ASCII without white space (other
# characters percent-encoded), at most MAX_EVIDENCE_REF_CHARS; `document_uri_problem` adds that
# it carries no user name or password.
DOCUMENT_URI_PATTERN = re.compile(r"[a-z][a-z0-9+.-]{0,31}:[!-~]+")
DOCUMENT_VERSION_PATTERN = re.compile(r"[A-Za-z0-9._:@+=-]{1,128}")
CONVERSATION_ID_PATTERN = re.compile(CONVERSATION_ID)

# Sizes of text, in characters. The storage models take their column lengths from here, and the
# API edge refuses longer input, so SQLite and PostgreSQL accept exactly the same requests.
MAX_ID_CHARS = 128  # tenant, user, customer, key, conversation ids
MAX_REQUEST_ID_CHARS = 64
MAX_EVIDENCE_REF_CHARS = 320  # conversations/{id}/messages/{id}, importBatches/{id}/items/{id}
MAX_RESOURCE_NAME_CHARS = 320  # the longest is users/{user}/customerGrants/{customer}
MAX_DISPLAY_NAME_CHARS = 256
MAX_SOURCE_REF_CHARS = 512  # where an archive item came from, and an attachment's name
# Items in a repeated request field (documented in the protos and docs/limits.md).
MAX_CONTEXT_CUSTOMERS = 100
MAX_EVIDENCE_MESSAGES = 20
MAX_REPEATED_ITEMS = 100  # any other repeated field of a request
MAX_BATCH_ITEMS = 100  # items of one BatchCreateMemories or BatchAppendMessages
MAX_VALUE_CHARS = 4000
MAX_QUOTE_CHARS = 2000
MAX_EXCERPT_CHARS = 1000  # a document's supporting passage: a passage, never the document
MAX_DOCUMENT_VERSION_CHARS = 128
MAX_MESSAGE_CHARS = 32000
MAX_QUERY_CHARS = 2000
MAX_FILTER_CHARS = 200
MAX_PAGE_TOKEN_CHARS = 1024
MAX_TASK_STATUS_CHARS = 2000
# A checkpoint's structured payload, in bytes of its protobuf encoding (its JSON is about as long).
MAX_TASK_PAYLOAD_BYTES = 16 * 1024
MAX_TASK_STEP = 1_000_000
# Numbers kept in 32-bit INTEGER columns (revision numbers, sequences, ordinals, counts).
MAX_STORED_INT = 2**31 - 1
MAX_REVISION_NUMBER = 999_999_999  # memories/{id}/revisions/{1-9 digits}


def text_problem(text: str, max_chars: int) -> str | None:
    """Why `text` cannot be stored, or None. PostgreSQL refuses NUL in text; columns have sizes."""
    if "\x00" in text:
        return "must not contain NUL characters"
    if len(text) > max_chars:
        return f"is longer than {max_chars} characters"
    return None


def document_uri_problem(uri: str) -> str | None:
    """Why `uri` is not a stable document reference, or None."""
    if not uri:
        return "is required"
    if len(uri) > MAX_EVIDENCE_REF_CHARS:
        return f"is longer than {MAX_EVIDENCE_REF_CHARS} characters"
    if not DOCUMENT_URI_PATTERN.fullmatch(uri):
        return "must be an absolute URI (scheme:rest) of printable ASCII without white space"
    rest = uri.split(":", 1)[1]
    if rest.startswith("//") and "@" in rest[2:].split("/", 1)[0]:
        return "must not carry a user name or password"
    return None


def state_at(revision: Revision, instant: datetime) -> RevisionStatus:
    """A revision replaced from a future instant stays ACTIVE until that instant arrives."""
    if (
        revision.status is RevisionStatus.ACTIVE
        and revision.superseded_from is not None
        and revision.superseded_from <= instant
    ):
        return RevisionStatus.SUPERSEDED
    return revision.status


def applies_at(revision: Revision, instant: datetime) -> bool:
    if revision.status is not RevisionStatus.ACTIVE:
        return False
    if revision.valid_from is not None and instant < revision.valid_from:
        return False
    if revision.valid_until is not None and instant >= revision.valid_until:
        return False
    return revision.superseded_from is None or instant < revision.superseded_from


def applicable_revision(memory: Memory, instant: datetime) -> Revision | None:
    """I1: supersession keeps active intervals disjoint, so at most one revision matches."""
    if memory.deleted:
        return None
    matches = [r for r in memory.revisions if applies_at(r, instant)]
    return matches[-1] if matches else None


def applicable_value(memory: Memory, instant: datetime) -> str | None:
    """The applicable value as values are compared (I12), or None when nothing applies."""
    revision = applicable_revision(memory, instant)
    return None if revision is None else normalize_for_match(revision.value)


def disagree(first: Memory, second: Memory, instant: datetime) -> bool:
    """Two memories of one key whose applicable values differ at `instant` (I12). Whether they
    can meet in one context is the caller's question (see context/domain/context.py,
    review/domain/review.py)."""
    values = (applicable_value(first, instant), applicable_value(second, instant))
    return None not in values and values[0] != values[1]


def source_changed(memory: Memory, instant: datetime) -> bool:
    """The applicable revision cites a document reported at another version since it was read."""
    revision = applicable_revision(memory, instant)
    return revision is not None and revision.source_change_time is not None


def supersede(memory: Memory, newcomer: Revision, effective_from: datetime) -> list[Revision]:
    """Make `newcomer` the only authority from `effective_from` on; returns the revisions changed.

    Every other active revision whose authority reaches past `effective_from` is cut there,
    which keeps active intervals disjoint (I1) while the past stays readable with `as_of`.
    """
    changed = []
    for revision in memory.revisions:
        if revision is newcomer or revision.status is not RevisionStatus.ACTIVE:
            continue
        if revision.superseded_from is not None and revision.superseded_from <= effective_from:
            continue
        if revision.valid_until is not None and revision.valid_until <= effective_from:
            continue
        revision.superseded_from = effective_from
        revision.superseded_by_number = newcomer.number
        changed.append(revision)
    return changed


def newest_active(memory: Memory) -> Revision | None:
    active = [r for r in memory.revisions if r.status is RevisionStatus.ACTIVE]
    return active[-1] if active else None


def check_interval(
    valid_from: datetime | None, valid_until: datetime | None, field_prefix: str
) -> None:
    if valid_from is not None and valid_until is not None and valid_until <= valid_from:
        raise InvalidArgument(f"{field_prefix}.valid_until", "must be later than valid_from")


def normalize_for_match(text: str) -> str:
    return " ".join(text.casefold().split())


def customer_match_name(display_name: str, field: str) -> str:
    """The name customers are looked up by; it fits the column it is stored in."""
    match_name = normalize_for_match(display_name)
    if len(match_name) > MAX_DISPLAY_NAME_CHARS:  # case folding can lengthen: ß -> ss
        raise InvalidArgument(
            field, f"is longer than {MAX_DISPLAY_NAME_CHARS} characters once case-folded"
        )
    return match_name


def quote_span(quote: str, evidence_text: str) -> tuple[str, int, int] | None:
    """Where the quote occurs in the normalized evidence, as whole words ('1500' is not quoted
    from '15000', nor 'call me' from 'recall me'): (normalized evidence, start, end) or None."""
    needle, text = normalize_for_match(quote), normalize_for_match(evidence_text)
    if not needle:
        return None
    before = r"(?<!\w)" if re.match(r"\w", needle[0]) else ""
    after = r"(?!\w)" if re.match(r"\w", needle[-1]) else ""
    match = re.search(before + re.escape(needle) + after, text)
    return None if match is None else (text, match.start(), match.end())


def quote_occurs(quote: str, evidence_text: str) -> bool:
    return quote_span(quote, evidence_text) is not None


def names_a_subject(scope_type: ScopeType) -> bool:
    """Whether a scope of this type carries an id: the organization is the tenant itself, so its
    scope id is always empty (and reads find organization memory under the empty id alone)."""
    return scope_type is not ScopeType.ORGANIZATION


def scoped_key_hash(scope_type: str, scope_id: str, key: str, key_context: str) -> str:
    """What a deletion marker keeps of a key: enough to refuse late work, not to read it."""
    return hashlib.sha256(f"{scope_type}|{scope_id}|{key}|{key_context}".encode()).hexdigest()


def evidence_lineage(provenance: Provenance) -> str:
    """What a deletion withdraws of a revision's evidence: the evidence's name, and for a
    document its version too (a deleted fact may come back from a later version, never from
    the version it was deleted from)."""
    return lineage_of(provenance.evidence, provenance.document_version)


def lineage_of(evidence: EvidenceRef, document_version: str) -> str:
    """`evidence_lineage` of evidence not resolved yet (a draft's)."""
    if evidence.type is EvidenceType.DOCUMENT:
        return f"{evidence.ref}@{document_version}"
    return evidence.ref


def lineage_ref_hash(evidence_ref: str) -> str:
    return "sha256:" + hashlib.sha256(evidence_ref.encode()).hexdigest()


def lineage_hash(text: str) -> str:
    """Identity of a statement across archives and revisions: its normalized text's hash."""
    return hashlib.sha256(normalize_for_match(text).encode()).hexdigest()
