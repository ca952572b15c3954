"""Who may use a conversation, and for what (I6, I7). Every use case asks here.

Conversation ids are per user: `conversations/call-1` names the caller's own conversation of
that id, created when the caller first appends to it, so knowing or guessing an id grants
nothing and nobody can take an id from its owner.

Two questions, two answers:

- Acting in a conversation is for its owner only: appending a message, putting an override on
  it, building a context from its window. A message is evidence in its author's voice, and the
  subject's own words are what make a memory ACTIVE (`authority.py`); if anybody else, even a
  tenant admin, could append to a user's conversation, they could manufacture that user's
  statements. Overrides and the context window belong to the call the assistant is in, which
  is the caller's own.
- Reading evidence is for its owner or a tenant admin: admins review, export and delete every
  user's memory (I7) and must see the evidence those memories rest on. Reading changes nothing
  and speaks for nobody, so it grants nothing the admin could not already see.

Anything else answers exactly like a conversation that does not exist (NOT_FOUND).
"""

from __future__ import annotations

from datetime import datetime

from memory_service.kernel.domain import authorization, names
from memory_service.kernel.domain.errors import NotFound
from memory_service.kernel.domain.model import Conversation, Identity, Message
from memory_service.kernel.domain.ports import UnitOfWork


def open_for_append(
    uow: UnitOfWork, identity: Identity, conversation_id: str, now: datetime
) -> str:
    """The owner of the conversation the caller appends to: always the caller, whose
    conversation of that id is created on first use. Returns the owner's user id."""
    owner = identity.user_id
    if uow.transcript.get_conversation(owner, conversation_id) is None:
        uow.transcript.add_conversation(Conversation(uow.tenant_id, conversation_id, owner, now))
    return owner


def require_own(uow: UnitOfWork, identity: Identity, conversation_id: str) -> str:
    """The caller's own conversation, to act in (overrides, the context window); NOT_FOUND
    for anybody else's, admins included. Returns the owner's user id."""
    if uow.transcript.get_conversation(identity.user_id, conversation_id) is None:
        raise NotFound(names.conversation(conversation_id))
    return identity.user_id


def owner_for_reading(uow: UnitOfWork, identity: Identity, conversation_id: str) -> str:
    """Whose conversation `conversation_id` names for this reader: the caller's own; for an
    admin reviewing transcripts, otherwise the one user who has a conversation of that id
    (with several, the admin reaches each through the evidence their memories cite)."""
    return authorization.owner_for_reading(
        identity,
        uow.transcript.get_conversation(identity.user_id, conversation_id) is not None,
        lambda limit: uow.transcript.owners_of(conversation_id, limit=limit),
        names.conversation(conversation_id),
        "parent",
        "several users have a conversation of this id; an admin reviews another "
        "user's transcript through the evidence their memories cite",
    )


def may_read_evidence(identity: Identity, message: Message) -> bool:
    """A message may be cited or read as evidence by its author (the conversation's owner)
    and by tenant admins."""
    return identity.is_admin or message.author_user_id == identity.user_id


def readable_message(
    uow: UnitOfWork, identity: Identity, conversation_id: str, message_id: str
) -> Message | None:
    """The message, if the caller may read or cite it; None as for a message that is missing.
    Message ids are unique in the tenant, so the message is found by id alone (two users may
    both have a conversation called `call-1`); the name must still match it."""
    message = uow.transcript.get_message(message_id)
    if (
        message is None
        or message.conversation_id != conversation_id
        or not may_read_evidence(identity, message)
    ):
        return None
    return message
