"""Rules about words: secrets that must never be stored, and phrasing that means "for now".

Deliberately conservative pattern lists: a false "secret" refuses one proposal, a missed one
would store a credential, so the patterns err towards refusing.
"""

from __future__ import annotations

import re

_SECRET_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:password|passwort|passcode|passphrase|pwd|pin)\b\s*(?:is|:|=|was)\s*\S+",
        r"\b(?:api[\s_-]?key|access[\s_-]?key|secret[\s_-]?key|auth[\s_-]?token|bearer)\b"
        r"\s*(?:is|:|=)?\s*[A-Za-z0-9_\-./+=]{12,}",
        r"\bsk-[A-Za-z0-9_\-]{16,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        r"\b(?:recovery|backup|2fa|mfa|one[\s-]?time)\s+codes?\b",
        r"\bseed\s+phrase\b",
    )
]
_CARD_CANDIDATE = re.compile(r"(?:\d[ -]?){13,19}")

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


def _luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def contains_secret(text: str) -> str:
    """The kind of secret found ("" when none): never store, log or echo the text."""
    for pattern in _SECRET_PATTERNS:
        if pattern.search(text):
            return "credential"
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            return "card number"
    return ""


def is_one_off(text: str) -> bool:
    return any(pattern.search(text) for pattern in _ONE_OFF_PATTERNS)
