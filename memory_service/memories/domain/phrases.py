"""The phrases the grounding rule (`grounding.py`) reads for what they mean: light verbs, listing
verbs, phrasal verbs and set phrases, as data beside the single words of `lexicon.py`. Each entry
was checked against the grounding bench (`bench/grounding/`) both ways: what it lets through
and what it must still refuse (`tests/integration/test_grounding_attacks.py`)."""

from __future__ import annotations


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Verbs that only carry a noun made from another verb ("gave approval" for "approved",
# "handles consolidation" for "will consolidate", "made a complaint" for "complained"): free
# only before such a noun whose verb the evidence says (`grounding._carried`), never on their
# own ("got a refund" is not "asked for a refund", "gave approval" not "withheld approval").
LIGHT_VERBS = _set(
    """
    get gets got gotten getting give gives gave given giving make makes made making take takes
    took taken taking handle handles handled handling perform performs performed conduct
    conducts conducted
    """
)
# Verbs that frame a list or a make-up ("tasks include ...", "the base consists of ..."): free
# only when the evidence lists (a colon, numbered or bulleted items) or says "is [mostly] ..."
# right before the word that follows the verb; never "the price includes tax" from "the price
# is $500 plus tax".
LISTING_VERBS = _set(
    "include includes included including comprise comprises comprised consist consists consisted"
)


def _forms(verb: str) -> str:
    """A regular verb's forms as an alternation: "sign" -> "sign|signs|signing|signed"."""
    stem = verb[:-1] if verb.endswith("e") else verb
    third = verb + "es" if verb.endswith(("sh", "ch", "s", "x")) else verb + "s"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return f"{verb}|{verb[:-1]}ies|{verb}ing|{verb[:-1]}ied"
    return f"{verb}|{third}|{stem}ing|{stem}ed"


_IRREGULAR_FORMS = {
    "go": "go|goes|going|went|gone",
    "break": "break|breaks|breaking|broke|broken",
    "come": "come|comes|coming|came",
    "find": "find|finds|finding|found",
    "give": "give|gives|giving|gave|given",
    "take": "take|takes|taking|took|taken",
    "hold": "hold|holds|holding|held",
    "lay": "lay|lays|laying|laid",
    "bring": "bring|brings|bringing|brought",
    "fall": "fall|falls|falling|fell|fallen",
    "shoot": "shoot|shoots|shooting|shot",
    "put": "put|puts|putting",
    "cut": "cut|cuts|cutting",
    "set": "set|sets|setting",
    "keep": "keep|keeps|keeping|kept",
    "deal": "deal|deals|dealing|dealt",
    "wake": "wake|wakes|waking|woke|woken",
    "step": "step|steps|stepping|stepped",
    "drop": "drop|drops|dropping|dropped",
    "wrap": "wrap|wraps|wrapping|wrapped",
    "kick": "kick|kicks|kicking|kicked",
}

# Phrasal verbs and the one verb that says the same ("went up" -> "increase", "called off" ->
# "cancel"): particle right after the verb. Evidence says that verb too, so "cancelled"
# is supported by "called off"; a value's phrasal verb keeps its particle ("pushed back" is not
# "pushed up"). Meanings are never negations ("turned down" is "reject", not "decline"), so
# "didn't turn down" stays negated. A value's "went up", "went down" and "cut back" read as
# their meaning (`DIRECTED`): the direction is in it.
PHRASAL_VERBS: tuple[tuple[str, str, str], ...] = tuple(
    (_IRREGULAR_FORMS.get(verb) or _forms(verb), particle, meaning)
    for verb, particle, meaning in (
        line.strip().split(":")
        for line in """
    go:up:increase
    go:down:decrease
    shoot:up:increase
    break:down:outoforder
    turn:down:reject
    call:off:cancel
    put:off:postpone
    push:back:postpone
    find:out:learn
    sign:up:register
    look:into:investigate
    look:for:seek
    carry:on:continue
    keep:on:continue
    give:up:abandon
    show:up:arrive
    turn:up:arrive
    reach:out:contact
    fill:in|out:complete
    figure:out:solve
    hand:over:deliver
    take:over:assume
    back:out:withdraw
    pull:out:withdraw
    hold:off:delay
    lay:off:dismiss
    bring:up:mention
    point:out:mention
    head:up:lead
    step:down:resign
    sign:off:approve
    roll:out:launch
    kick:off:start
    wrap:up:finish
    fall:through:fail
    cut:back|down:reduce
    set:up:arrange
    deal:with:handle
    put:together:prepare
        """.strip().splitlines()
    )
)

DIRECTED = _set("increase decrease reduce")

# Set phrases and how a value reads them / what they also say in its evidence. A state said
# several ways is one word of its own, never a negation: "is broken", "broke down", "out of
# order", "stopped working" and "not working" are all "outoforder", so "the printer is not
# broken" still disagrees with "the printer is broken". "too little" and "not enough" are
# "insufficient"; a value's "has gone to" is "has been to" (not "is gone"); "stopped using" is
# "no longer using"; "gets up" is "up"; "goes running" is "running".
IDIOMS: tuple[tuple[str, str, str], ...] = (
    (
        r"\b(?:is|are|was|were|been|being|'s|got|get|gets)\s+broken(?:\s+down)?\b"
        r"|\b(?:is|are|was|were|'s)\s+not\s+(?:working|functioning)\b"
        r"|\b(?:does|do|did)\s+not\s+work\b(?!\s+(?:with|for|on|at|in|as|from|together)\b)"
        r"|\bstop(?:s|ped|ping)?\s+(?:working|functioning)\b|\bout\s+of\s+order\b",
        "outoforder",
        "outoforder",
    ),
    (r"\btoo\s+(?:little|few)\b|\bnot\s+enough\b", "insufficient", "insufficient"),
    (r"\bnot\s+(\w+)\s+enough\b", r"\1 insufficient", r"\1 insufficient"),
    (r"\b(?:crazy|nuts|wild)\s+about\b", "love", "love"),
    (r"\bstop(?:s|ped|ping)?\s+(?=\w+ing\b)", "no ", "no "),
    (r"\b(?:go|goes|going|went|gone)\s+(?=\w+ing\b)", "", ""),
    (r"\bget(?:s|ting)?\s+(?=up\b)", "", ""),
    (r"\bowing\s+to\b|\bbecause\s+of\b|\bas\s+a\s+result\s+of\b", "because", "because"),
    (r"\b(?:has|have|had)(\s+not)?\s+gone\s+to\b", r"has\1 been to", ""),
    (r"\bup\s+to\s+(?=spec|standard|scratch|par|code)", "meet ", "meet "),
)
