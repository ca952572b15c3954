"""Parsers for the archive formats an import accepts (SPEC §4):

- a ChatGPT-style `conversations.json` export: conversations whose messages form a tree under
  `mapping`; only the branch that ends at `current_node` is read (edited messages leave other
  branches behind);
- a pasted memory summary written by another assistant: one item per line or paragraph.

Archive text is data: it is returned as items and never interpreted as instructions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_service.domain import rules
from memory_service.domain.model import Speaker

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_ITEM_CHARS = 32_000
MAX_ITEMS = 200_000
ROLES = {"user": Speaker.USER, "assistant": Speaker.ASSISTANT, "tool": Speaker.TOOL}
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


class ArchiveError(ValueError):
    """The archive is malformed; `location` says where (a JSON path, a line or a byte offset)."""

    def __init__(self, location: str, problem: str) -> None:
        super().__init__(f"{location}: {problem}")
        self.location = location
        self.problem = problem


@dataclass(frozen=True)
class ArchiveItem:
    ordinal: int
    speaker: Speaker
    text: str
    source_time: datetime | None
    source_ref: str
    missing_attachments: tuple[str, ...] = ()


def decode(data: bytes) -> str:
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ArchiveError("archive", f"is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ArchiveError(f"byte {error.start}", "is not valid UTF-8") from None


def _expect(value: Any, kind: type | tuple[type, ...], path: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ArchiveError(path, f"expected {names}, found {type(value).__name__}")
    return value


def _time(value: Any, path: str) -> datetime | None:
    """Unknown stays unknown: a missing or null time is None, never 'now'."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArchiveError(path, "expected a number of seconds since 1970 or null")
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        raise ArchiveError(path, "is not a representable time") from None


def _text(text: str, path: str) -> str:
    if len(text) > MAX_ITEM_CHARS:
        raise ArchiveError(path, f"holds more than {MAX_ITEM_CHARS} characters")
    return stored(text, path, MAX_ITEM_CHARS)


def stored(text: str, path: str, max_chars: int) -> str:
    """Archive text obeys the same storage rule as request text (no NUL, bounded length)."""
    problem = rules.text_problem(text, max_chars)
    if problem is not None:
        raise ArchiveError(path, problem)
    return text


def _json(source: str, location: str) -> Any:
    try:
        return json.loads(source)
    except json.JSONDecodeError as error:
        where = location or f"line {error.lineno}"
        raise ArchiveError(f"{where} column {error.colno}", f"invalid JSON ({error.msg})") from None
    except ValueError:  # Python refuses to read integers of more than 4,300 digits
        raise ArchiveError(location or "archive", "holds a number too long to read") from None
    except RecursionError:
        raise ArchiveError(location or "archive", "is nested too deeply") from None


def parse_chatgpt(data: bytes) -> list[ArchiveItem]:
    document = _json(decode(data), "")
    conversations = _expect(document, list, "$")
    items: list[ArchiveItem] = []
    for index, conversation in enumerate(conversations):
        items.extend(_conversation(conversation, f"$[{index}]", len(items)))
        if len(items) > MAX_ITEMS:
            raise ArchiveError(f"$[{index}]", f"the archive has more than {MAX_ITEMS} messages")
    return items


def _conversation(raw: Any, path: str, first_ordinal: int) -> list[ArchiveItem]:
    conversation = _expect(raw, dict, path)
    mapping = _expect(conversation.get("mapping"), dict, f"{path}.mapping")
    conversation_id = str(conversation.get("conversation_id") or conversation.get("id") or path)
    current = conversation.get("current_node")
    if current is None:
        return []
    node_id = _expect(current, str, f"{path}.current_node")
    branch: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    while node_id is not None:
        node_path = f"{path}.mapping.{node_id}"
        if node_id in seen:
            raise ArchiveError(node_path, "the message tree has a cycle")
        if node_id not in mapping:
            raise ArchiveError(node_path, "is referenced but missing")
        seen.add(node_id)
        node = _expect(mapping[node_id], dict, node_path)
        branch.append((node_id, node))
        parent = node.get("parent")
        node_id = None if parent is None else _expect(parent, str, f"{node_path}.parent")
    items: list[ArchiveItem] = []
    for node_id, node in reversed(branch):
        item = _message(node.get("message"), f"{path}.mapping.{node_id}.message", conversation_id)
        if item is not None:
            speaker, text, when, message_id, missing = item
            ordinal = first_ordinal + len(items)
            source_ref = stored(
                f"{conversation_id}/{message_id}", f"{path}.id", rules.MAX_SOURCE_REF_CHARS
            )
            items.append(ArchiveItem(ordinal, speaker, text, when, source_ref, missing))
    return items


def _message(
    raw: Any, path: str, conversation_id: str
) -> tuple[Speaker, str, datetime | None, str, tuple[str, ...]] | None:
    if raw is None:
        return None
    message = _expect(raw, dict, path)
    author = _expect(message.get("author", {}), dict, f"{path}.author")
    role = author.get("role")
    speaker = ROLES.get(role) if isinstance(role, str) else None
    if speaker is None:
        return None  # system and unknown roles carry no statements of the user
    content = _expect(message.get("content", {}), dict, f"{path}.content")
    parts = _expect(content.get("parts", []), list, f"{path}.content.parts")
    texts, missing = [], []
    for index, part in enumerate(parts):
        part_path = f"{path}.content.parts[{index}]"
        if isinstance(part, str):
            texts.append(_text(part, part_path))
        elif isinstance(part, dict):
            missing.append(_attachment(part.get("asset_pointer") or part.get("name"), part_path))
        elif part is not None:
            raise ArchiveError(part_path, f"expected text or an asset, found {type(part).__name__}")
    metadata = message.get("metadata") or {}
    if isinstance(metadata, dict):
        attachments = metadata.get("attachments") or []
        if not isinstance(attachments, list):
            raise ArchiveError(f"{path}.metadata.attachments", "expected a list")
        for index, attachment in enumerate(attachments):
            if isinstance(attachment, dict):
                attachment_path = f"{path}.metadata.attachments[{index}]"
                name = attachment.get("name") or attachment.get("id")
                missing.append(_attachment(name, attachment_path, default=str(index)))
    text = _text("\n".join(t for t in texts if t).strip(), f"{path}.content")
    if not text and not missing:
        return None
    message_id = str(message.get("id") or path.rsplit(".", 2)[-2])
    return (
        speaker,
        text,
        _time(message.get("create_time"), f"{path}.create_time"),
        message_id,
        tuple(missing),
    )


def _attachment(name: Any, path: str, default: str = "") -> str:
    """An attachment's name (text or a number), or where it was when it has none."""
    if name is None or name == "":
        return default or path
    if isinstance(name, bool) or not isinstance(name, str | int | float):
        raise ArchiveError(path, f"expected a name, found {type(name).__name__}")
    return stored(str(name), path, rules.MAX_SOURCE_REF_CHARS)


def parse_summary(data: bytes) -> list[ArchiveItem]:
    """A pasted summary: bullet lines are items; otherwise each paragraph is one."""
    source = decode(data).replace("\r\n", "\n")
    lines = source.split("\n")
    bulleted = any(BULLET.match(line) for line in lines)
    chunks: list[tuple[int, str]] = []
    if bulleted:
        chunks = [
            (n, BULLET.sub("", line).strip()) for n, line in enumerate(lines, 1) if line.strip()
        ]
    else:
        start, paragraph = 1, list[str]()
        for n, line in enumerate([*lines, ""], 1):
            if line.strip():
                if not paragraph:
                    start = n
                paragraph.append(line.strip())
            elif paragraph:
                chunks.append((start, " ".join(paragraph)))
                paragraph = []
    if len(chunks) > MAX_ITEMS:
        raise ArchiveError("archive", f"has more than {MAX_ITEMS} items")
    return [
        ArchiveItem(
            ordinal=index,
            speaker=Speaker.ASSISTANT,  # another assistant wrote the summary, not the user
            text=_text(text, f"line {line}"),
            source_time=None,
            source_ref=f"line-{line}",
        )
        for index, (line, text) in enumerate(chunks)
        if text
    ]


def parse_export(data: bytes) -> list[dict[str, Any]]:
    """This service's own export (JSON Lines, schema `crmmem.memory-export/v1`), validated
    strictly here; the domain turns each object into records."""
    records = []
    for number, line in enumerate(decode(data).split("\n"), 1):
        if not line.strip():
            continue
        record = _json(line, f"line {number}")
        record = _expect(record, dict, f"line {number}")
        if record.get("schema") != "crmmem.memory-export/v1":
            raise ArchiveError(f"line {number}.schema", "is not crmmem.memory-export/v1")
        records.append(record)
        if len(records) > MAX_ITEMS:
            raise ArchiveError(f"line {number}", f"the export has more than {MAX_ITEMS} memories")
    return records
