"""Authority (I5, I14): whose words make a memory true at once, and whom a memory is about.

Evidence proves who spoke. Only the subject's own statement (or confirmation), grounded in what
it says, becomes ACTIVE when it is written; an assistant's inference, an import, a rule or a
third party's words wait as a CANDIDATE until the subject confirms them. Who may write a scope
at all is access (`authorization.py`), not authority: an admin may write organization memory,
but cannot put words in a user's mouth.
"""

from __future__ import annotations

from memory_service.kernel.domain.model import (
    Identity,
    Provenance,
    ProvenanceMethod,
    RevisionStatus,
    Scope,
    ScopeType,
    Speaker,
)
from memory_service.memories.domain import grounding

OWN_WORDS = frozenset({ProvenanceMethod.USER_STATEMENT, ProvenanceMethod.USER_CONFIRMATION})


def user_said_it(speaker: Speaker, method: ProvenanceMethod) -> bool:
    """The user spoke, stating or confirming the value (not inferred, imported or by a rule)."""
    return speaker is Speaker.USER and method in OWN_WORDS


def subjects_own_words(provenance: Provenance, scope: Scope, author_user_id: str) -> str:
    """'' when the evidence is the subject's own words; else why it is not.

    Who said it (the speaker and method) is not enough: for user memory the words must also
    come from the subject's own conversation (its author), not from somebody else's that
    quotes a user speaking.
    """
    if not user_said_it(provenance.speaker, provenance.method):
        return "not the subject's own statement"
    if scope.type is ScopeType.USER and author_user_id != scope.id:
        return "somebody else's words are not the subject's"
    return ""


def initial_status(
    scope: Scope,
    provenance: Provenance,
    author_user_id: str,
    evidence_text: str,
    value: str,
    *,
    review: bool = False,
) -> tuple[RevisionStatus, str]:
    """The status a new revision is written with, and why it is not ACTIVE ('' when it is).

    ACTIVE only for the subject's own words that support the value (the grounding rule in
    `grounding.py`); `review` keeps even those a CANDIDATE (proposals the tenant reviews).
    """
    if provenance.method is ProvenanceMethod.DOCUMENT:
        # A document is the subject's own words for customer and organization memory (the
        # writer, who may write that scope, vouches for citing it), never for a user's.
        if scope.type is ScopeType.USER:
            return RevisionStatus.CANDIDATE, "a document is not the user's own statement"
    else:
        not_own = subjects_own_words(provenance, scope, author_user_id)
        if not_own:
            return RevisionStatus.CANDIDATE, not_own
    ungrounded = grounding.grounding(value, provenance.quote, evidence_text)
    if ungrounded:
        return RevisionStatus.CANDIDATE, ungrounded
    if review:
        return RevisionStatus.CANDIDATE, "kept for review"
    return RevisionStatus.ACTIVE, ""


def inferred(provenance: Provenance) -> bool:
    """Shown on every revision: the value does not rest on the user's own words."""
    return not user_said_it(provenance.speaker, provenance.method)


def default_subject(scope: Scope, identity: Identity) -> Scope:
    """User memory without a subject is about the caller: nobody writes it for somebody else."""
    if scope.type is ScopeType.USER and not scope.id:
        return Scope(ScopeType.USER, identity.user_id)
    return scope


def own_memory(identity: Identity) -> Scope:
    """The caller's own user memory (where imports are confirmed into)."""
    return Scope(ScopeType.USER, identity.user_id)
