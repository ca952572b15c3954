"""Two generated corpora for the secret rule, from a fixed seed.

`crm_texts`: notes a sales team writes, each with identifiers of the kinds CRM text carries
(order, invoice, account and PO numbers of 6-19 digits, tracking numbers of carriers, IMEIs,
EAN barcodes, IBANs, phone numbers, amounts, dates, record ids, UUIDs). The digits are random:
the rule was not written against them, and about one 16-digit id in twenty passes an issuer's
prefix and the Luhn check, as a card would.

`card_texts`: card numbers as people paste them: valid issuer prefixes and lengths, a valid
Luhn digit, printed in groups or unbroken, alone or with an expiry, a CVV, a card word.
"""

from __future__ import annotations

import random
import string
import uuid

SEED = 20261206

_NAMES = ["Dana", "Chris", "Priya", "Mara", "Olga", "Tom", "Aiko", "Luis", "Fatima", "Jonas"]
_COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne"]
_LABELS = [
    "order",
    "Order #",
    "order no.",
    "invoice",
    "Invoice #",
    "INV",
    "account",
    "account number",
    "acct",
    "PO",
    "PO #",
    "purchase order",
    "ref",
    "reference",
    "ticket",
    "case",
    "tracking",
    "tracking number",
    "shipment",
    "customer",
    "customer id",
    "contract",
    "quote",
    "SKU",
    "serial",
    "IMEI",
    "booking",
    "confirmation",
    "transaction",
    "receipt",
    "RMA",
    "claim",
    "subscription",
    "licence",
]
_TEMPLATES = [
    "{name} from {company} called about {label} {id}; wants it shipped before {date}.",
    "Follow up with {name} on {label} {id}, amount {amount}.",
    "{company} disputes {label} {id}. Escalated to finance on {date}.",
    "Please check {label} {id} for {company}, {name} says it is late.",
    "{label} {id} was approved by {name} ({phone}).",
    "Renewal for {company}: {label} {id}, due {date}, {amount}.",
    "{name}: can you resend {label} {id}? Their AP team lost it.",
    "Credit note against {label} {id} issued, {amount}.",
    "Call {name} at {phone} about {label} {id}.",
    "{company} moved to net 30; old {label} {id} stays on net 60.",
    "Wire from {company} ({iban}) matched to {label} {id}.",
    "Delivered {date}, signed by {name}, {label} {id}.",
    "{label}: {id}",
    "{label} {id} / {label2} {id2}",
    "Merged duplicate records {record} and {record2} for {company}.",
    "{name}'s phone {imei_label} {imei} was replaced under {label} {id}.",
    "Barcode {ean} on the pallet for {label} {id}.",
    "Sync id {uuid} failed for {company}; retry {label} {id}.",
    "{company} opportunity {record} closed won, {amount}, {label} {id}.",
    "Parcel {tracking} for {name} left the warehouse on {date}.",
    "{company} says {id} was never delivered; {name} will check.",  # no label: bare ids too
    "re {id}: {name} approved the discount",
]


def _digits(rng: random.Random, length: int) -> str:
    return str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(length - 1))


def _id(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        return _digits(rng, rng.randint(13, 19))  # the lengths a card has
    if kind < 0.7:
        return _digits(rng, rng.randint(6, 12))
    if kind < 0.8:
        return f"{rng.choice(['SO', 'INV', 'PO', 'CS', 'A'])}-{_digits(rng, rng.randint(6, 16))}"
    if kind < 0.9:
        return f"{_digits(rng, 4)}-{_digits(rng, rng.randint(4, 10))}"
    return _digits(rng, rng.randint(20, 26))  # postal tracking numbers are longer


def _luhn_completed(body: str) -> str:
    total = 0
    for index, char in enumerate(reversed(body)):
        value = int(char)
        if index % 2 == 0:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return body + str((10 - total % 10) % 10)


def _imei(rng: random.Random) -> str:
    return _luhn_completed("35" + _digits(rng, 12))


def _ean(rng: random.Random) -> str:
    body = _digits(rng, 12)
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body))
    return body + str((10 - total % 10) % 10)


def _iban(rng: random.Random) -> str:
    bban = _digits(rng, 18)
    numeric = int(bban + "131400")  # DE00 moved to the end, letters as numbers
    check = 98 - numeric % 97
    raw = f"DE{check:02d}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _phone(rng: random.Random) -> str:
    return rng.choice(
        [
            f"+1 ({_digits(rng, 3)}) {_digits(rng, 3)}-{_digits(rng, 4)}",
            f"+49 30 {_digits(rng, 4)} {_digits(rng, 4)}",
            f"+44 20 {_digits(rng, 4)} {_digits(rng, 4)}",
            f"0{_digits(rng, 10)}",
        ]
    )


def _record(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits
    return "006" + "".join(rng.choice(alphabet) for _ in range(12))


def crm_texts(count: int = 10_000, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        template = rng.choice(_TEMPLATES)
        texts.append(
            template.format(
                name=rng.choice(_NAMES),
                company=rng.choice(_COMPANIES),
                label=rng.choice(_LABELS),
                label2=rng.choice(_LABELS),
                id=_id(rng),
                id2=_id(rng),
                date=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                amount=f"${rng.randint(100, 99_999):,}.{rng.randint(0, 99):02d}",
                phone=_phone(rng),
                iban=_iban(rng),
                imei_label=rng.choice(["IMEI", "imei", "device"]),
                imei=_imei(rng),
                ean=_ean(rng),
                uuid=uuid.UUID(int=rng.getrandbits(128), version=4),
                record=_record(rng),
                record2=_record(rng),
                tracking=_digits(rng, rng.choice([12, 15, 20, 22])),
            )
        )
    return texts


# (prefix, length) of cards as issued: Visa, Mastercard (both ranges), Amex, Discover, JCB,
# Diners, UnionPay, Maestro.
_ISSUERS = [
    ("4", 16),
    ("4", 13),
    ("4", 19),
    ("51", 16),
    ("55", 16),
    ("2221", 16),
    ("2720", 16),
    ("34", 15),
    ("37", 15),
    ("6011", 16),
    ("65", 16),
    ("3530", 16),
    ("36", 14),
    ("62", 16),
    ("62", 19),
    ("6759", 16),
]


def _card(rng: random.Random) -> tuple[str, int]:
    prefix, length = rng.choice(_ISSUERS)
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    return _luhn_completed(body), length


def _layout(rng: random.Random, number: str) -> str:
    if len(number) in (14, 15):  # Amex and Diners print 4-6-5 and 4-6-4
        groups = [number[:4], number[4:10], number[10:]]
    else:
        groups = [number[i : i + 4] for i in range(0, len(number), 4)]
    joiner = rng.choice([" ", "-", "", "", " ", ".", "  "])
    return joiner.join(groups)


_CARD_TEMPLATES = [
    "{card}",
    "card {card}",
    "card number: {card}",
    "Visa {card} exp {exp}",
    "charge it to {card} {exp} {cvv}",
    "cc {card}",
    "{name} gave her card, {card}, expiry {exp}, CVV {cvv}",
    "use {card} for the deposit",
    "pay with {card} {mmyy}",
    "credit card {card} valid thru {exp}",
    "note for the account team: {card} (from the call)",
    "{company} corporate card is {card}",
    "debit {card}",
]
_GLUED = "{card}{mmyy}{cvv}"  # an unbroken card with its expiry and CVV pasted on


def card_texts(count: int = 2_000, seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 1)
    texts = []
    for _ in range(count):
        number, _length = _card(rng)
        month, year = rng.randint(1, 12), rng.randint(26, 31)
        glued = rng.random() < 0.07
        texts.append(
            (_GLUED if glued else rng.choice(_CARD_TEMPLATES)).format(
                card=number if glued else _layout(rng, number),
                exp=f"{month:02d}/{year}",
                mmyy=f"{month:02d}{year}",
                cvv=_digits(rng, rng.choice([3, 4])),
                name=rng.choice(_NAMES),
                company=rng.choice(_COMPANIES),
            )
        )
    return texts
