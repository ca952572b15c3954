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
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import lru_cache

from memory_service.kernel.domain import rules
from memory_service.kernel.domain.call_memo import CallMemo
from memory_service.kernel.domain.ports import Thesaurus
from memory_service.memories.domain import lexicon, phrases
from memory_service.memories.domain.wording import (
    EMAIL,
    JOINED,
    MEASURE,
    MIN_PREFIX,
    SINGLE_LETTER,
    WORD,
    Text,
    base,
    close,
    is_content,
    is_figure,
    opposites,
    plain,
    synonyms,
)

UNGROUNDED = "UNGROUNDED"

_SENTENCE_END = re.compile(r"[.!?;\n]")
_AFFIRMED = frozenset(["yes", "yeah", "yep", "sure", "definitely", "absolutely", "correct"])
_CLAUSE_BREAK = re.compile(
    r"[.,:](?!\d)|(?<!\d)[.,:]|[!?;\n()]|\b(?:but|so|because|although|though|while|whereas|except|however)\b"
    r"|\b(?:when|whenever|if|unless)\b"
    r"|\band(?=\s+(?:i|we|they|he|she|you|it)\b)|\band(?=\s+[A-Z][a-z])"
)
_ADVERB = re.compile(r"\w+ly|now|still|often|always|also|just")
_POSSESSIVE = re.compile(r"['\u2019]s$")
_SPEAKER = frozenset(["i", "we"])  # the speaker as a clause's subject
_FIRST_PERSON = frozenset(["i", "me", "my", "mine", "myself", "we", "us", "our", "ours"])


def _located(quote: str, evidence_text: str) -> str | None:
    """The sentence(s) the quote sits in: it says where the statement is, not all it says.
    None when the quote is not in the evidence (an archive may claim one that is not)."""
    span = rules.quote_span(quote, evidence_text)
    if span is None:
        return None
    text, start, end = span
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    first = max((i + 1 for i in ends if i < start), default=0)
    last = min((i for i in ends if i >= end), default=len(text))
    cased = " ".join(evidence_text.split())  # the same text before casefolding, for its names
    return (cased if len(cased) == len(text) else text)[first:last]


def _of_time(word: str) -> bool:
    return word in lexicon.POLAR or base(word) in lexicon.POLAR


def _proper_names(support_text: str) -> set[str]:
    """Words the support writes with a capital away from a sentence's start: its names."""
    found: set[str] = set()
    for sentence in _SENTENCE_END.split(support_text):
        words = WORD.findall(sentence)
        for position, word in enumerate(words):
            folded = word.casefold()
            if not word[:1].isupper() or not is_content(folded) or _of_time(folded):
                continue
            if position > 0 or _uncommon(folded):  # "Sunil manages ...", not "Invoices go ..."
                found.add(folded)
    return found


def _uncommon(word: str) -> bool:
    """No English word the thesaurus lists (so, at the start of a sentence, a name); without a
    thesaurus nothing is known to be uncommon."""
    return bool(_THESAURUS) and not any(
        _THESAURUS[0].entry(form) for form in {word, base(word), base(word) + "e"}
    )


def _leading_names(value: str, support_text: str, support: Text, proper: set[str]) -> set[str]:
    """The speaker of an "I" statement, named by an extractor writing about the conversation
    ("Caroline attended ...", "Luis Ortega runs ... at Ortega Chevrolet"): up to three
    capitalised words at the start of the value, then a possessive, "and" or a finite verb. Not
    a sentence-case word the support has in lower case ("Removing a shift", "Sister Hanna"), not
    only names the message gives someone ("Ama" in "I'm head roaster, Ama runs the cafe"), and
    only when the value keeps every name of the clause it draws on ("Salesforce is our CRM"
    from "I use HubSpot as our CRM" names no speaker)."""
    tokens = value.split()
    names: list[str] = []
    possessive = False
    for token in tokens[:3]:
        word = WORD.findall(token)
        folded = word[0].casefold() if word else ""
        if not word or not word[0][:1].isupper() or (support.has(folded) and folded not in proper):
            break
        names.append(folded)
        if _POSSESSIVE.search(token):
            possessive = True
            break
    rest = [t.casefold() for t in tokens[len(names) :] if not _ADVERB.fullmatch(t.casefold())]
    following = rest[0] if names and rest else ""
    finite = following in lexicon.FINITE_VERBS or following.endswith(("s", "ed"))
    if not names or not (possessive or finite or following == "and"):
        return set()
    kept = set(Text.of(value, said=True).words)
    drawn_on = _drawn_on([w for w in kept if is_content(w) and w not in names], support_text)
    if all(name in proper for name in names) or not (proper & drawn_on) <= kept:
        return set()
    return set(names)


def _drawn_on(words: list[str], text: str) -> set[str]:
    """The words of the clause(s) of `text` that say most of `words`."""
    clauses = _clauses(text)
    scored = [(sum(c.text.strength(w) for w in words), c) for c in clauses]
    best = max((score for score, _ in scored), default=0)
    return set().union(*(c.text.words for score, c in scored if score == best and best))


def _capitalised(value: str, proper: set[str]) -> set[str]:
    """The value's capitalised words: past its first word, or any the message names too."""
    words = WORD.findall(value)
    found = {word.casefold() for word in words[1:] if word[:1].isupper()}
    if words and words[0][:1].isupper() and words[0].casefold() in proper:
        found.add(words[0].casefold())
    return found


def _quoted(word: str, value: str) -> str:
    """A word of the value for a reason; never the whole value (a reason does not repeat it)."""
    return "the value" if rules.normalize_for_match(value) == word else f"{word!r}"


_DISLIKING = frozenset(base(word) for word in lexicon.DISLIKING)
_LIKING = frozenset(base(word) for word in lexicon.LIKING)


def _negative_prefixes(value: str, support: Text) -> str:
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

    return WORD.sub(spelled_out, value)


def _says_dislike(support: Text) -> bool:
    """A word of disliking, or a negated word of liking ("don't like", not "don't mind")."""
    return bool(support.bases & _DISLIKING) or (support.negated() and bool(support.bases & _LIKING))


@dataclass(frozen=True)
class _Clause:
    text: Text
    negated: bool
    asked: bool  # a question nobody answered yes to: it says nothing


def _clauses(text: str, *, said: bool = False) -> list[_Clause]:
    """The text's clauses, each with its negation: a clause that only negates ("but can't",
    "Nope.", "please don't") negates the clause before it."""
    clauses: list[_Clause] = []
    start = 0
    text = EMAIL.sub(lambda match: " " * len(match.group()), text)  # "a@b.no" ends no clause
    for match in [*_CLAUSE_BREAK.finditer(text), None]:
        end = len(text) if match is None else match.start()
        part = Text.of(text[start:end], said=said)
        asked = match is not None and match.group() == "?"
        last = match is None or match.group() in ".!?;\n"  # the end of a sentence
        start = end if match is None else match.end()
        if not part.words:
            continue
        if clauses and not any(is_content(w) for w in part.words):
            elliptic = all(w in lexicon.NEGATORS or w in lexicon.ELLIPSIS for w in part.words)
            if part.negated() and last and elliptic:  # "but can't", "Nope.", "never have"
                clauses[-1] = _Clause(clauses[-1].text, True, False)
            elif _AFFIRMED & set(part.words) and clauses[-1].asked:
                clauses[-1] = _Clause(clauses[-1].text, clauses[-1].negated, False)
            continue
        clauses.append(_Clause(part, part.negated(), asked))
    return clauses


def _index(clauses: list[_Clause]) -> dict[str, set[int]]:
    """Clauses by the first letters of their bases (or their figures)."""
    index: dict[str, set[int]] = {}
    for number, clause in enumerate(clauses):
        for stem in clause.text.bases:
            index.setdefault(stem if is_figure(stem) else stem[:MIN_PREFIX], set()).add(number)
    return index


_MOST_CLAUSES = 8  # scored in full per clause of the value; a long message has hundreds


def _candidates(words: list[str], index: dict[str, set[int]], clauses: list[_Clause]) -> set[int]:
    """The support's clauses that may say some of `words`: those sharing a first four letters
    with them or a synonym, the `_MOST_CLAUSES` sharing most bases when there are more."""
    found: set[int] = set()
    for word in words:
        stem = base(word)
        for key in {stem, *synonyms(stem)}:
            found |= index.get(key if is_figure(key) else key[:MIN_PREFIX], set())
    if len(found) <= _MOST_CLAUSES:
        return found
    stems = {base(word) for word in words}
    ranked = sorted(found, key=lambda i: (-len(stems & clauses[i].text.bases), i))
    return set(ranked[:_MOST_CLAUSES])


def _clause_mismatch(value_text: str, support_text: str, names: set[str], proper: set[str]) -> str:
    """Whether a clause of the value ("carry tablets", "not laptops") differs from the
    support's clause(s) saying most of what it says: in negation, by being only asked, or by
    saying it of another name ("The decision maker is Hassan, not Karim")."""
    clauses = _clauses(support_text)
    index = _index(clauses)
    negated_anywhere = any(clause.negated for clause in clauses)
    for part in _clauses(value_text, said=True):
        words = [w for w in part.text.words if is_content(w) and w not in lexicon.FRAMING_WORDS]
        candidates = _candidates(words, index, clauses)
        scored = [(_score(clauses[i].text, words, proper), i) for i in candidates]
        best = max((score for score, _ in scored), default=0)
        if best == 0:
            if words and part.negated != negated_anywhere:
                return "the value and its evidence disagree on a negation"
            continue
        chosen = [clauses[i] for score, i in scored if score == best]
        if any(clause.negated != part.negated for clause in chosen):
            return "the value and its evidence disagree on a negation"
        if all(clause.asked for clause in chosen):
            return "its evidence asks this, it does not say it"
        subject = part.text.words[:1]  # "Karim is ...", "Rekha manages ...": whom it is said of
        for name in sorted(names & set(subject)):
            if _said_of_another(name, words, clauses, index, names, proper):
                return f"its evidence says this of someone other than {name!r}"
    return ""


def _said_of_another(
    name: str,
    words: list[str],
    clauses: list[_Clause],
    index: dict[str, set[int]],
    names: set[str],
    proper: set[str],
) -> bool:
    """Whether what the value says of `name` is, in the evidence, said of another name or of
    "I", while `name` has a clause of its own ("I'm head roaster, Ama runs the cafe")."""
    rest = [word for word in words if word != name]
    scored = [(_score(clauses[i].text, rest, proper), i) for i in _candidates(rest, index, clauses)]
    best = max((score for score, _ in scored), default=0)
    chosen = [clauses[i] for score, i in scored if score == best and best]
    if not chosen or any(name in c.text.words for c in chosen):
        return False
    others = any(_others(c.text, names, proper) for c in chosen)
    return others and _says_more(clauses, {name})


def _says_more(clauses: list[_Clause], names: set[str]) -> bool:
    """Whether a clause naming one of `names` says something of its own ("Ama runs the cafe"),
    rather than only naming it beside another ("..., Alina, ...")."""
    return any(
        names & set(c.text.words) and any(is_content(w) and w not in names for w in c.text.words)
        for c in clauses
    )


def _score(clause: Text, words: list[str], proper: set[str]) -> int:
    """How much of `words` the clause says: a name or a figure counts more than other words."""
    return sum(
        clause.strength(w) + (2 if (w in proper or is_figure(w)) and w in clause.words else 0)
        for w in words
    )


def _others(clause: Text, names: set[str], proper: set[str]) -> bool:
    """Whether the clause speaks of a name other than `names`, or of "I" or "we"."""
    return bool(set(clause.words) & _SPEAKER) or bool((set(clause.words) & proper) - names)


def _grounding(value: str, quote: str, evidence_text: str) -> str:
    """Why the value is not supported by its evidence; '' when it is (see the module)."""
    support_text = _located(quote, evidence_text) if quote else evidence_text
    if support_text is None:
        return f"{UNGROUNDED}: the quote does not occur in its evidence"
    support = Text.of(support_text)
    said = Text.of(_negative_prefixes(value, support), said=True)
    words = [word for word in said.words if is_content(word)]
    proper = _proper_names(evidence_text)
    first_person = _FIRST_PERSON & set(support.words)
    speaker = _leading_names(value, support_text, support, proper) if first_person else set()
    names = {
        n
        for n in _capitalised(value, proper)
        if is_content(n) and not is_figure(n) and not _of_time(n) and n not in lexicon.NUMBER_VALUES
    } - speaker
    problem = (
        _exact_parts(value, support_text, support, words)
        or _opposite_meaning(value, support, said, words)
        or _clause_mismatch(_negative_prefixes(value, support), support_text, names, proper)
        or _unsupported(value, evidence_text, support_text, support, words, names, speaker)
    )
    return f"{UNGROUNDED}: {problem}" if problem else ""


def _codes(text: str) -> set[str]:
    """Codes that join letters and digits ("BX-440-R", "4410-A", "INV/20417"), casefolded;
    a figure and its unit ("30-day") is a measure, not a code."""
    found = set()
    for joined in JOINED.findall(plain(text)):
        mixed = any(c.isdigit() for c in joined) and any(c.isalpha() for c in joined)
        if mixed and not MEASURE.fullmatch(joined):
            found.add(joined.casefold().replace("/", "-"))
    return found


def _single_letters(text: str) -> list[str]:
    """Capital letters standing alone ("Plan B", "gate C", "John F. Kennedy"): a letter changed
    is another plan, gate or person. "I" and the article "A" are not among them."""
    return [letter.casefold() for letter in SINGLE_LETTER.findall(plain(text))]


def _exact_parts(value: str, support_text: str, support: Text, words: list[str]) -> str:
    """E-mail addresses, codes, figures and words of time and order: as the evidence has them."""
    addresses = {email.casefold() for email in EMAIL.findall(support_text)}
    for email in EMAIL.findall(plain(value)):
        if email.casefold() not in addresses:
            return f"the e-mail address {email!r} does not occur in its evidence"
    codes = _codes(support_text)
    for code in sorted(_codes(value) - codes):
        return f"the identifier {code!r} does not occur in its evidence"
    letters = set(_single_letters(support_text)) | {w for w in support.words if len(w) == 1}
    for letter in _single_letters(value):
        if letter not in letters:
            return f"the letter {letter.upper()!r} does not occur in its evidence"
    for word in words:
        if is_figure(word) and not support.has(word):
            return f"the figure or identifier {_quoted(word, value)} does not occur in its evidence"
    for word in words:
        if word in lexicon.POLAR and not support.has(word, loosely=False):
            return f"{_quoted(word, value)} does not occur in its evidence"
    return ""


def _opposite_meaning(value: str, support: Text, said: Text, words: list[str]) -> str:
    """An opposite of a word of the evidence, or a dislike it does not say."""
    for word in words:
        if base(word) in support.bases:  # the word itself; a synonym or a longer form
            continue  # ("employee" for "employer") may be its opposite
        contrary = opposites(base(word))
        opposite = {other for other in support.bases if any(close(other, o) for o in contrary)}
        if opposite:
            return (
                f"{_quoted(word, value)} is the opposite of {sorted(opposite)[0]!r} in its evidence"
            )
    for word in said.words:
        if base(word) in _DISLIKING and not _says_dislike(support):
            return f"the word {_quoted(word, value)} does not occur in its evidence"
    return ""


def _unsupported(
    value: str,
    evidence_text: str,
    support_text: str,
    support: Text,
    words: list[str],
    names: set[str],
    speaker: set[str],
) -> str:
    """A name the message does not have, or a word its supporting sentence does not say (the
    speaker's name aside)."""
    if not words:  # function words or symbols only: they must be there as they are
        return (
            ""
            if rules.quote_occurs(value, support_text)
            else "the value does not occur in its evidence"
        )
    message = set(Text.of(evidence_text).words)
    for word in sorted(names):
        if word not in message and word not in lexicon.POLAR:  # as it is: "Tomas" is not "Tomasz"
            return f"the name {_quoted(word, value)} does not occur in its evidence"
    taken = _said_itself(support, {base(word) for word in words})
    for index, word in enumerate(words):
        free = word in names or word in speaker or word in lexicon.FRAMING_WORDS
        free = free or _free_verb(index, words, support, support_text)
        if not free and not support.has(word) and not _thesaurus_supports(word, support, taken):
            return f"the word {_quoted(word, value)} does not occur in its evidence"
    return ""


_NOMINAL = re.compile(r"\w{3,}(?:ation|tion|sion|ment|al|ance|ence|ure)s?")
_LISTED = re.compile(r":\s|(?:^|\s)(?:\d{1,2}[.)]|[-*\u2022])\s")


def _free_verb(index: int, words: list[str], support: Text, support_text: str) -> bool:
    """A listing verb when the evidence lists; a light verb before a noun its evidence says as
    a verb (`phrases.LIGHT_VERBS`)."""
    word = words[index]
    if word in phrases.LISTING_VERBS:
        return bool(_LISTED.search(support_text)) or _made_of(words[index + 1 :], support_text)
    if word in phrases.LIGHT_VERBS:
        return any(_carried(noun, support) for noun in words[index + 1 : index + 3])
    return False


def _made_of(rest: list[str], support_text: str) -> bool:
    """Whether the evidence says "is [mostly] <the word after the verb>" ("Our donor base is
    mostly retired teachers" for "consists largely of retired teachers")."""
    following = [word for word in rest if not _ADVERB.fullmatch(word)][:1]
    if not following:
        return False
    return bool(
        re.search(
            rf"\b(?:is|are|was|were|'s|'re)\s+(?:\w+ly\s+|all\s+)?{re.escape(following[0][:4])}",
            plain(support_text).casefold(),
        )
    )


def _carried(noun: str, support: Text) -> bool:
    """Whether `noun` is made from a verb the support says as a verb ("approval"/"approved")."""
    if not _NOMINAL.fullmatch(noun):
        return False
    stem = base(noun)
    return any(
        not _NOMINAL.fullmatch(surface) and close(base(surface), stem)
        for surface in support.words
        if surface[:3] == noun[:3]
    )


def _said_itself(support: Text, own: set[str]) -> dict[str, set[str]]:
    """The support's words the value says itself, each with the value's bases it is: such a
    word supports no other word of the value through the thesaurus."""
    by_start: dict[str, list[str]] = {}
    for stem in own:
        by_start.setdefault(stem[:MIN_PREFIX], []).append(stem)
    taken: dict[str, set[str]] = {}
    for surface in set(support.words):
        stem = base(surface)
        near = {o for o in by_start.get(stem[:MIN_PREFIX], ()) if close(stem, o)}
        if near:
            taken[surface] = near
    return taken


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


def _thesaurus_supports(word: str, support: Text, taken: dict[str, set[str]]) -> bool:
    """Whether a content word of the support and `word` each list the other (both ways: a
    one-way entry is often only an association). A support word another word of the value says
    (`taken`) supports nothing more: "baby girl" adds the girl to "a baby"."""
    stem = _key(word)
    listed = _entry_bases(word)
    if not listed:
        return False
    own = {base(word)}
    return any(
        _key(surface) in listed
        and stem in _entry_bases(surface)
        and not (taken.get(surface, own) - own)
        for surface in support.words
        if is_content(surface) and not is_figure(surface)
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
