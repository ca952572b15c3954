"""Resource names: what the service formats it parses back, and nothing else parses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory_service.kernel.domain import names, rules
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import ParentType

MEMORY_ID = "0123456789abcdef0123456789abcdef"
OTHER_ID = "fedcba9876543210fedcba9876543210"
LONGEST_ID = "A" * rules.MAX_ID_CHARS


@pytest.mark.parametrize(
    ("formatted", "parse", "ids"),
    [
        (names.memory(MEMORY_ID), names.parse_memory, MEMORY_ID),
        (
            names.revision(MEMORY_ID, rules.MAX_REVISION_NUMBER),
            names.parse_revision,
            (MEMORY_ID, rules.MAX_REVISION_NUMBER),
        ),
        (names.conversation("call-1.b_2"), names.parse_conversation, "call-1.b_2"),
        (names.conversation(LONGEST_ID), names.parse_conversation, LONGEST_ID),
        (
            names.message(LONGEST_ID, MEMORY_ID),
            lambda n: names.parse_message(n, "evidence"),
            (LONGEST_ID, MEMORY_ID),
        ),
        (names.import_batch(MEMORY_ID), names.parse_import_batch, MEMORY_ID),
        (
            names.import_item(MEMORY_ID, OTHER_ID),
            names.parse_import_item,
            (MEMORY_ID, OTHER_ID),
        ),
        (
            names.grant("mara@acme.example", LONGEST_ID),
            names.parse_grant,
            ("mara@acme.example", LONGEST_ID),
        ),
        (
            names.parent(ParentType.CONVERSATION, "c-1"),
            names.parse_parent,
            (ParentType.CONVERSATION, "c-1"),
        ),
        (names.parent(ParentType.TASK, "t-1"), names.parse_parent, (ParentType.TASK, "t-1")),
        (names.parent(ParentType.TASK, "t-1"), names.parse_task, "t-1"),
        (
            names.override(ParentType.TASK, "t-1", MEMORY_ID),
            names.parse_override,
            (ParentType.TASK, "t-1", MEMORY_ID),
        ),
        (
            names.override(ParentType.CONVERSATION, "c-1", MEMORY_ID),
            names.parse_override,
            (ParentType.CONVERSATION, "c-1", MEMORY_ID),
        ),
        (names.customer("acme:1"), names.parse_customer, "acme:1"),
        ("users/mara", names.parse_export_parent, "mara"),
        ("tenant", names.parse_export_parent, None),
    ],
)
def test_what_is_formatted_parses_back(
    formatted: str, parse: Callable[[str], object], ids: object
) -> None:
    assert parse(formatted) == ids


def test_formatted_names_read_as_documented() -> None:
    assert names.memory(MEMORY_ID) == f"memories/{MEMORY_ID}"
    assert names.revision(MEMORY_ID, 3) == f"memories/{MEMORY_ID}/revisions/3"
    assert names.message("c", MEMORY_ID) == f"conversations/c/messages/{MEMORY_ID}"
    assert names.import_item("b", "i") == "importBatches/b/items/i"
    assert names.grant("u", "c") == "users/u/customerGrants/c"
    assert names.customer("c") == "customers/c"
    assert names.override(ParentType.CONVERSATION, "c", "o") == "conversations/c/overrides/o"
    assert names.override(ParentType.TASK, "t", "o") == "tasks/t/overrides/o"


MALFORMED: list[tuple[Callable[[str], object], str]] = [
    (names.parse_memory, f"memories/{MEMORY_ID}\n"),  # `$` would match before a newline
    (names.parse_memory, f"memories/{MEMORY_ID}\x00"),
    (names.parse_memory, f"memories/{MEMORY_ID[:-1]}"),
    (names.parse_memory, f"memories/{MEMORY_ID.upper()}"),
    (names.parse_memory, f"memories/{MEMORY_ID}/revisions/1"),  # extra segments
    (names.parse_memory, f"/memories/{MEMORY_ID}"),
    (names.parse_memory, f"importBatches/{MEMORY_ID}"),  # another collection
    (names.parse_memory, f"Memories/{MEMORY_ID}"),
    (names.parse_memory, ""),
    (names.parse_revision, f"memories/{MEMORY_ID}/revisions/0"),
    (names.parse_revision, f"memories/{MEMORY_ID}/revisions/01"),
    (names.parse_revision, f"memories/{MEMORY_ID}/revisions/1000000000"),  # ten digits
    (names.parse_revision, f"memories/{MEMORY_ID}/revisions/-1"),
    (names.parse_revision, f"memories/{MEMORY_ID}/revisions/1\n"),
    (names.parse_revision, f"memories/{MEMORY_ID}"),
    (names.parse_conversation, "conversations/" + "a" * (rules.MAX_ID_CHARS + 1)),  # too long
    (names.parse_conversation, "conversations/c-1\n"),
    (names.parse_conversation, "conversations/c\x001"),
    (names.parse_conversation, "conversations/c/1"),
    (names.parse_conversation, "conversations/"),
    (names.parse_conversation, "tasks/c-1"),
    (lambda n: names.parse_message(n, "evidence"), f"conversations/c/messages/{MEMORY_ID}/x"),
    (lambda n: names.parse_message(n, "evidence"), f"conversations/c/items/{MEMORY_ID}"),
    (lambda n: names.parse_message(n, "evidence"), f"importBatches/{MEMORY_ID}/items/{OTHER_ID}"),
    (names.parse_import_batch, f"importBatches/{MEMORY_ID}/items/{OTHER_ID}"),
    (names.parse_import_item, f"importBatches/-/items/{OTHER_ID}"),
    (names.parse_import_item, f"importBatches/{MEMORY_ID}"),
    (names.parse_grant, "users/mara/customerGrants/acme\n"),
    (names.parse_grant, "users/mara/customerGrants/acme/x"),
    (names.parse_grant, "users/ma ra/customerGrants/acme"),
    (names.parse_grant, f"users/{'u' * 129}/customerGrants/acme"),
    (names.parse_parent, "customers/c-1"),
    (names.parse_parent, "conversations/c-1/overrides"),
    (names.parse_task, "conversations/c-1"),
    (names.parse_override, f"conversations/c-1/overrides/{MEMORY_ID}/x"),
    (names.parse_override, f"customers/c-1/overrides/{MEMORY_ID}"),
    (names.parse_customer, "customers/a b"),
    (names.parse_customer, "customers/acme/x"),
    (names.parse_export_parent, "users/"),
    (names.parse_export_parent, "users/mara/x"),
    (names.parse_export_parent, "Tenant"),
]


@pytest.mark.parametrize(("parse", "name"), MALFORMED)
def test_malformed_names_are_refused_as_invalid_argument(
    parse: Callable[[str], object], name: str
) -> None:
    with pytest.raises(InvalidArgument):
        parse(name)


def test_refusal_names_the_field_and_the_shape() -> None:
    with pytest.raises(InvalidArgument) as error:
        names.parse_revision("memories/x", "parent")
    assert error.value.violations[0].field == "parent"
    assert "memories/{memory}/revisions/{number}" in error.value.violations[0].description


def test_an_oversized_name_is_refused_before_matching() -> None:
    assert names.MEMORY.match("memories/" + "a" * 10_000) is None
