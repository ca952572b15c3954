"""Resource names (AIP-122): every name the service reads from a client or writes into a reply is
spelled here, once. A name is parsed whole (`fullmatch`, so `memories/x\\n` or a name with an
extra segment is refused) and formatted from the same template, so what the service writes
it can always read back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import ParentType

_SEGMENT = re.compile(r"\{(\w+)\}")
REVISION_NUMBER = r"[1-9][0-9]{0,8}"  # up to rules.MAX_REVISION_NUMBER


@dataclass(frozen=True)
class Name:
    """One collection's name template, e.g. `memories/{memory}/revisions/{revision}`, with the
    id pattern of each variable segment."""

    template: str
    ids: dict[str, str]
    hint: str = ""  # added to the refusal, when the id's alphabet is worth saying
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _format: str = field(init=False, repr=False, compare=False)  # for str.format

    def __post_init__(self) -> None:
        pieces, formats, last = [], [], 0
        for variable in _SEGMENT.finditer(self.template):
            literal = self.template[last : variable.start()]
            pieces.append(re.escape(literal))
            pieces.append(f"({self.ids[variable.group(1)]})")
            formats.append(literal.replace("{", "{{").replace("}", "}}") + "{}")
            last = variable.end()
        pieces.append(re.escape(self.template[last:]))
        formats.append(self.template[last:].replace("{", "{{").replace("}", "}}"))
        object.__setattr__(self, "_pattern", re.compile("".join(pieces)))
        object.__setattr__(self, "_format", "".join(formats))

    def format(self, *ids: str | int) -> str:
        """The name of these ids, in the template's order (a context formats hundreds)."""
        return self._format.format(*ids)

    def match(self, name: str) -> tuple[str, ...] | None:
        """The ids in `name`, or None when it is not a name of this collection."""
        if len(name) > rules.MAX_RESOURCE_NAME_CHARS:
            return None
        found = self._pattern.fullmatch(name)
        return None if found is None else found.groups()

    def parse(self, name: str, field_path: str) -> tuple[str, ...]:
        """The ids in `name`; INVALID_ARGUMENT naming `field_path` when it is not one."""
        ids = self.match(name)
        if ids is None:
            raise InvalidArgument(field_path, f"must look like {self.template}{self.hint}")
        return ids


MEMORY = Name("memories/{memory}", {"memory": rules.MEMORY_ID})
REVISION = Name(
    "memories/{memory}/revisions/{number}", {"memory": rules.MEMORY_ID, "number": REVISION_NUMBER}
)
CONVERSATION = Name(
    "conversations/{conversation}",
    {"conversation": rules.CONVERSATION_ID},
    hint=" with [A-Za-z0-9._-]{1,128}",
)
MESSAGE = Name(
    "conversations/{conversation}/messages/{message}",
    {"conversation": rules.CONVERSATION_ID, "message": rules.MEMORY_ID},
)
TASK = Name("tasks/{task}", {"task": rules.CONVERSATION_ID}, hint=" with [A-Za-z0-9._-]{1,128}")
OVERRIDE_IN_CONVERSATION = Name(
    "conversations/{conversation}/overrides/{override}",
    {"conversation": rules.CONVERSATION_ID, "override": rules.MEMORY_ID},
)
OVERRIDE_IN_TASK = Name(
    "tasks/{task}/overrides/{override}",
    {"task": rules.CONVERSATION_ID, "override": rules.MEMORY_ID},
)
IMPORT_BATCH = Name("importBatches/{batch}", {"batch": rules.MEMORY_ID})
IMPORT_ITEM = Name(
    "importBatches/{batch}/items/{item}", {"batch": rules.MEMORY_ID, "item": rules.MEMORY_ID}
)
USER = Name("users/{user}", {"user": rules.SUBJECT_ID})
CUSTOMER = Name("customers/{customer}", {"customer": rules.SUBJECT_ID})
GRANT = Name(
    "users/{user}/customerGrants/{customer}",
    {"user": rules.SUBJECT_ID, "customer": rules.SUBJECT_ID},
)
WHOLE_TENANT = "tenant"  # the export parent that means every user's memory

_PARENTS = {ParentType.CONVERSATION: CONVERSATION, ParentType.TASK: TASK}
_OVERRIDES = {ParentType.CONVERSATION: OVERRIDE_IN_CONVERSATION, ParentType.TASK: OVERRIDE_IN_TASK}


# --- formatting ----------------------------------------------------------------------------------


def memory(memory_id: str) -> str:
    return MEMORY.format(memory_id)


def revision(memory_id: str, number: int) -> str:
    return REVISION.format(memory_id, number)


def conversation(conversation_id: str) -> str:
    return CONVERSATION.format(conversation_id)


def task(task_id: str) -> str:
    return TASK.format(task_id)


def message(conversation_id: str, message_id: str) -> str:
    return MESSAGE.format(conversation_id, message_id)


def parent(parent_type: ParentType, parent_id: str) -> str:
    return _PARENTS[parent_type].format(parent_id)


def override(parent_type: ParentType, parent_id: str, override_id: str) -> str:
    return _OVERRIDES[parent_type].format(parent_id, override_id)


def import_batch(batch_id: str) -> str:
    return IMPORT_BATCH.format(batch_id)


def import_item(batch_id: str, item_id: str) -> str:
    return IMPORT_ITEM.format(batch_id, item_id)


def customer(customer_id: str) -> str:
    return CUSTOMER.format(customer_id)


def grant(user_id: str, customer_id: str) -> str:
    return GRANT.format(user_id, customer_id)


# --- parsing -------------------------------------------------------------------------------------


def parse_memory(name: str, field_path: str = "name") -> str:
    return MEMORY.parse(name, field_path)[0]


def parse_revision(name: str, field_path: str = "name") -> tuple[str, int]:
    memory_id, number = REVISION.parse(name, field_path)
    return memory_id, int(number)


def parse_conversation(name: str, field_path: str = "parent") -> str:
    return CONVERSATION.parse(name, field_path)[0]


def parse_message(name: str, field_path: str) -> tuple[str, str]:
    conversation_id, message_id = MESSAGE.parse(name, field_path)
    return conversation_id, message_id


def parse_parent(name: str, field_path: str = "parent") -> tuple[ParentType, str]:
    """A conversation or a task: what overrides belong to."""
    for parent_type, pattern in _PARENTS.items():
        ids = pattern.match(name)
        if ids is not None:
            return parent_type, ids[0]
    raise InvalidArgument(field_path, "must look like conversations/{id} or tasks/{id}")


def parse_task(name: str, field_path: str = "task") -> str:
    ids = TASK.match(name)
    if ids is None:
        raise InvalidArgument(field_path, "must look like tasks/{id}")
    return ids[0]


def parse_override(name: str, field_path: str = "name") -> tuple[ParentType, str, str]:
    """(parent type, parent id, override id) of an override on a conversation or a task."""
    for parent_type, pattern in _OVERRIDES.items():
        ids = pattern.match(name)
        if ids is not None:
            return parent_type, ids[0], ids[1]
    raise InvalidArgument(
        field_path,
        "must look like conversations/{id}/overrides/{override} or tasks/{id}/overrides/{override}",
    )


def parse_customer(name: str, field_path: str = "name") -> str:
    return CUSTOMER.parse(name, field_path)[0]


def parse_import_batch(name: str, field_path: str = "name") -> str:
    return IMPORT_BATCH.parse(name, field_path)[0]


def parse_import_item(name: str, field_path: str = "name") -> tuple[str, str]:
    batch_id, item_id = IMPORT_ITEM.parse(name, field_path)
    return batch_id, item_id


def parse_grant(name: str, field_path: str = "name") -> tuple[str, str]:
    user_id, customer_id = GRANT.parse(name, field_path)
    return user_id, customer_id


def parse_export_parent(name: str, field_path: str = "parent") -> str | None:
    """`tenant` (None: the whole tenant) or `users/{user}`."""
    if name == WHOLE_TENANT:
        return None
    ids = USER.match(name)
    if ids is None:
        raise InvalidArgument(field_path, f"must be `{WHOLE_TENANT}` or users/{{user}}")
    return ids[0]
