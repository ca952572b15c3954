"""Rules about words: phrasing that means "for now". Secrets have their own module
(`memory_service.kernel.domain.secrets`)."""

from __future__ import annotations

import re

_ONE_OFF_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bjust this once\b",
        r"\b(?:only )?this (?:one )?time(?: only)?\b",
        r"\bfor (?:today|tonight|now|this (?:order|call|meeting|week|one))\b",
        r"\btoday'?s order\b",
        r"\bjust for (?:today|now|this)\b",
        r"\bfor the (?:next|rest of the) (?:hour|day|call)\b",
    )
]


def is_one_off(text: str) -> bool:
    return any(pattern.search(text) for pattern in _ONE_OFF_PATTERNS)
