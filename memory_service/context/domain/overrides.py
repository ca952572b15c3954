"""Overrides: "for now" lives on a conversation or task, expires, and never changes memory (I13)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memory_service.kernel.domain import conversations, names
from memory_service.kernel.domain.authorization import AccessPolicy
from memory_service.kernel.domain.errors import InvalidArgument, NotFound
from memory_service.kernel.domain.model import (
    Identity,
    Override,
    ParentType,
    Scope,
    ScopeType,
    new_id,
)
from memory_service.kernel.domain.ports import UnitOfWork
from memory_service.kernel.domain.secrets import SecretDetector
from memory_service.memories.public import default_subject

MAX_OVERRIDE_LIFETIME = timedelta(days=30)
MIN_TTL_SECONDS = 60


def visible_author(identity: Identity, parent_type: ParentType) -> str | None:
    """Whose overrides on a parent the caller sees (None: everybody's). A conversation is the
    caller's own (ids are per user), so its overrides are theirs; a task id grants nothing, so
    callers see the task overrides they made themselves, and admins every task override."""
    if parent_type is ParentType.TASK and identity.is_admin:
        return None
    return identity.user_id


@dataclass(frozen=True)
class Expiry:
    """Exactly one of the three is set."""

    expire_time: datetime | None = None
    end_of_day_time_zone: str = ""
    ttl_seconds: int = 0

    def resolve(self, now: datetime, field: str = "expiry") -> datetime:
        if self.expire_time is not None:
            if self.expire_time <= now:
                raise InvalidArgument(f"{field}.expire_time", "must be in the future")
            if self.expire_time - now > MAX_OVERRIDE_LIFETIME:
                raise InvalidArgument(f"{field}.expire_time", "must be at most 30 days ahead")
            return self.expire_time
        if self.end_of_day_time_zone:
            try:
                zone = ZoneInfo(self.end_of_day_time_zone)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, too long
                raise InvalidArgument(
                    f"{field}.end_of_day_time_zone", "is not an IANA time zone"
                ) from None
            local = now.astimezone(zone)
            midnight = (local + timedelta(days=1)).replace(
                hour=0, minute=0, second=0, microsecond=0
            )
            return midnight.astimezone(now.tzinfo)
        seconds = self.ttl_seconds  # compared as a number: timedelta overflows past 10**9 days
        if not MIN_TTL_SECONDS <= seconds <= MAX_OVERRIDE_LIFETIME.total_seconds():
            raise InvalidArgument(f"{field}.ttl_seconds", "must be between 60 and 2,592,000")
        return now + timedelta(seconds=seconds)


@dataclass(frozen=True)
class OverrideDraft:
    key: str
    key_context: str
    scope: Scope
    value: str
    evidence_ref: str = ""


class OverrideUseCases:
    def __init__(self, policy: AccessPolicy, secrets: SecretDetector | None = None) -> None:
        self._policy = policy
        self._secrets = secrets or SecretDetector()

    def create(
        self,
        uow: UnitOfWork,
        identity: Identity,
        parent: tuple[ParentType, str],
        draft: OverrideDraft,
        expiry: Expiry,
        now: datetime,
    ) -> Override:
        parent_type, parent_id = parent
        self._secrets.refuse("override.value", draft.value)
        self.require_parent(uow, identity, parent_type, parent_id)
        scope = default_subject(draft.scope, identity)
        if not self._policy.can_read(uow, identity, scope) or (
            scope.type is ScopeType.USER and scope.id != identity.user_id
        ):
            raise NotFound(f"{scope.type.value.lower()} scope {scope.id!r}")
        override = Override(
            id=new_id(),
            tenant_id=uow.tenant_id,
            parent_type=parent_type,
            parent_id=parent_id,
            key=draft.key,
            key_context=draft.key_context,
            scope=scope,
            value=draft.value,
            expire_time=expiry.resolve(now),
            create_time=now,
            author_user_id=identity.user_id,
            evidence_ref=draft.evidence_ref,
        )
        uow.overrides.add(override)
        return override

    def active(
        self,
        uow: UnitOfWork,
        identity: Identity,
        parent: tuple[ParentType, str],
        instant: datetime,
        after_id: str = "",
        limit: int = 1000,
        *,
        parent_checked: bool = False,
    ) -> list[Override]:
        """The overrides in force on `parent` that the caller may see. `parent_checked` skips
        the parent check for callers that made it already (the context builder)."""
        parent_type, parent_id = parent
        if not parent_checked:
            self.require_parent(uow, identity, parent_type, parent_id)
        # The filter runs in SQL, before the limit, so nobody can crowd out the caller's own.
        author = visible_author(identity, parent_type)
        return uow.overrides.active(parent_type, parent_id, instant, after_id, limit, author)

    @staticmethod
    def get(uow: UnitOfWork, identity: Identity, name: tuple[ParentType, str, str]) -> Override:
        """The override `name` names, active or expired, if the caller may see it; NOT_FOUND
        otherwise, exactly as for an id that does not exist."""
        parent_type, parent_id, override_id = name
        override = uow.overrides.get(override_id)
        author = visible_author(identity, parent_type)
        if (
            override is None
            or (override.parent_type, override.parent_id) != (parent_type, parent_id)
            or (author is not None and override.author_user_id != author)
        ):
            raise NotFound(names.override(*name))
        return override

    def delete(
        self, uow: UnitOfWork, identity: Identity, name: tuple[ParentType, str, str]
    ) -> Override:
        """Ends an override at once; whoever may read it may delete it."""
        override = self.get(uow, identity, name)
        if not uow.overrides.remove(override.id):
            raise NotFound(names.override(*name))
        return override

    @staticmethod
    def require_parent(
        uow: UnitOfWork, identity: Identity, parent_type: ParentType, parent_id: str
    ) -> None:
        if parent_type is ParentType.CONVERSATION:
            conversations.require_own(uow, identity, parent_id)
