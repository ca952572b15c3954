"""Payment card numbers, as the secret rule (`secrets.py`) finds them in text.

A number is taken for a card when it is issued as cards are (an issuer's prefix with a length
that issuer uses) and passes the Luhn check. Where it stands decides how hard we look:

- digits grouped as cards are printed (4-4-4-4, 4-6-5, …), however the groups are joined, are
  always checked: that layout is how people copy a card;
- an unbroken run is checked whole, or as a card with its expiry or CVV pasted on, and at
  every position when the text speaks of cards ("card", "visa", "cvv");
- an unbroken run labelled as a CRM identifier ("order 4539…", "invoice #…", "tracking no.")
  in a text that says nothing of cards is an identifier: one random 16-digit id in about twenty
  passes the issuer and Luhn checks, and refusing those would refuse ordinary CRM notes.

Runs longer than `_LONG_RUN` digits are refused whole: some window of them passes with near
certainty, and no CRM identifier is that long.
"""

from __future__ import annotations

import re

_LONG_RUN = 64
_PASTED_TAILS = (4, 7, 8)  # what may follow a card unbroken: MMYY, or MMYY and its CVV
# Digit groups joined by up to six spaces or line breaks, or by up to three separators with
# spaces or a line break around them ("4111 - 1111", "4111_1111", "4111-\n1111", "4111 | 1111");
# bounded so that a long run of spaces stays linear. Every dash is a hyphen by then.
_SEPARATORS = r"[-./_,:+*|~#;'\\\u2022\u00b7]"
_NUMBER = re.compile(
    rf"(?<!\d)\d+(?:(?:[ \t]{{0,3}}{_SEPARATORS}{{1,3}}[ \t\r\n]{{0,3}}|\s{{1,6}})\d+)*"
)
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"})
_DIGIT_GROUP = re.compile(r"\d+")
_SINGLE_DIGITS = re.compile(r"s+")
_IBAN = re.compile(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b", re.ASCII)
# Words that say a text is about a card: then a number is checked wherever it stands.
_CARD_WORDS = re.compile(
    r"(?<![a-z0-9])(?:"
    r"(?<!business )(?<!post)(?<!score)(?<!report )(?<!sim )(?<!key)(?<!gift )card\w*|\w+card"
    r"|visa|master\s*card|amex|american\s+express|discover|jcb|diners|maestro|union\s*pay"
    r"|credit(?!\s*(?:note|memo|limit|line|score|terms|check|union|rating|application))"
    r"|debit(?!\s*(?:note|memo))|ccn|ccnum|cc(?=\s*(?:#|no\b|num|number|\d))"
    r"|c\.?v\.?[vcn]2?\.?|cvc2?|csc|sec(?:urity)?\s+code"
    r"|exp(?:iry|iration|ires|iring)?(?=\s*[:.]?\s*\d)|expir\w*|valid\s+(?:thru|through|until)"
    r"|good\s+thru|mm\s*/\s*yy|karte|tarjeta|carte)(?![a-z])"
    r"|(?<![A-Za-z])(?:PAN|MC)(?![A-Za-z])",
    re.IGNORECASE,
)
_EXPIRY = re.compile(r"(?<![\d/])(?:0[1-9]|1[0-2])\s?/\s?(?:\d{2}|20\d{2})(?![\d/])")
# What a CRM identifier is called, then what may stand between the label and its digits.
_ID_LABEL = re.compile(
    r"\b(?:re|orders?|invoices?|inv|so|po|purchase\s+order|ref|reference|tickets?|accounts?|acct"
    r"|bestellung|auftrag|rechnung|facture|commande|pedido|factura"
    r"|case|tracking|shipment|parcel|package|customer|cust|client|contract|quote|sku|serial|s/n"
    r"|imei|iccid|member|membership|policy|booking|confirmation|reservation|transaction|txn"
    r"|receipt|vat|tax|ein|gtin|ean|upc|barcode|isbn|batch|lot|rma|claim|loan|contact|lead|opportunity"
    r"|deal|record|subscription|licen[cs]e)"
    r"(?:\s+(?:id|number|no|num|nr|code|ref))?[\s#:=.\-(\[\"']*(?:[a-z0-9]{1,4}[-\s]?)?$",
    re.IGNORECASE,
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)  # any script's decimal digit
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _issued(digits: str) -> bool:
    """Whether an issuer hands out cards with this prefix and this many digits."""
    length, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":  # Visa
        return length in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:  # Mastercard
        return length == 16
    if two in (34, 37):  # American Express
        return length == 15
    if 2200 <= four <= 2204 or 3528 <= four <= 3589 or two in (38, 39):  # Mir, JCB, Diners
        return 16 <= length <= 19
    if two == 36 or 300 <= three <= 305:  # Diners Club
        return 14 <= length <= 19
    if four in (5018, 5019, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763):  # Maestro
        return 12 <= length <= 19
    six = int(digits[:6])
    if 506099 <= six <= 506198 or three == 508 or two in (60, 62, 65, 81, 82):  # RuPay, UnionPay
        return 16 <= length <= 19
    if four == 6011 or 636 <= three <= 639 or 644 <= three <= 649:  # Discover, InstaPayment
        return 16 <= length <= 19
    return four == 9792 and length == 16  # Troy


def _card(window: str) -> bool:
    plain = "".join(str(int(char)) for char in window)  # any script's digits, as ASCII
    return _issued(plain) and _luhn_ok(plain)


def _iban_ok(candidate: str) -> bool:
    """ISO 13616 mod-97 check: an account number for wiring money is not a card number."""
    compact = candidate.replace(" ", "")
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _card_layout(lengths: list[int]) -> bool:
    """How cards are written in groups: fours (4-4-4-4, 4-4-4-4-3, 4-4-4-1), 4-6-4/5, 8-8, or a
    digit at a time.
    Lists of order numbers or amounts ("123456 789012 345678") are not checked as cards."""
    if not 13 <= sum(lengths) <= 19:
        return False
    fours = all(length == 4 for length in lengths[:-1]) and lengths[-1] <= 4
    singles = all(length == 1 for length in lengths)  # "4 1 1 1 …", "4-1-1-1-…"
    return fours or singles or lengths in ([4, 6, 4], [4, 6, 5], [8, 8])


def _in_run(run: str, *, anywhere: bool, whole: bool = True) -> bool:
    """A card in an unbroken run of digits: the whole run, a card with its expiry and CVV
    pasted on ("4111…1111" + "1227" + "123"), or, `anywhere`, any window of it."""
    if anywhere:
        return any(
            _card(run[start : start + length])
            for start in range(len(run) - 12)
            for length in range(13, min(19, len(run) - start) + 1)
        )
    if whole and 13 <= len(run) <= 19 and _card(run):
        return True
    for tail in _PASTED_TAILS if whole else _PASTED_TAILS[1:]:  # a labelled id: MMYY and CVV
        card, rest = run[: len(run) - tail], run[len(run) - tail :]
        lengths = range(13, 20) if whole else (15, 16)  # after a label, the common lengths only
        if len(card) in lengths and 1 <= int(rest[:2]) <= 12 and _card(card):
            return True
    return False


def _pasted_expiry(groups: list[str]) -> bool:
    """A run followed by MMYY and a CVV ("4111…1111 1227 123"): a card, whatever its label."""
    return len(groups) >= 2 and len(groups[1]) == 4 and 1 <= int(groups[1][:2]) <= 12


_LIST_GLUE = re.compile(r"\s*(?:,|and|&|/|or|\+)?\s*", re.IGNORECASE)


def has_card_number(text: str) -> bool:
    """Whether the text holds a payment card number (see the module for where we look)."""
    text = _IBAN.sub(lambda m: " " if _iban_ok(m.group()) else m.group(), text.translate(_DASHES))
    speaks_of_cards = _CARD_WORDS.search(text) is not None or _EXPIRY.search(text) is not None
    list_end = -1  # where the last labelled number ended: a list goes on under its label
    for match in _NUMBER.finditer(text):
        groups = _DIGIT_GROUP.findall(match.group())
        in_list = list_end >= 0 and _LIST_GLUE.fullmatch(text[list_end : match.start()]) is not None
        labelled = not speaks_of_cards and (
            in_list
            or _ID_LABEL.search(text[max(0, match.start() - 40) : match.start()]) is not None
        )
        list_end = match.end() if labelled else -1
        if _digits_hold_a_card(groups, labelled=labelled, anywhere=speaks_of_cards):
            return True
    return False


def _digits_hold_a_card(groups: list[str], *, labelled: bool, anywhere: bool) -> bool:
    """Whether one run of digit groups holds a card: a group on its own, or groups joined in a
    layout cards are printed in."""
    singles = max(
        (
            len(run)
            for run in _SINGLE_DIGITS.findall("".join("s" if len(g) == 1 else "." for g in groups))
        ),
        default=0,
    )
    if singles > _LONG_RUN:
        return True  # as a long run: some window of it passes, and no identifier is spelled so
    for first, group in enumerate(groups):
        if len(group) > _LONG_RUN:
            return True
        # a labelled id, or a list of them, is no card unless an expiry follows it; a run with
        # an expiry and a CVV pasted on is checked for them even so
        exempt = labelled and not _pasted_expiry(groups)
        if len(group) >= 13 and _in_run(group, anywhere=anywhere, whole=not exempt):
            return True
        if len(group) not in (1, 4, 8):
            continue  # every layout starts with a digit, four or eight
        lengths = [len(group)]
        for last in range(first + 1, len(groups)):
            lengths.append(len(groups[last]))
            if sum(lengths) > 19:
                break
            if _card_layout(lengths) and _card("".join(groups[first : last + 1])):
                return True
    return False
