"""Answers remembered for the length of one call, and no longer.

A rule that a call may ask twice about the same text (a batch checks its items before its write
transaction, and the write asks again) keeps its answers here while the call runs. They are held
in a context variable, so nothing of one request outlasts it or is seen by another.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class CallMemo:
    """One rule's answers by key, kept inside `remembering()` and computed afresh outside it."""

    def __init__(self, name: str) -> None:
        self._answers: ContextVar[dict[Hashable, str] | None] = ContextVar(name, default=None)

    @contextmanager
    def remembering(self) -> Iterator[None]:
        token = self._answers.set({}) if self._answers.get() is None else None
        try:
            yield
        finally:
            if token is not None:
                self._answers.reset(token)

    def answer(self, key: Hashable, compute: Callable[[], str]) -> str:
        answers = self._answers.get()
        if answers is None:
            return compute()
        found = answers.get(key)
        if found is None:
            found = answers[key] = compute()
        return found
