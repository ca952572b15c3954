"""The one secret rule: text that carries a credential is never stored, logged or echoed.

Every path that stores text asks the same `SecretDetector`: creating and correcting memory
(value, quote and the evidence they rest on), proposals, overrides, import parsing, import
confirmation and restore. Three kinds of evidence are looked for:

- phrasing people use in conversation ("the password for the portal is …", "pw is …",
  "PIN 4821", "my recovery codes"), written here;
- card numbers (`card_numbers.py`): an issuer's prefix and length and the Luhn check, over the
  digit groups written as cards are however they are joined, and over unbroken runs unless a
  CRM label ("order", "invoice") names the run in a text that says nothing of cards;
- the same rules over look-alike letters from other scripts, and over base64 and URL-encoded
  parts of the text;
- key and token formats (cloud keys, API tokens, JWTs, private keys, credentials in URLs,
  high-entropy strings), found by a `SecretScanner` the composition root plugs in
  (``memory_service.kernel.adapters.secret_scanning``); the domain imports no third-party code.

The rules err towards refusing: a false alarm refuses one write with a reason the caller can act
on, a miss would keep a credential. The transcript is the exception: it records what was said and
stays append-only, but nothing derived from a message with a secret becomes memory.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from contextlib import AbstractContextManager
from urllib.parse import unquote

from memory_service.kernel.domain.call_memo import CallMemo
from memory_service.kernel.domain.card_numbers import has_card_number
from memory_service.kernel.domain.errors import InvalidArgument, Reason
from memory_service.kernel.domain.ports import SecretScanner

# Nouns whose value is a word: "the password for the portal is X", "passwd=X".
_WORD_NOUN = (
    r"(?:pass(?:word|wrd|wd|wort|phrase)s?|pword|kennwort|contrase[ñn]a|mot\s+de\s+passe|pwd|pw|p/w"
    r"|credentials?|api[\s_-]?key|access[\s_-]?key|secret[\s_-]?key|private[\s_-]?key"
    r"|auth(?:entication)?[\s_-]?token|access[\s_-]?token|bearer[\s_-]?token|client[\s_-]?secret"
    r"|secret\s+answer|security\s+answer"
    r"|(?:totp|2fa|mfa|otp|authenticator)[\s_-]+(?:seed|secret|key))"
)
# Nouns whose value is a number: "PIN is 4821", "cvv 123", "door code #4471".
_NUMBER_NOUN = (
    r"(?:pin(?:\s+(?:code|number))?|pass\s?code|cvv2?|cvc2?|csc|card\s+verification\s+(?:code|value)"
    r"|security\s+code|access\s+code|door\s+code|alarm\s+code|gate\s+code|entry\s+code|lock\s+code"
    r"|safe\s+code|verification\s+code|(?:2fa|mfa|sms|auth|login)\s+code|one[\s-]?time\s+code|otp"
    r"|ssn|social\s+security\s+(?:number|no\.?))"
)
# Between a noun and its verb: a clause that says which one ("for the portal", ", by the way,",
# "we use"), never a bare noun ("API key rotation is handled" says nothing secret).
_GAP = (
    r"(?:(?:\s*,|\s+(?:for|to|of|on|at|in|from|we|i|you|they|he|she|that|which)\b)"
    r"(?:[\s,]+(?!(?:is|are|was|were)\b)[^\s,:=]+){0,6}?)?"
)
_VERB = (
    r"(?:\s*(?:[:=]|->|=>)|[\s,]+(?:is|are|was|were|equals|reads|should\s+be|will\s+be"
    r"|ist|lautet|est|es)\b:?"
    r"|[\u2019']s\b)"
)
_WORD_ASSIGNMENT = re.compile(rf"\b{_WORD_NOUN}\b{_GAP}{_VERB}\s*(?P<value>\S+)", re.IGNORECASE)
_WORD_FOLLOWED_BY_TOKEN = re.compile(
    rf"\b{_WORD_NOUN}\s+(?P<value>\S*[^\sA-Za-z.,;:!?)\]]\S*)", re.IGNORECASE
)
_VALUE_THEN_NOUN = re.compile(
    rf"(?:\b(?:use|try|enter|type)\s+(?P<used>\S{{1,128}})\s+(?:as|for)"
    rf"|(?<![^\s,.;:])(?P<named>[^\s,.;:]{{1,128}})\s+(?:is|was)\s+"
    rf"(?:the|my|your|our|his|her|their))"
    rf"\s+(?:[a-z]+\s+){{0,2}}{_WORD_NOUN}(?=\s*(?:$|[.,;:!?()]|\b(?:for|to|of|on|at|and|but)\b))",
    re.IGNORECASE,
)
_NUMBER_VALUE = re.compile(
    rf"\b{_NUMBER_NOUN}\b(?:{_GAP}{_VERB})?\s*(?:#|no\.?|number)?\s*\d[\d -]{{2,}}",
    re.IGNORECASE,
)
_ALWAYS = re.compile(
    r"\b(?:recovery|backup|2fa|mfa|one[\s-]?time|authenticator|scratch)\s+codes?\b"
    r"|\b(?:seed|recovery|mnemonic|wallet)\s+phrase\b",
    re.IGNORECASE,
)
# Nouns that also name harmless things ("the secret is persistence", "boarding pass"): their
# value counts only when it looks made up, six or more characters with a digit or a symbol.
_WEAK_ASSIGNMENT = re.compile(
    rf"\b(?:secret|token|pass|login)\b{_GAP}{_VERB}\s*(?P<value>\S+)", re.IGNORECASE
)
# Configuration and .env lines: `SLACK_TOKEN=…`, `"db_pwd": "…"`, `client.secret: …`.
_CONFIG_ASSIGNMENT = re.compile(
    r"(?<![\w.-])[\w.-]*?(?P<noun>token|secret|passw(?:or)?d|pwd)s?[\"']?\s*[:=]\s*[\"']?"
    r"(?P<value>[^\s\"',;]+)",
    re.IGNORECASE,
)
_AUTHORIZATION = re.compile(
    r"\bauthorization\s*[:=]\s*(?:bearer|basic|token|digest)\s+\S{8}"
    r"|\bbearer\s+[A-Za-z0-9._~+/=-]{16}",
    re.IGNORECASE,
)
_WEAK_HINT = re.compile(r"token|secret|pass|pwd|login|bearer|authorization")
# Letters from other scripts that read as Latin ones (a Cyrillic a, U+0430, inside "password").
_LOOK_ALIKES = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u0501\u04bb\u04cf\u043a"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0423\u0405\u0406\u0408"
    "\u03bf\u03b1\u03bd\u03c1\u03b9\u03ba\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d"
    "\u039f\u03a1\u03a4\u03a5\u03a7\u0131",
    "aeopcyxsijdhlkABEKMHOPCTXYSIJoavpikABEZHIKMNOPTYXi",
)
# Words after "password is" that describe it rather than being it ("the password is expired").
_DESCRIPTIONS = frozenset(
    """a an the not never always still also too very now in on at by for from of to with and or
    same different required needed expired expiring reset changed changing wrong incorrect
    correct invalid valid missing forgotten lost locked stored kept saved shared sent emailed
    managed rotated set being protected encrypted hashed case-sensitive policy manager ok okay
    fine available unknown empty blank long short strong weak secure hidden due working broken
    updated here there below above attached enclosed what which who where how why that this
    it i we you they he she my our your their please""".split()  # noqa: SIM905
)
# Searched in lowered text: many times faster than IGNORECASE over a long alternation.
_ANY_NOUN = re.compile(rf"\b(?:{_WORD_NOUN}|{_NUMBER_NOUN}|codes?|phrase)\b")
_STRIP = "\"'`\u201c\u201d\u2018\u2019()[]{}<>.,;:!?*"
# Invisible characters that would split a word ("pass\u200bword") without changing how it reads.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_ENCODED = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def _decoded(text: str) -> str:
    """What URL-encoded and base64 parts of the text say, when it is readable text: a secret
    wrapped once ("cGFzc3dvcmQ6IGh1bnRlcjI=", "password%3Dhunter2") is still a secret."""
    parts = [unquote(text)] if _PERCENT.search(text) else []
    for token in _ENCODED.findall(text):
        bare = token.rstrip("=")
        padded = bare + "=" * (-len(bare) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
            plain = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if plain.isprintable() or all(char.isprintable() or char in "\r\n\t" for char in plain):
            parts.append(plain)
    return "\n".join(parts)


def _is_value(token: str) -> bool:
    value = token.strip(_STRIP)
    return bool(value) and value.casefold() not in _DESCRIPTIONS


def _made_up(token: str) -> bool:
    value = token.strip(_STRIP)
    return len(value) >= 6 and not value.isalpha() and _is_value(value)


def _phrase(text: str) -> str:
    lowered = text.lower()
    if _WEAK_HINT.search(lowered):
        if _AUTHORIZATION.search(text):
            return "token"
        for match in _CONFIG_ASSIGNMENT.finditer(text):
            strong = match.group("noun").lower() not in ("token", "secret")
            if (_is_value if strong else _made_up)(match.group("value")):
                return "password"
        for match in _WEAK_ASSIGNMENT.finditer(text):
            if _made_up(match.group("value")):
                return "password"
    if not _ANY_NOUN.search(lowered):
        return ""  # the common case, decided by one scan
    if _ALWAYS.search(text):
        return "recovery code"
    for match in _WORD_ASSIGNMENT.finditer(text):
        if _is_value(match.group("value")):
            return "password"
    for match in _WORD_FOLLOWED_BY_TOKEN.finditer(text):
        if _is_value(match.group("value")):
            return "password"
    for match in _VALUE_THEN_NOUN.finditer(text):
        if _is_value(match.group("used") or match.group("named") or ""):
            return "password"
    if _NUMBER_VALUE.search(text):
        return "PIN or security code"
    return ""


# Verdicts by (detector, text) inside `SecretDetector.remembering()`: one call scans a text once.
_VERDICTS = CallMemo("secret_verdicts")


class SecretDetector:
    """Phrase rules and the Luhn check here, key formats from the plugged-in scanner."""

    def __init__(self, scanner: SecretScanner | None = None) -> None:
        self._scanner = scanner

    def remembering(self) -> AbstractContextManager[None]:
        """Within one call, a text asked about twice is scanned once (a created memory's value
        is often its evidence message's text)."""
        return _VERDICTS.remembering()

    def kind(self, text: str) -> str:
        """What kind of secret the text carries ("" when none). Never log or echo the text."""
        if not text:
            return ""
        # Keyed by detector too: another detector may plug another scanner.
        return _VERDICTS.answer((id(self), text), lambda: self._scan(text))

    def _scan(self, text: str) -> str:
        # Full-width letters and digits read as plain ones; invisible characters are dropped.
        text = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
        found = self._plain_kind(text)
        if found:
            return found
        decoded = _decoded(text)
        return self._plain_kind(decoded) if decoded else ""

    def _plain_kind(self, text: str) -> str:
        found = _phrase(text.translate(_LOOK_ALIKES))
        if found:
            return found
        if has_card_number(text.translate(_LOOK_ALIKES)):  # card words in other scripts too
            return "card number"
        return self._scanner.find(text) if self._scanner is not None else ""

    def refuse(self, field: str, text: str, *, evidence: bool = False) -> None:
        """Raises INVALID_ARGUMENT (SECRET_DETECTED) naming the field, never the text."""
        found = self.kind(text)
        if not found:
            return
        description = (
            f"the evidence contains a secret ({found}); nothing taken from it is kept"
            if evidence
            else f"contains a secret ({found}); nothing was kept"
        )
        raise InvalidArgument(field, description, reason=Reason.SECRET_DETECTED)
