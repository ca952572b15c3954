"""Two rules about evidence, each written once and applied on every write path (create, correct,
confirm, propose, import confirmation, restore): see docs in the README under "Evidence rules".

Stale evidence: what was said before a key was deleted, or before the revision that now holds
the key, cannot write that key again. Only newer evidence can.

Grounding: evidence proves who spoke, not what was said. A value becomes ACTIVE at once only
when the quote (or, without a quote, the whole evidence) supports it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from memory_service.domain import rules
from memory_service.domain.model import Memory, Revision, RevisionStatus

UNGROUNDED = "UNGROUNDED"

# --- stale evidence ------------------------------------------------------------------------------


def said_time(revision: Revision) -> datetime:
    """When a revision's evidence was said; no later than the revision was written."""
    said = revision.provenance.source_time
    return revision.create_time if said is None else min(said, revision.create_time)


def offered_time(revision: Revision) -> datetime | None:
    """When a stored revision's evidence was said, offered again to hold its key (a confirmation,
    a restore): no later than the revision was written, and unknown stays unknown (old)."""
    said = revision.provenance.source_time
    return None if said is None else min(said, revision.create_time)


def evidence_time(claimed: datetime | None, recorded: datetime | None) -> datetime | None:
    """A claimed source time can only make evidence older than its record, never newer."""
    if claimed is None:
        return recorded
    if recorded is None:
        return claimed
    return min(claimed, recorded)


def archive_time(claimed: datetime | None, uploaded: datetime) -> datetime | None:
    """When an archived statement was said: what the archive claims, but no later than the
    upload (an archive cannot hold what was said after it). Unknown stays unknown."""
    return None if claimed is None else min(claimed, uploaded)


@dataclass(frozen=True)
class Offered:
    """Evidence offered to write `value` to a key."""

    said: datetime | None  # when it was said; None when unknown, which counts as old
    value: str
    subject_statement: bool  # the subject's own words (authority.py) may bring a value back
    ref: str = ""  # its name, to refuse evidence that underlies a deleted memory


@dataclass(frozen=True)
class KeyHistory:
    """What the store knows about a key when new evidence arrives to write it."""

    deleted_at: datetime | None  # the key's newest deletion marker, if any
    memory: Memory | None  # the live memory holding the key, if any
    evidence_withdrawn: bool = False  # the evidence underlies a deleted memory


def stale_evidence(
    said: datetime | None,
    history: KeyHistory,
    value: str,
    *,
    subject_statement: bool,
    now: datetime,
    exclude: Revision | None = None,
) -> str:
    """Why evidence said at `said` may not write `value` to the key; '' when it may.

    - evidence said at or before the key's deletion (or of unknown time, when the key was
      deleted) never recreates it; nor does evidence that underlies a deleted memory;
    - evidence said before the evidence of the newest active revision (counting revisions
      effective in the future) cannot replace it; unknown times count as old;
    - a value the memory already had and that was superseded or rejected comes back only
      from the subject's own statement (imports, inference and rules cannot revive it).
    """
    deleted_at = history.deleted_at
    if deleted_at is not None and (said is None or said <= deleted_at):
        return (
            "the memory was deleted after this evidence was said; only newer evidence may write it"
        )
    if history.evidence_withdrawn:
        return "this evidence underlies a deleted memory"
    memory = history.memory
    if memory is None:
        return ""
    newest = _newest_active(r for r in memory.revisions if r is not exclude)
    if newest is not None and (said is None or said < said_time(newest)):
        return (
            f"the evidence predates revision {newest.number}, which holds the key now; "
            "an older statement cannot undo a newer one"
        )
    if not subject_statement:
        normalized = rules.normalize_for_match(value)
        for revision in memory.revisions:
            state = rules.state_at(revision, now)
            if state in (RevisionStatus.SUPERSEDED, RevisionStatus.REJECTED) and (
                rules.normalize_for_match(revision.value) == normalized
            ):
                return (
                    f"revision {revision.number} with this value was {state.value.lower()}; "
                    "only the subject's own statement brings it back"
                )
    return ""


def _newest_active(revisions: Iterable[Revision]) -> Revision | None:
    newest: Revision | None = None
    for revision in revisions:
        if revision.status is RevisionStatus.ACTIVE and (
            newest is None or said_time(revision) > said_time(newest)
        ):
            newest = revision
    return newest


# --- grounding -----------------------------------------------------------------------------------

WORD = re.compile(r"\w+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "i'm",
        "i've",
        "i'd",
        "let's",
        "s",
        "t",
        "re",
        "ve",
        "ll",
        "d",
        "m",
    ]
)


NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "dozen",
        "half",
        "quarter",
        "twice",
        "thrice",
        "double",
        "triple",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
    ]
)
# Words that turn a statement into its opposite. "n't" is spelled out before words are split,
# so "don't call" and "do not call" read alike.
NEGATIONS = frozenset(
    [
        "no",
        "not",
        "never",
        "nor",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nowhere",
        "cannot",
        "without",
        "stop",
    ]
)
CONTRACTED_NOT = re.compile(r"(?:ca)?n['\u2019]t\b")
# An inflection a prefix match may add ("lover"/"love", "preferr"/"prefer"); longer endings
# such as "-less" or "-free" change the meaning and must match as they are.
MAX_INFLECTION_CHARS = 3


def _words(text: str) -> list[str]:
    return WORD.findall(CONTRACTED_NOT.sub(" not", text.casefold()))


def content_words(text: str) -> list[str]:
    """Casefolded words minus common function words, with plural and -ing/-ed endings cut."""
    out = []
    for word in _words(text):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


def _is_figure(word: str) -> bool:
    """Figures, identifiers and numbers spelled out are compared exactly."""
    return any(c.isdigit() for c in word) or word in NUMBER_WORDS


SENTENCE_END = re.compile(r"[.!?;\n]")


def _sentence_of(quote: str, evidence_text: str) -> str:
    """The quote with the rest of its sentence: a quote that leaves out the "don't" before it
    still reads as negated."""
    span = rules.quote_span(quote, evidence_text)
    if span is None:
        return quote
    text, start, end = span
    ends = [m.start() for m in SENTENCE_END.finditer(text)]
    first = max((i + 1 for i in ends if i < start), default=0)
    last = min((i for i in ends if i >= end), default=len(text))
    return text[first:last]


def _negated(text: str) -> bool:
    return any(word in NEGATIONS for word in _words(text))


def _stem(word: str) -> str:
    if _is_figure(word):
        return word
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    return word


def _matches(word: str, support: set[str]) -> bool:
    if word in support:
        return True
    if _is_figure(word) or len(word) < 4:
        return False
    return any(
        len(other) >= 4
        and abs(len(other) - len(word)) <= MAX_INFLECTION_CHARS
        and (other.startswith(word) or word.startswith(other))
        for other in support
        if not _is_figure(other)
    )


# Inside `remembering_groundings()`: answers by (value, quote, evidence text).
_GROUNDINGS: ContextVar[dict[tuple[str, str, str], str] | None] = ContextVar(
    "groundings", default=None
)


@contextmanager
def remembering_groundings() -> Iterator[None]:
    """Within one call, `grounding` answers the same value, quote and evidence text once: a
    batch asks before its write transaction (outside SQLite's one writer lock), and the write
    finds the answers. They live only as long as the call."""
    token = _GROUNDINGS.set({}) if _GROUNDINGS.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _GROUNDINGS.reset(token)


def grounding(value: str, quote: str, evidence_text: str) -> str:
    """Why the value is not supported by its evidence; '' when it is (see `_grounding`)."""
    known = _GROUNDINGS.get()
    if known is None:
        return _grounding(value, quote, evidence_text)
    found = known.get((value, quote, evidence_text))
    if found is None:
        found = known[(value, quote, evidence_text)] = _grounding(value, quote, evidence_text)
    return found


def _grounding(value: str, quote: str, evidence_text: str) -> str:
    """Why the value is not supported by its evidence; '' when it is.

    The support is the quote when one is given (it occurs in the evidence), else the whole
    evidence. The value is supported when every figure or identifier in it (a word with a
    digit, or a number spelled out) occurs in the support as it is, and every other content
    word does up to an inflection (casefolded, common function words ignored, plural/-ing/-ed
    endings cut). A value that shares most words with its support but adds one of its own
    ("love" for "hate") says something else. A negation ("no", "not", "never", "n't") in only
    one of value and support turns it into its opposite. A value of function words only must
    occur in the support as it is.
    """
    support_text = quote or evidence_text
    support = set(content_words(support_text))
    words = set(content_words(value))
    figures = {w for w in words if _is_figure(w)}
    plain = words - figures
    if any(w not in support for w in figures):
        return f"{UNGROUNDED}: a figure or identifier in the value does not occur in its evidence"
    if _negated(value) != _negated(_sentence_of(quote, evidence_text) if quote else support_text):
        return f"{UNGROUNDED}: the value and its evidence disagree on a negation"
    if not plain:
        if figures or rules.quote_occurs(value, support_text):
            return ""
        return f"{UNGROUNDED}: the value does not occur in its evidence"
    if not all(_matches(w, support) for w in plain):
        return f"{UNGROUNDED}: a word of the value is absent from its quote or evidence"
    return ""


def is_ungrounded(status_reason: str) -> bool:
    return status_reason.startswith(f"{UNGROUNDED}:")
