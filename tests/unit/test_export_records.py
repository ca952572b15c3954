"""Export records: the content hash of the Portable AI Memory format, and evidence the caller
may not forward carried as a reference, its hash and nothing else."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from memory_service.exports.domain.export import content_hash, message_record
from memory_service.kernel.domain.model import Message, Speaker, TurnStatus


def test_the_content_hash_normalises_case_space_and_unicode() -> None:
    expected = "sha256:" + hashlib.sha256("prefers café au lait".encode()).hexdigest()
    assert content_hash("  Prefers  Cafe\u0301 au\tLAIT \n") == expected


def test_a_message_the_caller_may_not_read_is_a_reference_and_a_hash() -> None:
    said = Message(
        "0" * 32, "acme", "c-1", 3, Speaker.USER, "my number is 555", TurnStatus.COMPLETED,
        "sam", datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    shown, withheld = message_record(said, True), message_record(said, False)
    assert shown["content"] == "my number is 555"
    assert withheld["content"] is None
    assert withheld["name"] == f"conversations/c-1/messages/{'0' * 32}"
    assert withheld["content_hash"] == shown["content_hash"] == content_hash("my number is 555")
    assert "555" not in str(withheld)
