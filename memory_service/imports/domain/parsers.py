"""Parsers for the archive formats an import accepts (SPEC §4):

- a ChatGPT-style `conversations.json` export: conversations whose messages form a tree under
  `mapping`; only the branch that ends at `current_node` is read (edited messages leave other
  branches behind);
- a pasted memory summary written by another assistant: one item per line or paragraph;
- this service's own export (JSON Lines), validated here and turned into records by `restore`.

Every parser reads as a stream and yields items one at a time; the limits below are enforced
while reading, so a hostile archive fails at the first item past a limit instead of being built
in memory first (docs/limits.md). Archive text is data: it is returned as items and never
interpreted as instructions.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import ijson

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.model import Speaker

# The decompressed archive. With the parse streaming, the copies of the archive that receiving
# and storing it make are the largest cost (about five, measured: docs/limits.md); the gRPC
# receive limit is set just above this.
MAX_ARCHIVE_BYTES = 16 * 1024 * 1024
MAX_ITEM_CHARS = 32_000
MAX_ITEMS = 200_000
MAX_CONVERSATIONS = 50_000
MAX_MESSAGES_PER_CONVERSATION = 10_000
# JSON values (objects, arrays, strings, numbers) in one conversation or one export line: what
# one conversation may cost in memory while its tree is walked.
MAX_VALUES_PER_RECORD = 200_000
MAX_NESTING = 64
MAX_RECORD_BYTES = 4 * 1024 * 1024  # one line of this service's export
MAX_LINE_BYTES = 4 * MAX_ITEM_CHARS  # one summary line (UTF-8 takes up to 4 bytes a character)

ROLES = {"user": Speaker.USER, "assistant": Speaker.ASSISTANT, "tool": Speaker.TOOL}
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
BOM = codecs.BOM_UTF8
UTF8_CHUNK = 1024 * 1024
# What the JSON parser reads at a time. It returns all events of a read at once, so this
# bounds their memory (about 70 bytes an event); and it re-reads a token that spans reads, so
# too small a read makes one huge string quadratic. 512 KiB keeps both small.
JSON_READ = 512 * 1024


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


def check_archive(data: bytes) -> bytes:
    """The size cap and UTF-8, checked in chunks without decoding the whole archive at once;
    returns the archive without a byte-order mark."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ArchiveError("archive", f"is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MiB")
    body = data[len(BOM) :] if data.startswith(BOM) else data
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    for start in range(0, len(body), UTF8_CHUNK):
        try:
            decoder.decode(view[start : start + UTF8_CHUNK])
        except UnicodeDecodeError as error:
            raise ArchiveError(f"byte {start + error.start}", "is not valid UTF-8") from None
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ArchiveError(f"byte {len(body)}", "is not valid UTF-8 (truncated)") from None
    return body


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


# --- JSON, streamed ---------------------------------------------------------------------------

_SCALARS = {"null", "boolean", "integer", "double", "number", "string"}
_KIND_NAMES = {
    "start_map": "dict",
    "start_array": "list",
    "string": "str",
    "integer": "int",
    "double": "float",
    "number": "float",
    "boolean": "bool",
    "null": "NoneType",
}


def _json_error(error: Exception, path: str) -> ArchiveError:
    """The parser's first line only: its later lines quote archive text, which may be secret."""
    message = error.args[0] if error.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    first = str(message).strip().split("\n", 1)[0].strip() or type(error).__name__
    return ArchiveError(path, f"invalid JSON ({first})")


def _build(events: Iterator[tuple[str, Any]], first: tuple[str, Any], path: str) -> Any:
    """One JSON value from parser events, counting values and nesting as it goes."""
    event, value = first
    if event in _SCALARS:
        return value
    root: Any = {} if event == "start_map" else []
    stack: list[Any] = [root]
    key: str | None = None
    keys: list[str | None] = []
    count = 1
    for event, value in events:
        count += 1
        if count > MAX_VALUES_PER_RECORD:
            raise ArchiveError(path, f"holds more than {MAX_VALUES_PER_RECORD} JSON values")
        if event == "map_key":
            key = value
            count -= 1
            continue
        if event in ("end_map", "end_array"):
            stack.pop()
            if not stack:
                return root
            key = keys.pop()
            continue
        if event in ("start_map", "start_array"):
            child: Any = {} if event == "start_map" else []
            if len(stack) >= MAX_NESTING:
                raise ArchiveError(path, f"is nested more than {MAX_NESTING} levels deep")
        else:
            child = value
        parent = stack[-1]
        if isinstance(parent, dict):
            parent[key] = child
        else:
            parent.append(child)
        if event in ("start_map", "start_array"):
            stack.append(child)
            keys.append(key)
            key = None
    raise ArchiveError(path, "invalid JSON (premature end)")


def _json_array(data: bytes, what: str) -> Iterator[tuple[str, Any]]:
    """(path, element) for each element of a top-level JSON array, one at a time."""
    events = ijson.basic_parse(io.BytesIO(data), buf_size=JSON_READ, use_float=True)
    path = "$"
    try:
        first = next(events, None)
        if first is None:
            raise ArchiveError("$", "invalid JSON (empty archive)")
        if first[0] != "start_array":
            raise ArchiveError("$", f"expected list, found {_KIND_NAMES.get(first[0], first[0])}")
        for index, event in enumerate(events):
            if event[0] == "end_array":
                break
            if index >= MAX_CONVERSATIONS:
                raise ArchiveError(path, f"the archive has more than {MAX_CONVERSATIONS} {what}")
            path = f"$[{index}]"
            yield path, _build(events, event, path)
        trailing = next(events, None)
        if trailing is not None:
            raise ArchiveError(path, "invalid JSON (data after the end)")
    except ijson.JSONError as error:
        raise _json_error(error, path) from None
    except (ValueError, ArithmeticError) as error:
        if isinstance(error, ArchiveError):
            raise
        raise _json_error(error, path) from None


# --- ChatGPT conversations.json ---------------------------------------------------------------


def iter_chatgpt(data: bytes) -> Iterator[ArchiveItem]:
    """Items of the current branch of each conversation, conversation by conversation."""
    ordinal = 0
    for path, conversation in _json_array(check_archive(data), "conversations"):
        for item in _conversation(conversation, path, ordinal):
            if ordinal >= MAX_ITEMS:
                raise ArchiveError(path, f"the archive has more than {MAX_ITEMS} messages")
            ordinal += 1
            yield item


def _conversation(raw: Any, path: str, first_ordinal: int) -> list[ArchiveItem]:
    conversation = _expect(raw, dict, path)
    mapping = _expect(conversation.get("mapping"), dict, f"{path}.mapping")
    if len(mapping) > MAX_MESSAGES_PER_CONVERSATION:
        raise ArchiveError(
            f"{path}.mapping", f"holds more than {MAX_MESSAGES_PER_CONVERSATION} messages"
        )
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


# --- pasted summaries ---------------------------------------------------------------------------


def _lines(body: bytes) -> Iterator[tuple[int, str]]:
    """(line number, text) without reading more than one line's worth at a time."""
    stream = io.BytesIO(body)
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise ArchiveError(f"line {number}", f"holds more than {MAX_ITEM_CHARS} characters")
        yield number, raw.decode("utf-8").rstrip("\r\n")


def iter_summary(data: bytes) -> Iterator[ArchiveItem]:
    """A pasted summary: bullet lines are items; otherwise each paragraph is one."""
    body = check_archive(data)
    bulleted = any(BULLET.match(line) for _, line in _lines(body))
    ordinal = 0

    def item(line: int, text: str) -> ArchiveItem:
        if ordinal >= MAX_ITEMS:
            raise ArchiveError(f"line {line}", f"the archive has more than {MAX_ITEMS} items")
        return ArchiveItem(
            ordinal=ordinal,
            speaker=Speaker.ASSISTANT,  # another assistant wrote the summary, not the user
            text=_text(text, f"line {line}"),
            source_time=None,
            source_ref=f"line-{line}",
        )

    if bulleted:
        for number, line in _lines(body):
            text = BULLET.sub("", line).strip()
            if text:
                yield item(number, text)
                ordinal += 1
        return
    start, paragraph, size = 1, list[str](), 0
    for number, line in _with_end(_lines(body)):
        stripped = line.strip()
        if stripped:
            if not paragraph:
                start = number
            paragraph.append(stripped)
            size += len(stripped) + 1
            if size > MAX_ITEM_CHARS + 1:
                raise ArchiveError(f"line {start}", f"holds more than {MAX_ITEM_CHARS} characters")
        elif paragraph:
            yield item(start, " ".join(paragraph))
            ordinal += 1
            paragraph, size = [], 0


def _with_end(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield from lines
    yield -1, ""


# --- this service's export ------------------------------------------------------------------------


def iter_export(data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """This service's own export (JSON Lines), read under the limits one line at a time; the
    domain (`restore`) checks each object and turns it into records."""
    stream = io.BytesIO(check_archive(data))
    number = count = 0
    while True:
        raw = stream.readline(MAX_RECORD_BYTES + 1)
        if not raw:
            return
        number += 1
        where = f"line {number}"
        if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
            raise ArchiveError(where, f"is longer than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
        if not raw.strip():
            continue
        events = ijson.basic_parse(io.BytesIO(raw), buf_size=JSON_READ, use_float=True)
        try:
            first = next(events, None)
            if first is None:
                continue
            record = _build(events, first, where)
            if next(events, None) is not None:
                raise ArchiveError(where, "invalid JSON (data after the end)")
        except ijson.JSONError as error:
            raise _json_error(error, where) from None
        except (ValueError, ArithmeticError) as error:
            if isinstance(error, ArchiveError):
                raise
            raise _json_error(error, where) from None
        record = _expect(record, dict, where)
        count += 1
        if count > MAX_ITEMS:
            raise ArchiveError(where, f"the export has more than {MAX_ITEMS} records")
        yield where, record
