"""Grounding: evidence proves who spoke, not what was said. A value applies at once only when
the message it cites says it, in the value's words or in others; otherwise it is a CANDIDATE
whose reason names the word or figure the evidence does not carry.

Two questions decide it, and the bench (`bench/grounding/`) measures both on labelled data:
what does the rule refuse that it should (a changed figure, identifier, e-mail or name, a
flipped negation, an opposite, added facts) and what does it refuse that a user needs (an
extractor's paraphrase of a plain statement)?

- The support is the message. A quote only locates the statement: the sentence it sits in
  supports the value, so a short quote ("net 30") does not leave the rest of the value bare.
- Figures (digits, numbers spelled out), e-mail addresses and words of order, time and
  direction (`lexicon.POLAR`: "before", "Friday", "monthly") must occur in the support.
- Every other content word must occur up to an inflection or a derivation ("payment" for
  "pay"), or as a synonym (`lexicon.SYNONYMS`); words an extractor adds to frame a statement
  ("the user prefers") and a leading name for a speaker who said "I" are let through.
- A value's negation must agree with the clause of the support that says what the value says
  ("I'm vegetarian, so no meat" supports "is vegetarian"; "Don't call me" never "call me").
- A word whose opposite (`lexicon.ANTONYMS`) is in the support is refused by name.

It is lexical on purpose: it answers the same on every machine, with the sidecar down, and from
the message alone (never another tenant's data).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import lru_cache

from memory_service.domain import lexicon, rules
from memory_service.domain.call_memo import CallMemo
from memory_service.domain.ports import Thesaurus

UNGROUNDED = "UNGROUNDED"

_WORD = re.compile(r"\d+(?:[.:]\d+)+|\w+")  # "3.5" and "9:30" are one figure
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Codes that join letters and digits ("BX-440-R", "4410-A"): a letter changed is another code.
_CODE = re.compile(
    r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])(?:[^\W_]{1,4}|\d\w*)(?:-(?:[^\W_]{1,4}|\d\w*))+"
    r"(?![\w-])"
)
_NO_LONGER = re.compile(r"\bno\s+longer\b|\bany\s?more\b")
_EVERY = re.compile(r"\b(?:every|each)\s+(day|week|month|quarter|year|morning|evening|night)\b")
_PERIODS = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly"}
_PERIODS |= {"year": "yearly", "morning": "daily morning", "evening": "daily evening"}
_PERIODS |= {"night": "nightly"}
_CANNOT_STAND = re.compile(r"\bnot\s+stand\b")
_ONE = re.compile(r"\b(?:a|an|one|per)\s+(?=(?:year|month|week|day|hour|minute|quarter)\b)")
_CONTRACTED_NOT = re.compile(r"(?:ca)?n['\u2019]t\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)\b")
_UNIT = re.compile(r"(?<=\d)(am|pm|a\.m\.|p\.m\.|h|hrs?|mins?|x)\b")
_THOUSAND_SUFFIX = re.compile(r"(?<=\d)k\b")
_CURRENCY = {"$": " usd ", "€": " eur ", "£": " gbp ", "%": " percent "}
_CURRENCY_WORDS = {"dollar": "usd", "dollars": "usd", "bucks": "usd", "euro": "eur"}
_CURRENCY_WORDS |= {"euros": "eur", "pct": "percent"}
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_COMPOUND_NUMBER = re.compile(rf"\b({_TENS})[-\s]({_UNITS})\b")
_SENTENCE_END = re.compile(r"[.!?;\n]")
_CLAUSE_BREAK = re.compile(
    r"[.!?;:,\n()]|\b(?:but|so|because|although|though|while|whereas|except|however)\b"
    r"|\band(?=\s+(?:i|we|they|he|she|you|it)\b)"
)
_ADVERB = re.compile(r"\w+ly|now|still|often|always|also|just")
_POSSESSIVE = re.compile(r"['\u2019]s$")
_FIRST_PERSON = frozenset(["i", "me", "my", "mine", "myself", "we", "us", "our", "ours"])
_MIN_PREFIX = 4  # words shorter than this match only as they are
_MAX_INFLECTION_CHARS = 3  # "-less" and "-free" are longer: they change the meaning
# Endings cut before words are compared, longest first; each keeps a stem of at least 3 or 4
# letters ("paper" is not "pap" + "er", "early" not "ear" + "ly").
_PLURAL: tuple[tuple[str, str, int], ...] = (
    ("ies", "y", 2),
    ("ied", "y", 2),
    ("sses", "ss", 2),
    ("xes", "x", 2),
)
_PLURAL += (("ches", "ch", 2), ("shes", "sh", 2), ("s", "", 3))
_DERIVATIONS = (
    ("ations", 4),
    ("ation", 4),
    ("ments", 3),
    ("ment", 3),
    ("ness", 4),
    ("ences", 4),
    ("ence", 4),
    ("ances", 4),
    ("ance", 4),
    ("ings", 3),
    ("ing", 2),
    ("sions", 4),
    ("sion", 4),
    ("ions", 4),
    ("ion", 4),
    ("ity", 4),
    ("able", 4),
    ("ible", 4),
    ("ive", 4),
    ("ful", 4),
    ("ers", 4),
    ("er", 4),
    ("ors", 4),
    ("or", 4),
    ("als", 4),
    ("al", 4),
    ("ly", 4),
    ("ed", 2),
)


def base(word: str) -> str:
    """A word reduced to what its inflections and derivations share ("payments" -> "pay")."""
    if word in lexicon.IRREGULAR:
        return lexicon.IRREGULAR[word]
    if _is_figure(word) or len(word) <= 3:
        return word
    for suffix, replacement, keep in _PLURAL:
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= keep:
            word = word[: -len(suffix)] + replacement
            break
    for _ in range(2):  # "annually" -> "annual" -> "annu", as "annual" reduces
        for suffix, keep in _DERIVATIONS:
            if word.endswith(suffix) and len(word) - len(suffix) >= keep:
                word = word[: -len(suffix)]
                if suffix in ("ing", "ed") and _lost_e(word):
                    return word + "e"  # "using" -> "use", "hiring" -> "hire", not "asked"
                break
        else:
            break
    return word


def _lost_e(stem: str) -> bool:
    """A short stem that ended in a silent e before -ing/-ed: a vowel, then one consonant."""
    vowels = "aeiou"
    if len(stem) > 3 or stem[-1] in vowels + "wxy" or stem[-2] not in vowels:
        return False
    return len(stem) == 2 or stem[0] not in vowels


def _is_figure(word: str) -> bool:
    return any(c.isdigit() for c in word) or word in lexicon.NUMBER_WORDS


def _close(one: str, other: str) -> bool:
    """The same word, or one an inflection longer than the other ("preferr"/"prefer")."""
    if one == other:
        return True
    if min(len(one), len(other)) < _MIN_PREFIX or abs(len(one) - len(other)) > (
        _MAX_INFLECTION_CHARS
    ):
        return False
    return one.startswith(other) or other.startswith(one)


def _index_groups() -> dict[str, list[frozenset[str]]]:
    by_start: dict[str, list[frozenset[str]]] = {}
    for group in lexicon.SYNONYMS:
        reduced = frozenset(base(word) for word in group)
        for word in reduced:
            by_start.setdefault(word[:3], []).append(reduced)
    return by_start


_GROUPS = _index_groups()
_OPPOSITES: dict[str, set[str]] = {}
for _one, _other in lexicon.ANTONYMS:
    _OPPOSITES.setdefault(base(_one), set()).add(base(_other))
    _OPPOSITES.setdefault(base(_other), set()).add(base(_one))


def _opposites(stem: str) -> set[str]:
    found: set[str] = set()
    for key, others in _OPPOSITES.items():
        if _close(stem, key):
            found |= others
    return found


def _synonyms(stem: str) -> set[str]:
    found: set[str] = set()
    for group in _GROUPS.get(stem[:3], ()):
        if any(_close(stem, member) for member in group):
            found |= group
    return found


@dataclass(frozen=True)
class _Text:
    """A text as the rule reads it: its words (casefolded, figures normalised) and their bases."""

    words: tuple[str, ...]
    bases: frozenset[str]

    @staticmethod
    def of(text: str) -> _Text:
        words = tuple(_words(text))
        return _Text(words, frozenset(base(word) for word in words))

    def has(self, word: str, *, loosely: bool = True) -> bool:
        """Whether the word occurs here: as it is for figures; by its base, a close base
        (`loosely`) or a synonym for the others."""
        return self.strength(word, loosely=loosely) > 0

    def strength(self, word: str, *, loosely: bool = True) -> int:
        """2 when the word itself occurs here (as `has` reads it), 1 through a synonym, else 0."""
        if _is_figure(word):
            return 2 if word in self.words else 0
        stem = base(word)
        if stem in self.bases:
            return 2
        if loosely and any(_close(stem, other) for other in self.bases if not _is_figure(other)):
            return 2
        members = _synonyms(stem)
        return int(any(_close(member, other) for member in members for other in self.bases))

    def negated(self) -> bool:
        """A negation among the words; "stop" only before a verb ("stop sending", not "stop
        the pilot", which ends it)."""
        following = [*self.words[1:], ""][: len(self.words)]
        return any(
            word in lexicon.NEGATORS and (word not in lexicon.STOPPING or after.endswith("ing"))
            for word, after in zip(self.words, following, strict=True)
        )


def _prepared(text: str) -> str:
    """One spelling for what may be written several ways: "n't" as "not", "1,250" as "1250",
    "10am" as "10 am", "3rd" as "3", "$" as "usd", "twenty-five" as "25"."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _CONTRACTED_NOT.sub(" not", text)
    for sign, word in _CURRENCY.items():
        text = text.replace(sign, word)
    text = _THOUSANDS.sub("", text)
    text = _ORDINAL.sub("", text)
    text = _UNIT.sub(r" \1", text)
    text = _THOUSAND_SUFFIX.sub("000", text)
    text = _ONE.sub("1 ", text)
    text = _NO_LONGER.sub(lambda m: " no " if m.group().startswith("no") else " ", text)
    text = _EVERY.sub(lambda m: _PERIODS[m.group(1)], text)  # "every week" as "weekly"
    text = _CANNOT_STAND.sub("dislike", text)  # "can't stand" says "dislike"
    return _COMPOUND_NUMBER.sub(
        lambda m: str(lexicon.NUMBER_VALUES[m.group(1)] + lexicon.NUMBER_VALUES[m.group(2)]), text
    )


def _words(text: str) -> Iterator[str]:
    for word in _WORD.findall(_prepared(_EMAIL.sub(" ", text))):
        word = _CURRENCY_WORDS.get(word, word)
        value = lexicon.NUMBER_VALUES.get(word)
        yield word if value is None else str(value)


def _content(word: str) -> bool:
    if word in lexicon.FUNCTION_WORDS or word in lexicon.NEGATORS:
        return False
    return len(word) >= 2 or word.isdigit()


def _located(quote: str, evidence_text: str) -> str:
    """The sentence(s) the quote sits in: it says where the statement is, not all it says."""
    span = rules.quote_span(quote, evidence_text)
    if span is None:
        return quote
    text, start, end = span
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    first = max((i + 1 for i in ends if i < start), default=0)
    last = min((i for i in ends if i >= end), default=len(text))
    cased = " ".join(evidence_text.split())  # the same text before casefolding, for its names
    return (cased if len(cased) == len(text) else text)[first:last]


def _proper_names(support_text: str) -> set[str]:
    """Words the support writes with a capital away from a sentence's start: its names."""
    found: set[str] = set()
    for sentence in _SENTENCE_END.split(support_text):
        for word in _WORD.findall(sentence)[1:]:
            if word[:1].isupper():
                found.add(word.casefold())
    return found


def _leading_names(value: str, support: _Text, proper: set[str]) -> set[str]:
    """The speaker named by an extractor writing about the conversation ("Caroline attended
    ...", "Luis Ortega runs ...", "Jon's crew ..."): up to three capitalised words at the start
    of the value, the support's own names among them, then a possessive, "and" or a finite
    verb. A sentence-case word the support has in lower case ("Removing a shift", "Sister
    Hanna") ends the name."""
    tokens = value.split()
    names: list[str] = []
    for token in tokens[:3]:
        word = _WORD.findall(token)
        folded = word[0].casefold() if word else ""
        if not word or not word[0][:1].isupper() or (support.has(folded) and folded not in proper):
            break
        names.append(folded)
        if _POSSESSIVE.search(token):
            return set(names)
    rest = [t.casefold() for t in tokens[len(names) :] if not _ADVERB.fullmatch(t.casefold())]
    following = rest[0] if names and rest else ""
    finite = following in lexicon.FINITE_VERBS or following.endswith(("s", "ed"))
    return set(names) if finite or following == "and" else set()


def _capitalised(value: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(value)[1:] if word[:1].isupper()}


def _quoted(word: str, value: str) -> str:
    """A word of the value for a reason; never the whole value (a reason does not repeat it)."""
    return "the value" if rules.normalize_for_match(value) == word else f"{word!r}"


_DISLIKING = frozenset(base(word) for word in lexicon.DISLIKING)
_LIKING = frozenset(base(word) for word in lexicon.LIKING)


def _negative_prefixes(value: str, support: _Text) -> str:
    """The value with "unwilling" read as "not willing" where the evidence has "willing"."""

    def spelled_out(match: re.Match[str]) -> str:
        word = match.group()
        for prefix in ("un", "dis", "in"):
            rest = word[len(prefix) :]
            if (
                word.casefold().startswith(prefix)
                and len(rest) >= 4
                and support.has(rest.casefold())
            ):
                return f"not {rest}"
        return word

    return _WORD.sub(spelled_out, value)


def _says_dislike(support: _Text) -> bool:
    """A word of disliking, or a negated word of liking ("don't like", not "don't mind")."""
    return bool(support.bases & _DISLIKING) or (support.negated() and bool(support.bases & _LIKING))


def _clause_negation_disagrees(value_text: str, support_text: str) -> bool:
    """Whether a clause of the value ("carry tablets", "not laptops") differs in negation from
    the support's clause(s) saying most of what it says; with no such clause, from the support
    as a whole."""
    clauses = [_Text.of(part) for part in _CLAUSE_BREAK.split(support_text) if part.strip()]
    for part in _CLAUSE_BREAK.split(value_text):
        said = _Text.of(part)
        words = [w for w in said.words if _content(w) and w not in lexicon.FRAMING_WORDS]
        if not words and not said.negated():
            continue
        scored = [(sum(clause.strength(word) for word in words), clause) for clause in clauses]
        best = max((score for score, _ in scored), default=0)
        if best == 0:
            if said.negated() != _Text.of(support_text).negated():
                return True
        elif any(clause.negated() != said.negated() for score, clause in scored if score == best):
            return True
    return False


def _grounding(value: str, quote: str, evidence_text: str) -> str:
    """Why the value is not supported by its evidence; '' when it is (see the module)."""
    support_text = _located(quote, evidence_text) if quote else evidence_text
    support = _Text.of(support_text)
    said = _Text.of(_negative_prefixes(value, support))
    words = [word for word in said.words if _content(word)]
    problem = (
        _exact_parts(value, support_text, support, words)
        or _opposite_meaning(value, support_text, support, said, words)
        or _unsupported(value, evidence_text, support_text, support, words)
    )
    return f"{UNGROUNDED}: {problem}" if problem else ""


def _exact_parts(value: str, support_text: str, support: _Text, words: list[str]) -> str:
    """E-mail addresses, codes, figures and words of time and order: as the evidence has them."""
    addresses = {email.casefold() for email in _EMAIL.findall(support_text)}
    for email in _EMAIL.findall(value):
        if email.casefold() not in addresses:
            return f"the e-mail address {email!r} does not occur in its evidence"
    codes = {code.casefold() for code in _CODE.findall(support_text)}
    for code in _CODE.findall(value):
        if code.casefold() not in codes:
            return f"the identifier {code.casefold()!r} does not occur in its evidence"
    for word in words:
        if _is_figure(word) and not support.has(word):
            return f"the figure or identifier {_quoted(word, value)} does not occur in its evidence"
    for word in words:
        if word in lexicon.POLAR and not support.has(word, loosely=False):
            return f"{_quoted(word, value)} does not occur in its evidence"
    return ""


def _opposite_meaning(
    value: str, support_text: str, support: _Text, said: _Text, words: list[str]
) -> str:
    """An opposite of a word of the evidence, a dislike it does not say, a negation it does
    not share."""
    for word in words:
        if support.has(word):
            continue
        opposites = _opposites(base(word))
        opposite = {other for other in support.bases if any(_close(other, o) for o in opposites)}
        if opposite:
            return (
                f"{_quoted(word, value)} is the opposite of {sorted(opposite)[0]!r} in its evidence"
            )
    for word in said.words:
        if base(word) in _DISLIKING and not _says_dislike(support):
            return f"the word {_quoted(word, value)} does not occur in its evidence"
    if _clause_negation_disagrees(_negative_prefixes(value, support), support_text):
        return "the value and its evidence disagree on a negation"
    return ""


def _unsupported(
    value: str, evidence_text: str, support_text: str, support: _Text, words: list[str]
) -> str:
    """A name the message does not have, or a word its supporting sentence does not say."""
    if not words:  # function words or symbols only: they must be there as they are
        return (
            ""
            if rules.quote_occurs(value, support_text)
            else "the value does not occur in its evidence"
        )
    first_person = _FIRST_PERSON & set(support.words)
    proper = _proper_names(support_text)
    speaker_named = _leading_names(value, support, proper) if first_person else set()
    names = {name for name in _capitalised(value) if _content(name) and not _is_figure(name)}
    message = _Text.of(evidence_text)
    for word in sorted(names - speaker_named):
        if base(word) not in message.bases:  # as it is, give or take a plural: not "Tomasz"
            return f"the name {_quoted(word, value)} does not occur in its evidence"
    for word in words:
        free = word in names or word in lexicon.FRAMING_WORDS or word in speaker_named
        if not free and not support.has(word) and not _thesaurus_supports(word, support):
            return f"the word {_quoted(word, value)} does not occur in its evidence"
    return ""


# A thesaurus the composition root plugs in (`use_thesaurus`); without one, only the lexicon.
_THESAURUS: list[Thesaurus] = []


def use_thesaurus(thesaurus: Thesaurus | None) -> None:
    """Plugs in (or, with None, takes out) the thesaurus every later grounding consults."""
    _THESAURUS[:] = [] if thesaurus is None else [thesaurus]
    _entry_bases.cache_clear()


@lru_cache(maxsize=4096)
def _entry_bases(word: str) -> frozenset[str]:
    """The bases of the words the thesaurus lists under any form of `word`."""
    if not _THESAURUS:
        return frozenset()
    forms = {word, base(word), base(word) + "e", lexicon.IRREGULAR.get(word, word)}
    listed: set[str] = set()
    for form in forms:
        listed |= {_key(other) for other in _THESAURUS[0].entry(form)}
    return frozenset(listed)


def _key(word: str) -> str:
    """A word's base without a final e: "arrive" and "arrived" meet as "arriv"."""
    stem = base(word)
    return stem[:-1] if len(stem) > 3 and stem.endswith("e") else stem


def _thesaurus_supports(word: str, support: _Text) -> bool:
    """Whether a content word of the support and `word` each list the other (both ways: a
    one-way entry is often only an association)."""
    stem = _key(word)
    listed = _entry_bases(word)
    if not listed:
        return False
    return any(
        _key(surface) in listed and stem in _entry_bases(surface)
        for surface in support.words
        if _content(surface) and not _is_figure(surface)
    )


_GROUNDINGS = CallMemo("groundings")


def remembering_groundings() -> AbstractContextManager[None]:
    """Within one call, `grounding` answers the same value, quote and evidence text once: a
    batch asks before its write transaction (outside SQLite's one writer lock), and the write
    finds the answers."""
    return _GROUNDINGS.remembering()


def grounding(value: str, quote: str, evidence_text: str) -> str:
    """Why the value is not supported by its evidence; '' when it is (see the module)."""
    return _GROUNDINGS.answer(
        (value, quote, evidence_text), lambda: _grounding(value, quote, evidence_text)
    )


def is_ungrounded(status_reason: str) -> bool:
    return status_reason.startswith(f"{UNGROUNDED}:")
