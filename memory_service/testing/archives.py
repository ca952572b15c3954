"""Whole archives parsed at once, for tests: the service streams them (`iter_*` in
`imports/domain/parsers.py`), a test compares lists."""

from __future__ import annotations

from typing import Any

from memory_service.imports.domain.parsers import (
    ArchiveItem,
    iter_chatgpt,
    iter_export,
    iter_summary,
)


def parse_chatgpt(data: bytes) -> list[ArchiveItem]:
    return list(iter_chatgpt(data))


def parse_summary(data: bytes) -> list[ArchiveItem]:
    return list(iter_summary(data))


def parse_export(data: bytes) -> list[dict[str, Any]]:
    return [record for _, record in iter_export(data)]
