"""How the grounding rule (`grounding.py`) reads a text: one spelling for what may be written
several ways, words reduced to what their inflections and derivations share, synonyms and
opposites from `lexicon.py`. Apart from the rule so that each stays one screen to read."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from memory_service.kernel.domain.secrets import INVISIBLE
from memory_service.memories.domain import lexicon, phrases

# "3.5", "9:30" and dates ("2024-03-05", "05/03/2024") are one figure each
WORD = re.compile(r"\d{4}-\d{1,2}-\d{1,2}\b|\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\d+(?:[.:]\d+)+|\w+")
# Tried only where a run of address characters starts, so a long run fails once (linear).
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Codes that join letters and digits ("BX-440-R", "4410-A"): a letter changed is another code.
# Found as runs of word characters joined by "-" or "/" (linear), then kept when they mix.
JOINED = re.compile(r"(?<![\w/-])\w+(?:[-/]\w+)+")
_APOSTROPHES = str.maketrans({c: "'" for c in "\u00b4`\u02bc\u2018\u2019\u02b9\u2032"})
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})
MEASURE = re.compile(r"\d+-[^\W\d_]{3,}")  # "30-day", "3-year": a figure and a unit
SINGLE_LETTER = re.compile(r"(?<![\w.'\u2019-])([B-HJ-Z]|A(?!\s+[a-z]))(?![\w'\u2019])")
_NO_LONGER = re.compile(r"\bno\s+(?:longer|more(?!\s+than))\b|\bany\s?more\b")
_NO_ONE = re.compile(r"\bno[-\s]one\b")
_MAY = re.compile(r"(?<=[\w,] )May\b|^May(?=\s+\d)")  # the month, not "may I"
_EVERY = re.compile(r"\b(?:every|each)\s+(day|week|month|quarter|year|morning|evening|night)\b")
_PERIODS = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly"}
_PERIODS |= {"year": "yearly", "morning": "daily morning", "evening": "daily evening"}
_PERIODS |= {"night": "nightly"}
_CANNOT_STAND = re.compile(r"\bnot\s+stand\b")
_ONE = re.compile(r"\b(?:a|an|one|per)\s+(?=(?:year|month|week|day|hour|minute|quarter)\b)")
_CONTRACTED_NOT = re.compile(r"(?:ca)?n['\u2019\u00b4`\u02bc]t\b")
_NOT_ONLY = re.compile(r"\bnot\s+only\b")
_USED_TO = re.compile(r"\bused\s+to\s+(?!\w+ing\b)")  # "used to use": no longer
# "gluten-free" and "non-vegetarian" are words of their own, never "gluten" or "vegetarian"
_FREE_OF = re.compile(r"\b(\w+)-free\b")
_NON = re.compile(r"\bnon-(?=\w)")
_MERIDIEM = re.compile(r"(?<=\d)\s*(a\.?m\.?|p\.?m\.?)(?!\w)")
_SPACED_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3})((?: \d{3})+)\b")  # "10 000" as "10000"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)\b")
_UNIT = re.compile(r"(?<=\d)(h|hrs?|mins?|x)\b")
_SCALED = re.compile(r"(\d+(?:\.\d+)?)\s*(k|m|bn|thousand|million|billion|hundred)\b")
_SCALES = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000}
_SCALES |= {"bn": 1_000_000_000, "billion": 1_000_000_000, "hundred": 100}
_CURRENCY = {"$": " usd ", "€": " eur ", "£": " gbp ", "%": " percent "}
_CURRENCY_WORDS = {"dollar": "usd", "dollars": "usd", "bucks": "usd", "euro": "eur"}
_CURRENCY_WORDS |= {"euros": "eur", "pct": "percent", "hr": "hour", "hrs": "hour", "h": "hour"}
_CURRENCY_WORDS |= {"min": "minute", "mins": "minute", "am": "antemeridiem"}
_CURRENCY_WORDS |= {"pm": "postmeridiem"}
_NUMBER_WORD = re.compile(
    r"\b(?:" + "|".join(sorted(lexicon.NUMBER_VALUES, key=len, reverse=True)) + r")\b"
)
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_COMPOUND_NUMBER = re.compile(rf"\b({_TENS})[-\s]({_UNITS})\b")
MIN_PREFIX = 4  # words shorter than this match only as they are
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
    if is_figure(word) or len(word) <= 3:
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
                if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] not in "lsz":
                    return word[:-1]  # "running" -> "run", "planned" -> "plan"
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


def is_figure(word: str) -> bool:
    return any(c.isdigit() for c in word) or word in lexicon.NUMBER_WORDS


def close(one: str, other: str) -> bool:
    """The same word, or one an inflection longer than the other ("preferr"/"prefer")."""
    if one == other:
        return True
    if min(len(one), len(other)) < MIN_PREFIX or abs(len(one) - len(other)) > (
        _MAX_INFLECTION_CHARS
    ):
        return False
    if one.startswith(other) or other.startswith(one):
        return True
    # one last letter apart past a long common stem: "reduct"/"reduce", "decis"/"decid"
    return len(one) == len(other) >= 6 and one[:-1] == other[:-1]


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


def opposites(stem: str) -> set[str]:
    found: set[str] = set()
    for key, others in _OPPOSITES.items():
        if close(stem, key):
            found |= others
    return found


def synonyms(stem: str) -> set[str]:
    found: set[str] = set()
    for group in _GROUPS.get(stem[:3], ()):
        if any(close(stem, member) for member in group):
            found |= group
    return found


@dataclass(frozen=True)
class Text:
    """A text as the rule reads it: its words (casefolded, figures normalised) and their bases."""

    words: tuple[str, ...]
    bases: frozenset[str]

    @staticmethod
    def of(text: str, *, said: bool = False) -> Text:
        """Evidence as the rule reads it; with `said`, a value (see `_reworded`)."""
        words = tuple(_words(text, said=said))
        return Text(words, frozenset(base(word) for word in words))

    def has(self, word: str, *, loosely: bool = True) -> bool:
        """Whether the word occurs here: as it is for figures; by its base, a close base
        (`loosely`) or a synonym for the others."""
        return self.strength(word, loosely=loosely) > 0

    @cached_property
    def _by_start(self) -> dict[str, list[str]]:
        """Bases by their first four letters: a close base shares them (see `close`)."""
        index: dict[str, list[str]] = {}
        for other in self.bases:
            if not is_figure(other) and len(other) >= MIN_PREFIX:
                index.setdefault(other[:MIN_PREFIX], []).append(other)
        return index

    def _near(self, stem: str) -> bool:
        if stem in self.bases:
            return True
        return any(close(stem, other) for other in self._by_start.get(stem[:MIN_PREFIX], ()))

    def strength(self, word: str, *, loosely: bool = True) -> int:
        """2 when the word itself occurs here (as `has` reads it), 1 through a synonym, else 0."""
        if is_figure(word):
            return 2 if word in self.words else 0
        stem = base(word)
        if stem in self.bases or (loosely and self._near(stem)):
            return 2
        return int(any(self._near(member) for member in synonyms(stem)))

    def negated(self) -> bool:
        """A negation among the words; "stop" only before a verb ("stop sending", not "stop
        the pilot", which ends it)."""
        following = [*self.words[1:], ""][: len(self.words)]
        return any(
            word in lexicon.NEGATORS and (word not in lexicon.STOPPING or after.endswith("ing"))
            for word, after in zip(self.words, following, strict=True)
        )


# (needles, pattern, as a value says it, what evidence also says): a pattern runs only on a
# text holding one of its needles (a particle), which keeps long texts cheap.
_REWORDINGS: tuple[tuple[tuple[str, ...], re.Pattern[str], str, str], ...] = tuple(
    (
        tuple(particle.split("|")),
        re.compile(rf"\b(?:{forms})\s+(?:{particle})\b"),
        meaning if meaning in phrases.DIRECTED else r"\g<0>",
        meaning,
    )
    for forms, particle, meaning in phrases.PHRASAL_VERBS
) + tuple(((), re.compile(pattern), said, also) for pattern, said, also in phrases.IDIOMS)


def _reworded(text: str, *, said: bool) -> str:
    """Phrasal verbs and set phrases (`phrases.PHRASAL_VERBS`, `phrases.IDIOMS`): a value reads
    a set phrase as what it means; evidence says the meaning too (`_also`), so "rose" is
    supported by "went up"."""
    for needles, pattern, as_said, also in _REWORDINGS:
        if needles and not any(needle in text for needle in needles):
            continue
        text = pattern.sub(as_said if said else partial(_also, also), text)
    return text


def _also(also: str, match: re.Match[str]) -> str:
    """Evidence keeps a phrase and says its meaning beside it; a phrase holding a negation
    ("not enough", "not working") is replaced, or the negation would stay beside its meaning."""
    if lexicon.NEGATORS & set(match.group().split()):
        return match.expand(also)
    return f"{match.group()} {match.expand(also)}"


def _prepared(text: str) -> str:
    """One spelling for what may be written several ways: "n't" as "not", "1,250" as "1250",
    "10am" as "10 am", "3rd" as "3", "$" as "usd", "twenty-five" and "25k" as numbers,
    "gluten-free" as "glutenfree", "used to" and "no longer" as "no", "every week" as "weekly"."""
    text = _MAY.sub("maymonth", plain(text)).casefold()
    text = _NO_ONE.sub("nobody", text)
    text = _CONTRACTED_NOT.sub(" not", text)
    text = _NOT_ONLY.sub(" ", text)
    text = _USED_TO.sub("no longer ", text)
    text = _FREE_OF.sub(r"\1free", text)
    text = _NON.sub("non", text)
    text = _MERIDIEM.sub(lambda m: " am" if m.group(1)[0] == "a" else " pm", text)
    for sign, word in _CURRENCY.items():
        text = text.replace(sign, word)
    text = _SPACED_THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), text)
    text = _THOUSANDS.sub("", text)
    text = _ORDINAL.sub("", text)
    text = _UNIT.sub(r" \1", text)
    text = _ONE.sub("1 ", text)
    text = _COMPOUND_NUMBER.sub(
        lambda m: str(lexicon.NUMBER_VALUES[m.group(1)] + lexicon.NUMBER_VALUES[m.group(2)]), text
    )
    text = _NUMBER_WORD.sub(lambda m: str(lexicon.NUMBER_VALUES[m.group()]), text)
    text = _SCALED.sub(_scaled, text)
    text = _NO_LONGER.sub(lambda m: " no " if m.group().startswith("no") else " ", text)
    text = _EVERY.sub(lambda m: _PERIODS[m.group(1)], text)  # "every week" as "weekly"
    return _CANNOT_STAND.sub("dislike", text)  # "can't stand" says "dislike"


def plain(text: str) -> str:
    """Compatibility forms folded, invisible characters dropped, every dash an ASCII hyphen."""
    text = text.translate(_APOSTROPHES)  # before NFKC, which splits an acute accent off
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_DASHES)


def _scaled(match: re.Match[str]) -> str:
    """ "1.5k", "5 million", "two hundred" (as "2 hundred") as the whole number."""
    number = float(match.group(1)) * _SCALES[match.group(2)]
    return str(int(number)) if number == int(number) else str(number)


def _words(text: str, *, said: bool = False) -> Iterator[str]:
    for word in WORD.findall(_reworded(_prepared(EMAIL.sub(" ", text)), said=said)):
        word = _CURRENCY_WORDS.get(word, word)
        value = lexicon.NUMBER_VALUES.get(word)
        yield word if value is None else str(value)


def is_content(word: str) -> bool:
    """Not a function word, nor a negation ("stop" is a word of its own before a noun)."""
    if word in lexicon.FUNCTION_WORDS or (
        word in lexicon.NEGATORS and word not in lexicon.STOPPING
    ):
        return False
    return len(word) >= 2 or word.isdigit()
