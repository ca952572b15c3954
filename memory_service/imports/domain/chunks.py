"""Archives are read as a stream and written in chunks: a bounded number of records per
statement, so a 64 MiB archive never sits in memory as records at once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

RESTORE_CHUNK = 500  # records of an export written at a time
ITEM_CHUNK = 1000  # import items written at a time
T = TypeVar("T")


def chunked(values: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
