"""The lexical half of hybrid search: BM25 term weights as sparse vectors.

A CRM lives on exact tokens a sentence embedding blurs: order numbers ("ORD-48213"), payment
terms ("net-30"), amounts ("$12,500"), people's and accounts' names. The tokenizer keeps such
codes whole (and also their parts, so "order 48213" meets "ORD-48213"), lowercases, drops a
few function words and plural endings. Letters of any script count (Müller, Søren); text
without spaces (Chinese, Japanese) is not segmented, so BM25 adds little there. Each term is
hashed to a fixed sparse index (CRC-32, the same in every process and release) and weighted
by BM25's term-frequency saturation and length normalisation; the engine multiplies in the
inverse document frequency itself (Qdrant's IDF modifier on the sparse vector), so no corpus
statistics live here. The IDF is the collection's, over all tenants: it never decides which
documents a search may return, but the scores and order of a tenant's own results depend on how
often a term occurs in other tenants' memories (docs/benchmarks.md, hybrid search).
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

# BM25's usual constants; AVERAGE_LENGTH is the mean length in terms of an indexed memory
# ("subject (context): value") measured on the quality bench's corpus (bench/quality).
K1 = 1.2
B = 0.75
AVERAGE_LENGTH = 12.0
MAX_TERMS = 512  # a document of 8,000 characters has fewer distinct terms in practice
MAX_TOKEN = 64

_TOKEN = re.compile(r"[^\W_]+(?:[-/.,:@_+'\u2019][^\W_]+)*")  # letters of any script, digits
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SHORTHAND = re.compile(r"(\d+(?:\.\d+)?)([km])")
_SEPARATORS = re.compile(r"[-/.,:@_+'\u2019]+")
STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """a about an and any are as at be been but by can could did do does for from had has have
    he her hers him his how i if in into is it its me my of on or our she so than that the
    their them then there these they this those to us was we were what when where which who
    whom whose why will with would you your yours""",
    )
)


@dataclass(frozen=True)
class SparseTerms:
    """Parallel indices and weights, indices ascending and unique."""

    indices: tuple[int, ...] = ()
    values: tuple[float, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.indices)


NO_TERMS = SparseTerms()


class SparseEncoder(Protocol):
    def document(self, text: str) -> SparseTerms:
        """Weights of an indexed text."""

    def query(self, text: str) -> SparseTerms:
        """Weights of a query: which terms it asks for."""


def _stem(word: str) -> str:
    """Plural endings only: enough for "meetings"/"meeting", "invoices"/"invoice"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _forms(token: str) -> list[str]:
    """The token as written, normalised, plus its parts when it is a compound."""
    if token.endswith(("'s", "\u2019s")):  # possessive: "Acme's" is "Acme"
        token = token[:-2]
    if _THOUSANDS.fullmatch(token):
        return [token.replace(",", "")]
    if _NUMBER.fullmatch(token):
        return [token]
    # 120k, 1.5m. Only a token short enough to be kept: a longer one would be dropped anyway,
    # and its amount can overflow a float (infinity has no integer).
    if len(token) <= MAX_TOKEN and (shorthand := _SHORTHAND.fullmatch(token)):
        scale = 1_000 if shorthand.group(2) == "k" else 1_000_000
        amount = float(shorthand.group(1)) * scale
        return [token, f"{amount:.0f}" if amount == int(amount) else str(amount)]
    parts = [p for p in _SEPARATORS.split(token) if p]
    if len(parts) <= 1:
        word = _stem(token)
        return [] if word in STOPWORDS or not word else [word]
    if "," in token:  # a list written without spaces: each item on its own
        return [form for part in token.split(",") if part for form in _forms(part)]
    whole = _stem(token)
    return [whole, *(_stem(p) for p in parts if p not in STOPWORDS)]


def tokens(text: str) -> list[str]:
    """The terms of a text, in order, with repeats."""
    terms: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        terms.extend(t for t in _forms(match.group()) if 0 < len(t) <= MAX_TOKEN)
    return terms


def term_index(term: str) -> int:
    """A term's sparse dimension: stable across processes (Python's hash() is salted)."""
    return zlib.crc32(term.encode("utf-8"))


def _terms(weights: dict[int, float]) -> SparseTerms:
    ordered = sorted(weights.items())[:MAX_TERMS]
    return SparseTerms(tuple(i for i, _ in ordered), tuple(w for _, w in ordered))


class Bm25Encoder:
    """BM25 without its IDF factor, which the engine applies over the whole collection."""

    def __init__(self, k1: float = K1, b: float = B, average_length: float = AVERAGE_LENGTH):
        self._k1 = k1
        self._b = b
        self._average = average_length

    def document(self, text: str) -> SparseTerms:
        terms = tokens(text)
        norm = self._k1 * (1 - self._b + self._b * len(terms) / self._average)
        weights: dict[int, float] = {}
        for term, count in Counter(terms).items():
            # Two terms hashing alike (about one pair in 10^5 for 1,000 distinct terms) add up.
            index = term_index(term)
            weights[index] = weights.get(index, 0.0) + count * (self._k1 + 1) / (count + norm)
        return _terms(weights)

    def query(self, text: str) -> SparseTerms:
        return _terms({term_index(term): 1.0 for term in set(tokens(text))})
