"""Facts that come from documents: the document stays at its source, a revision keeps its
reference, the version read and the supporting excerpt. When the document's connector reports
another version, every memory that rests on an older one is marked "source changed" in the
same transaction, so contexts flag it and the review queue lists it (docs/behaviour.md,
"Document facts")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.authorization import require_document_connector
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import (
    DocumentVersion,
    EvidenceType,
    Identity,
    Memory,
    Revision,
    RevisionStatus,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector

MAX_NAMED_MEMORIES = 1000  # a report counts every memory it marks but names at most this many
VERSION_RULE = "must be 1-128 characters of [A-Za-z0-9._:@+=-]"


def document_ref(uri: str, version: str, field: str) -> tuple[str, str]:
    """(uri, version) of a document reference, or InvalidArgument naming `field`.uri/.version.
    The one check for every door a reference comes in by: the API and restores."""
    problem = rules.document_uri_problem(uri)
    if problem is not None:
        raise InvalidArgument(f"{field}.uri", problem)
    return uri, document_version(version, field)


def document_version(version: str, field: str) -> str:
    if not rules.DOCUMENT_VERSION_PATTERN.fullmatch(version):
        raise InvalidArgument(f"{field}.version", VERSION_RULE)
    return version


def document_excerpt(excerpt: str, field: str) -> str:
    """The supporting passage, trimmed; a document fact without one has no evidence."""
    excerpt = excerpt.strip()
    if not excerpt:
        raise InvalidArgument(
            f"{field}.excerpt", "is required: the passage that supports the value"
        )
    return excerpt


@dataclass(frozen=True)
class DocumentReport:
    flagged: list[str]  # memory ids, oldest first
    previous_version: str  # '' when the document was not known


def rests_on_other_version(revision: Revision, uri: str, version: str, now: datetime) -> bool:
    """The revision cites another version of the document and still has authority now or
    later (active, not superseded, not expired); candidates and the past are left alone."""
    provenance = revision.provenance
    return (
        provenance.evidence.type is EvidenceType.DOCUMENT
        and provenance.evidence.ref == uri
        and provenance.document_version != version
        and revision.source_change_time is None
        and rules.state_at(revision, now) is RevisionStatus.ACTIVE
        and (revision.valid_until is None or revision.valid_until > now)
    )


def refuse_secret_in_uri(secrets: SecretDetector, field: str, uri: str) -> None:
    """A document's address is kept and shown to every reader of the memory, and its query and
    fragment are where signed links and access tokens travel: a secret there refuses the write.
    The path names the document (often a long random id), so it is not scanned."""
    marks = [index for index in (uri.find("?"), uri.find("#")) if index >= 0]
    if marks:
        secrets.refuse(field, uri[min(marks) :])


class DocumentUseCases:
    def __init__(self, secrets: SecretDetector) -> None:
        self._secrets = secrets

    def report_version(
        self, uow: UnitOfWork, identity: Identity, uri: str, version: str, now: datetime
    ) -> DocumentReport:
        require_document_connector(identity)
        refuse_secret_in_uri(self._secrets, "document.uri", uri)
        previous = uow.documents.get(uri)
        if previous is None or previous.version != version:
            uow.documents.put(DocumentVersion(uow.tenant_id, uri, version, now, identity.user_id))
        flagged = [
            memory.id
            for memory in uow.memories.citing_document(uri)
            if self._mark(uow, memory, uri, version, now)
        ]
        return DocumentReport(flagged, previous.version if previous else "")

    @staticmethod
    def _mark(uow: UnitOfWork, memory: Memory, uri: str, version: str, now: datetime) -> bool:
        marked = False
        for revision in memory.revisions:
            if rests_on_other_version(revision, uri, version, now):
                marked = (
                    uow.documents.mark_source_changed(memory.id, revision.number, now) or marked
                )
        return marked
