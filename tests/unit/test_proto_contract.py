"""The protos state their own contract: every field says how it behaves, every resource names
its type and pattern, every name field says what it names, and every request id is a UUID4.
Generated clients and linters read these annotations, so a field without one is a gap in the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from crmmem.memory.v1 import (
    access_service_pb2,
    context_service_pb2,
    import_service_pb2,
    memory_pb2,
    memory_service_pb2,
    task_service_pb2,
    transcript_service_pb2,
)
from crmmem.retrieval.v1 import retrieval_service_pb2
from google.api import field_behavior_pb2, field_info_pb2, resource_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor

FILES: list[FileDescriptor] = [
    module.DESCRIPTOR
    for module in (
        memory_pb2,
        memory_service_pb2,
        transcript_service_pb2,
        access_service_pb2,
        context_service_pb2,
        import_service_pb2,
        task_service_pb2,
        retrieval_service_pb2,
    )
]
MEMORY_FILES = [file for file in FILES if file.package == "crmmem.memory.v1"]
IDENTIFIER = field_behavior_pb2.FieldBehavior.IDENTIFIER
REQUIRED = field_behavior_pb2.FieldBehavior.REQUIRED
TYPE_PREFIX = "memory.crmmem.dev/"
# Name fields whose value is not one resource type: the export's `users/{user}` or `tenant`.
ANY_RESOURCE = {"crmmem.memory.v1.ExportMemoriesRequest.parent"}
# Strings that name a resource by their field name (outside the resource's own `name`).
REFERENCE_FIELDS = {
    "name",
    "parent",
    "conversation",
    "task",
    "transcript_message",
    "import_item",
    "evidence_messages",
    "memory",
    "memories",
    "shadowed_memory",
}


def messages(files: list[FileDescriptor]) -> Iterator[Descriptor]:
    def walk(message: Descriptor) -> Iterator[Descriptor]:
        yield message
        for nested in message.nested_types:
            if not nested.GetOptions().map_entry:
                yield from walk(nested)

    for file in files:
        for message in file.message_types_by_name.values():
            yield from walk(message)


def fields(files: list[FileDescriptor]) -> Iterator[FieldDescriptor]:
    for message in messages(files):
        yield from message.fields


def behaviors(field: FieldDescriptor) -> list[int]:
    return list(field.GetOptions().Extensions[field_behavior_pb2.field_behavior])


def reference(field: FieldDescriptor) -> resource_pb2.ResourceReference:
    return field.GetOptions().Extensions[resource_pb2.resource_reference]


def resource_types() -> set[str]:
    declared = {
        message.GetOptions().Extensions[resource_pb2.resource].type
        for message in messages(MEMORY_FILES)
    }
    for file in MEMORY_FILES:
        declared.update(
            d.type for d in file.GetOptions().Extensions[resource_pb2.resource_definition]
        )
    return declared - {""}


@pytest.mark.parametrize("field", list(fields(FILES)), ids=lambda f: f.full_name)
def test_every_field_declares_its_behavior(field: FieldDescriptor) -> None:
    assert behaviors(field), f"{field.full_name} has no google.api.field_behavior"


def test_resources_declare_type_and_pattern_and_their_name_is_the_identifier() -> None:
    resources = [
        message
        for message in messages(MEMORY_FILES)
        if message.GetOptions().HasExtension(resource_pb2.resource)
    ]
    assert {m.name for m in resources} == {
        "Memory",
        "MemoryRevision",
        "Message",
        "Override",
        "Customer",
        "CustomerGrant",
        "ImportBatch",
        "ImportItem",
        "Task",
        "TaskCheckpoint",
    }
    for message in resources:
        declared = message.GetOptions().Extensions[resource_pb2.resource]
        assert declared.type == TYPE_PREFIX + message.name
        assert declared.pattern
        assert declared.singular
        assert declared.plural
        assert behaviors(message.fields_by_name["name"]) == [IDENTIFIER]


def test_every_message_with_an_identifier_is_a_resource() -> None:
    for message in messages(MEMORY_FILES):
        name = message.fields_by_name.get("name")
        if name is not None and IDENTIFIER in behaviors(name):
            assert message.GetOptions().HasExtension(resource_pb2.resource), message.full_name


def test_name_fields_reference_a_declared_resource_type() -> None:
    known = resource_types()
    checked = 0
    for field in fields(MEMORY_FILES):
        if field.type != FieldDescriptor.TYPE_STRING or field.name not in REFERENCE_FIELDS:
            continue
        if IDENTIFIER in behaviors(field) or field.containing_type.name == "CustomerReference":
            continue  # a resource's own name; a customer's spoken name
        target = reference(field)
        named = target.type or target.child_type
        if field.full_name in ANY_RESOURCE:
            assert named == "*", field.full_name
        else:
            assert named in known, f"{field.full_name} references {named!r}"
        checked += 1
    assert checked >= 20


def test_request_ids_are_optional_uuid4() -> None:
    request_ids = [field for field in fields(MEMORY_FILES) if field.name == "request_id"]
    assert len(request_ids) >= 15
    for field in request_ids:
        info = field.GetOptions().Extensions[field_info_pb2.field_info]
        assert info.format == field_info_pb2.FieldInfo.Format.UUID4, field.full_name
        assert behaviors(field) == [field_behavior_pb2.FieldBehavior.OPTIONAL], field.full_name


def test_request_names_are_required() -> None:
    for message in messages(MEMORY_FILES):
        if not message.name.endswith("Request"):
            continue
        for name in ("name", "parent"):
            field = message.fields_by_name.get(name)
            if field is not None:
                assert REQUIRED in behaviors(field), field.full_name
