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
# Digit groups joined by up to three spaces or line breaks, or by one of - . / _ , : + with
# spaces around it ("4111 - 1111", "4111_1111"); bounded so a long run of spaces stays linear.
_NUMBER = re.compile(r"(?<!\d)\d+(?:(?:[ \t]{0,3}[-./_,:+][ \t]{0,3}|\s{1,3})\d+)*")
_DIGIT_GROUP = re.compile(r"\d+")
_IBAN = re.compile(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b", re.ASCII)
_CARD_WORDS = re.compile(
    r"(?<![a-z0-9])(?:card|visa|master\s*card|amex|american\s+express|discover|jcb|diners"
    r"|maestro|union\s*pay|cc|ccn|pan|cvv2?|cvc2?|csc|exp|expiry|expires|expiration|valid\s+thru)"
    r"(?![a-z])",
    re.IGNORECASE,
)
# What a CRM identifier is called, then what may stand between the label and its digits.
_ID_LABEL = re.compile(
    r"\b(?:re|orders?|invoices?|inv|accounts?|acct|a/c|po|purchase\s+order|ref|reference|tickets?"
    r"|case|tracking|shipment|parcel|package|customer|cust|client|contract|quote|sku|serial|s/n"
    r"|imei|iccid|member|membership|policy|booking|confirmation|reservation|transaction|txn"
    r"|receipt|id|vat|tax|ein|gtin|ean|upc|barcode|isbn|batch|lot|rma|claim|loan|contact|lead|opportunity"
    r"|deal|record|subscription|licen[cs]e)"
    r"(?:\s+(?:id|number|no|num|nr|code|ref))?[\s#:=.\-]*(?:[a-z]{1,4}[-\s]?)?$",
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
    """How cards are written in groups: fours (4-4-4-4, 4-4-4-4-3, 4-4-4-1) or 4-6-4/5.
    Lists of order numbers or amounts ("123456 789012 345678") are not checked as cards."""
    if not 13 <= sum(lengths) <= 19:
        return False
    fours = all(length == 4 for length in lengths[:-1]) and lengths[-1] <= 4
    return fours or lengths in ([4, 6, 4], [4, 6, 5])


def _in_run(run: str, *, anywhere: bool) -> bool:
    """A card in an unbroken run of digits: the whole run, a card with its expiry and CVV
    pasted on ("4111…1111" + "1227" + "123"), or, `anywhere`, any window of it."""
    if anywhere:
        return any(
            _card(run[start : start + length])
            for start in range(len(run) - 12)
            for length in range(13, min(19, len(run) - start) + 1)
        )
    if 13 <= len(run) <= 19 and _card(run):
        return True
    for tail in _PASTED_TAILS:
        card, rest = run[: len(run) - tail], run[len(run) - tail :]
        if 13 <= len(card) <= 19 and 1 <= int(rest[:2]) <= 12 and _card(card):
            return True
    return False


def has_card_number(text: str) -> bool:
    """Whether the text holds a payment card number (see the module for where we look)."""
    text = _IBAN.sub(lambda m: " " if _iban_ok(m.group()) else m.group(), text)
    speaks_of_cards = _CARD_WORDS.search(text) is not None
    for match in _NUMBER.finditer(text):
        groups = _DIGIT_GROUP.findall(match.group())
        labelled = not speaks_of_cards and _ID_LABEL.search(
            text[max(0, match.start() - 40) : match.start()]
        )
        for first, group in enumerate(groups):
            if len(group) > _LONG_RUN:
                return True
            unlabelled = not (labelled and first == 0)
            if len(group) >= 13 and unlabelled and _in_run(group, anywhere=speaks_of_cards):
                return True
            if len(group) != 4:
                continue  # every grouped layout starts with four digits
            for last in range(first + 1, min(first + 5, len(groups))):
                lengths = [len(g) for g in groups[first : last + 1]]
                if _card_layout(lengths) and _card("".join(groups[first : last + 1])):
                    return True
    return False
