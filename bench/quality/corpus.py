"""The retrieval-quality corpus: CRM memories of a dozen sales teams and the questions their
reps ask, generated from the hand-written phrasings below with a fixed seed (same seed, same
corpus, in every run and on every machine).

Each tenant is one sales team with its own accounts. An account carries up to fourteen facts
(payment terms, orders, renewal, contacts, pricing, deals...), each stored as one memory keyed
by the fact (`payment_terms`) with the account as its context (`northwind-traders`): the memory
service indexes them as "payment terms (northwind-traders): <value>". Some facts were corrected
(the old value superseded by a new one), and some questions ask about the old value.

Question types:
- `subject`: the account and the attribute in plain words ("what are Northwind's payment terms?")
- `paraphrase`: the account, the attribute said in other words ("how long do they get to pay?")
- `exact`: hinges on a code, number, name or address and names no account ("who placed ORD-48213?")
- `older`: about a value the memory no longer holds ("what were their terms before?")
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

SEED = 20260413
TENANTS = 12
ACCOUNTS_PER_TENANT = 16
QUESTION_MIX = {"exact": 16, "subject": 12, "paraphrase": 12, "older": 10}  # per tenant


def _words(text: str) -> list[str]:
    return text.split()


STEMS = _words(
    """Northwind Contoso Fabrikam Tailspin Litware Adatum Proseware Wingtip Coho Lucerne
Margie Fourth Alpine Blue Yonder Humongous Trey Woodgrove Relecloud Wide Consolidated Graphic
Lamna Nod Southridge VanArsdel Bellows Datum Fincher Halvorsen Ironbridge Juniper Kestrel Larkspur
Meridian Nimbus Oakhaven Pinecrest Quarry Redwater Saltmarsh Thornfield Upland Vireo Westfall
Yarrow Zephyr Amberly Brightwell Cobalt Driftwood Elmstead Foxglove Granite Harbourside Islay
Jasper Kittering Lowmoor Marlowe Netherby Orchard Pemberton Quill Rookwood Sable Tamsin Umber
Valeport Whitcombe Ashdown Birchall Calder Dunmore Everly Fairhaven Glenrock Hollis"""
)
SUFFIXES = _words(
    """Traders Logistics Foods Pharma Outfitters Robotics Textiles Breweries Dental Motors
Analytics Freight Hotels Bakeries Solar Plastics Clinics Insurance Marine Packaging Steel Media
Labs Furniture Telecom Farms Aviation Retail Builders Chemicals"""
)
FIRST = _words(
    """Dana Priya Tomasz Aiko Marcus Lena Rafael Ingrid Kofi Sofia Mateo Hannah Yusuf Chloe
Anders Nadia Oliver Mei Gabriel Zara Lukas Amara Henrik Leila Diego Freya Omar Elena Jonas Ruth
Tariq Beatriz Niall Sakura Pavel Imogen Emeka Clara Viktor Ayesha Bruno Greta Kwame Lucia Ravi
Astrid Felix Noor Callum Irene"""
)
LAST = _words(
    """Whitfield Okafor Lindqvist Moreau Castellano Nakamura Brennan Kowalski Haddad Fischer
Ferreira Delacroix Osei Varga Sorensen Iyer MacLeod Petrov Quintero Abernathy Rasmussen Tanaka
Gallagher Novak Mensah Ellison Bergstrom Santoro Achebe Holloway Dubois Lindgren Okonkwo Reyes
Marchetti Vasquez Hartmann Szabo Oyelaran Thornton Kaur Ivanova Beaumont Adeyemi Kristensen
Carvalho Yamamoto Fitzgerald Mwangi Larsen"""
)
ROLES = [
    "head of procurement",
    "operations manager",
    "IT director",
    "office manager",
    "category buyer",
    "plant manager",
    "head of finance",
    "project lead",
    "supply chain lead",
    "practice manager",
]
TITLES = [
    "CFO",
    "COO",
    "VP Operations",
    "managing director",
    "head of purchasing",
    "finance director",
    "CEO",
    "VP Finance",
]
TERMS = ["net-15", "net-30", "net-45", "net-60", "net-90", "2/10 net-30", "due on receipt"]
PRODUCTS = [
    "pallet wrap",
    "nitrile gloves",
    "label printers",
    "barcode scanners",
    "thermal paper rolls",
    "safety boots",
    "cleanroom wipes",
    "cold-chain sensors",
    "shelving units",
    "forklift batteries",
    "hand sanitiser",
    "packing tape",
]
PLANS = ["Starter", "Growth", "Business", "Enterprise", "Premium"]
STAGES = [
    "discovery",
    "proposal",
    "negotiation",
    "legal review",
    "verbal commit",
    "technical evaluation",
]
CITIES = [
    "Rotterdam",
    "Leeds",
    "Lyon",
    "Poznan",
    "Bilbao",
    "Gothenburg",
    "Antwerp",
    "Turin",
    "Dortmund",
    "Porto",
    "Cork",
    "Brno",
]
CARRIERS = [
    "DHL Express",
    "DB Schenker",
    "UPS Freight",
    "DSV",
    "Kuehne+Nagel",
    "GLS",
    "their own trucks",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
COMPETITORS = ["Zentrix", "Halcyon Systems", "Brightlane", "Orbisoft", "Quantaro", "Veloxa"]
TIERS = [("Gold", 4), ("Silver", 8), ("Platinum", 1), ("Bronze", 24), ("Standard", 48)]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass
class Memory:
    tenant: str
    key: str
    context: str  # the account's slug
    value: str
    old_value: str = ""  # set when the memory was corrected: created with this, then value


@dataclass
class Question:
    tenant: str
    text: str
    kind: str
    key: str
    context: str


@dataclass
class Account:
    name: str
    short: str
    slug: str
    domain: str
    slots: dict[str, str] = field(default_factory=dict)


def _date(rng: random.Random) -> tuple[str, str]:
    """A date as written in a memory and as said in a question (often differently)."""
    year, month, day = rng.choice([2026, 2027]), rng.randrange(12), rng.randrange(1, 29)
    forms = [
        f"{year}-{month + 1:02d}-{day:02d}",
        f"{day} {MONTHS[month]} {year}",
        f"{MONTHS[month]} {day}, {year}",
    ]
    return rng.choice(forms), rng.choice(forms)


def _money(rng: random.Random, low: int, high: int, step: int) -> str:
    return f"${rng.randrange(low, high, step):,}"


class Unique:
    """Values that must single out one memory within a tenant (codes, names, amounts)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def take(self, make: Callable[[random.Random], str]) -> str:
        while True:
            value = make(self.rng)
            if value.lower() not in self.used:
                self.used.add(value.lower())
                return value


# --- facts: (value phrasings, correction phrasings, question phrasings by type) -------------
# Placeholders: {account} and {short} (in questions), plus the fact's own slots.

Fact = dict[str, list[str]]

FACTS: dict[str, Fact] = {
    "payment_terms": {
        "value": [
            "{terms} on all invoices",
            "they pay {terms}; finance won't sign anything shorter",
            "invoices due {terms} from invoice date",
            "agreed {terms} in the master agreement",
            "{terms}, strictly - their AP team runs one payment batch a fortnight",
        ],
        "corrected": [
            "{terms} from this quarter on (was {old})",
            "moved from {old} to {terms}",
            "renegotiated to {terms}",
            "{terms} now",
        ],
        "subject": [
            "what are {short}'s payment terms?",
            "{account} payment terms",
            "what payment terms did we agree with {short}?",
            "remind me of the terms of payment for {account}",
        ],
        "paraphrase": [
            "how long does {short} get to settle an invoice?",
            "how many days until {account} has to pay us?",
            "when is money from {short} due after we bill them?",
            "does {short} pay on delivery or later?",
        ],
        "older": [
            "what were {short}'s payment terms before the change?",
            "which terms did {account} have originally, before renegotiating?",
            "{short} used to pay on {old} - what did we move them to?",
            "what payment terms did {short} have previously?",
        ],
    },
    "last_order": {
        "value": [
            "last order {code}: {qty} units of {product}, shipped {date}",
            "{code} for {qty} {product} is still held at customs",
            "placed {code} on {date} - {qty}x {product}",
            "most recent purchase was {code} ({product}, {qty} pcs)",
        ],
        "subject": [
            "what was {short}'s last order?",
            "{account} most recent order",
            "latest order from {short}?",
        ],
        "paraphrase": [
            "what did {short} buy most recently?",
            "what was in the newest shipment we sent {account}?",
            "what have {short} purchased lately?",
        ],
        "exact": [
            "who placed {code}?",
            "which customer is {code} for?",
            "status of {code}?",
            "order {digits} - which account was that?",
            "what was on order {code}",
        ],
    },
    "renewal_date": {
        "value": [
            "contract renews on {date}",
            "renewal due {date}; auto-renews unless they give 60 days' notice",
            "subscription ends {date}, start the renewal talk a quarter before",
            "term runs until {date}",
        ],
        "corrected": [
            "renewal pushed to {date} (was {old})",
            "now renews {date} after the extension",
            "co-termed: everything renews on {date}",
        ],
        "subject": [
            "when does {short}'s contract renew?",
            "{account} renewal date",
            "when is {short} up for renewal?",
        ],
        "paraphrase": [
            "when does {short}'s subscription run out?",
            "how long until {account} has to re-sign?",
            "when does our agreement with {short} expire?",
        ],
        "exact": ["which account renews on {asked}?", "whose contract ends {asked}?"],
        "older": [
            "when was {short} originally due to renew?",
            "what was {account}'s renewal date before it moved?",
            "{short}'s old renewal date?",
        ],
    },
    "primary_contact": {
        "value": [
            "{person} ({role}) is our main point of contact",
            "{person}, {role}, champions the rollout internally",
            "talk to {person} first - {role}, answers email within the hour",
            "day-to-day contact: {person}, {role}",
        ],
        "corrected": [
            "{person} ({role}) took over from {old_person}",
            "new main contact is {person}, {role}; {old_person} left",
            "{person}, {role}, is now our contact",
        ],
        "subject": [
            "who is the main contact at {short}?",
            "{account} primary contact",
            "who is our contact person at {short}?",
        ],
        "paraphrase": [
            "who should I call at {short} to get things moving?",
            "who is our friend on the inside at {account}?",
            "who do I talk to day to day at {short}?",
        ],
        "exact": [
            "who is {person}?",
            "which company does {person} work for?",
            "{first} {last_name} - which account?",
            "where does {last_name} work, {first} {last_name} I mean",
        ],
        "older": [
            "who was the main contact at {short} before?",
            "who did we deal with at {account} before {first} took over?",
            "{short}'s previous contact person?",
        ],
    },
    "decision_maker": {
        "value": [
            "{person} ({title}) signs off on anything above {amount}",
            "final budget approval sits with {person}, the {title}",
            "{title} {person} decides; procurement only negotiates",
            "economic buyer: {person}, {title}",
        ],
        "subject": [
            "who is the decision maker at {short}?",
            "{account} economic buyer",
            "who approves purchases at {short}?",
        ],
        "paraphrase": [
            "whose signature do we need to close {short}?",
            "who holds the purse strings at {account}?",
            "who has the final say on spending at {short}?",
        ],
        "exact": [
            "what does {person} approve?",
            "is {person} the one who signs?",
            "who is {first} {last_name} again?",
        ],
    },
    "unit_price": {
        "value": [
            "{price} per seat per month on the {plan} plan",
            "{plan} plan at {price} a user a month, locked for two years",
            "pays {price}/seat/month ({plan})",
            "price agreed: {price} per licence monthly, {plan} tier",
        ],
        "corrected": [
            "{price} per seat after the uplift (was {old})",
            "price raised to {price} per seat",
            "now {price}/seat/month on {plan}",
        ],
        "subject": [
            "what price did we give {short}?",
            "{account} per-seat price",
            "what is {short}'s unit price?",
        ],
        "paraphrase": [
            "how much is {short} charged per user?",
            "what does {account} pay for each license?",
            "what's {short}'s monthly cost for one person?",
        ],
        "exact": [
            "which customer pays {price} per seat?",
            "who is on {price} a month?",
            "{bare} per seat - which account?",
        ],
        "older": [
            "what was {short}'s price before the increase?",
            "what did {account} pay per seat before?",
            "{short} was on {old} per seat - what is it now?",
        ],
    },
    "discount": {
        "value": [
            "{pct}% multi-year discount, approved by sales ops",
            "{pct}% off list if they prepay annually",
            "gets a {pct}% volume discount above 500 seats",
            "standing {pct}% partner discount",
        ],
        "corrected": [
            "discount cut to {pct}% at renewal (was {old_pct}%)",
            "{pct}% discount from now on",
            "discount changed to {pct}%",
        ],
        "subject": [
            "what discount does {short} get?",
            "{account} discount",
            "how big is {short}'s discount?",
        ],
        "paraphrase": [
            "how much off list price did we agree with {short}?",
            "what reduction does {account} get on our prices?",
            "what's {short}'s markdown?",
        ],
        "older": [
            "what discount did {short} have before the renewal?",
            "{account}'s discount used to be what?",
            "was {short}'s discount ever {old_pct}%?",
        ],
    },
    "open_deal": {
        "value": [
            "{code} worth {amount} is in {stage}",
            "expansion deal {code}: {amount}, stage {stage}, close expected in {month}",
            "{amount} upsell ({code}) sitting in {stage}",
            "pipeline: {code}, {amount}, {stage}",
        ],
        "corrected": [
            "{code} moved to {stage} ({amount}); was in {old_stage}",
            "{code} now in {stage}, still {amount}",
        ],
        "subject": [
            "what's the open opportunity with {short}?",
            "{account} open deal",
            "what deal do we have going with {short}?",
        ],
        "paraphrase": [
            "how close are we to signing more business with {short}?",
            "what is {account} likely to buy from us this quarter?",
            "anything in the pipe for {short}?",
        ],
        "exact": [
            "what stage is {code} in?",
            "how big is {code}?",
            "which account is the {amount} deal with?",
            "opportunity {digits} status",
        ],
        "older": [
            "what stage was {short}'s deal in before?",
            "where was the {account} opportunity last time we looked?",
        ],
    },
    "shipping": {
        "value": [
            "ship to the {city} warehouse via {carrier}; dock closes at 3 pm",
            "deliveries to {city} only, {carrier}",
            "all goods go to their {city} depot with {carrier}",
            "{carrier} to {city}, book slots a day ahead",
        ],
        "corrected": [
            "now ships to {city} (moved from {old_city}), {carrier}",
            "new delivery address in {city}; use {carrier}",
        ],
        "subject": [
            "where do we ship {short}'s orders?",
            "{account} shipping address",
            "which carrier for {short} deliveries?",
        ],
        "paraphrase": [
            "which depot should {short}'s goods go to?",
            "how do we get products to {account}?",
            "where does stuff for {short} need to end up?",
        ],
        "older": [
            "where did {short} take deliveries before they moved?",
            "{account}'s old delivery location?",
        ],
    },
    "billing_contact": {
        "value": [
            "send invoices to {email}",
            "billing questions go to {email} ({person})",
            "AP mailbox: {email}; PDFs only",
            "{person} in accounts payable, {email}",
        ],
        "subject": [
            "where should invoices for {short} go?",
            "{account} billing contact",
            "{short} billing email?",
        ],
        "paraphrase": [
            "who at {short} handles accounts payable?",
            "where do I send {account} a bill?",
            "who chases payments on {short}'s side?",
        ],
        "exact": ["whose address is {email}?", "which account uses {email}?", "who is {email}?"],
    },
    "meeting_preference": {
        "value": [
            "prefers calls on {day} mornings",
            "no meetings on {day}s; Teams only",
            "{day} afternoons work best, never before 10",
            "likes a short {day} check-in",
        ],
        "subject": [
            "when does {short} like to meet?",
            "{account} meeting preferences",
            "best day to schedule a meeting with {short}?",
        ],
        "paraphrase": [
            "when is a good time to get {short} on the phone?",
            "what slot should I book with {account}?",
            "when are people at {short} free for a chat?",
        ],
    },
    "competitor": {
        "value": [
            "also evaluating {rival}; price is the main objection",
            "incumbent is {rival}, contract ends next year",
            "{rival} pitched them last month with a cheaper bundle",
            "comparing us against {rival} on integrations",
        ],
        "subject": [
            "which competitor is {short} looking at?",
            "{account} competition",
            "who are we up against at {short}?",
        ],
        "paraphrase": [
            "what other vendors is {short} considering?",
            "who else wants {account}'s business?",
            "is {short} talking to anyone besides us?",
        ],
    },
    "support_plan": {
        "value": [
            "{tier} support with a {hours}-hour response SLA",
            "{tier} tier: we answer within {hours} hours",
            "SLA {hours}h ({tier})",
            "on {tier} support, {hours} h first response",
        ],
        "subject": [
            "what support plan does {short} have?",
            "{account} SLA",
            "which support tier is {short} on?",
        ],
        "paraphrase": [
            "how fast must we answer {short}'s tickets?",
            "how quickly do we owe {account} a reply when something breaks?",
            "what response time did we promise {short}?",
        ],
    },
    "customer_number": {
        "value": [
            "customer number {code} in the ERP",
            "ERP account {code}",
            "{code} is their customer id in billing",
            "booked under customer no. {code}",
        ],
        "subject": [
            "what is {short}'s customer number?",
            "{account} ERP id",
            "{short} customer id?",
        ],
        "paraphrase": [
            "how is {short} filed in the ERP?",
            "which number do I look {account} up by in billing?",
        ],
        "exact": [
            "which account is customer {code}?",
            "who is {code}?",
            "customer {digits} - who's that?",
        ],
    },
}


def _slots(fact: str, rng: random.Random, unique: Unique, account: Account) -> dict[str, str]:
    """The values a fact's phrasings refer to; codes and names unique within the tenant."""
    if fact == "payment_terms":
        old, new = rng.sample(TERMS, 2)
        return {"terms": new, "old": old}
    if fact == "last_order":
        code = unique.take(
            lambda r: r.choice(
                [
                    f"ORD-{r.randrange(10000, 99999)}",
                    f"PO-2026-{r.randrange(1000, 9999)}",
                    f"SO{r.randrange(100000, 999999)}",
                ]
            )
        )
        date, _ = _date(rng)
        return {
            "code": code,
            "digits": re.sub(r"\D", "", code)[-5:] if code.startswith("ORD") else code,
            "qty": str(rng.randrange(20, 900, 10)),
            "product": rng.choice(PRODUCTS),
            "date": date,
        }
    if fact == "renewal_date":
        old, _ = _date(rng)
        date, asked = "", ""
        while not date:
            written, said = _date(rng)
            key = re.sub(r"\D", "", written)
            if key not in unique.used:
                unique.used.add(key)
                date, asked = written, said
        # A question says the date in its own words; both forms name the same day.
        return {"date": date, "asked": _same_day(date, asked), "old": old}
    if fact in ("primary_contact", "decision_maker"):
        first, last = unique.take(lambda r: f"{r.choice(FIRST)} {r.choice(LAST)}").split()
        old_first, old_last = unique.take(lambda r: f"{r.choice(FIRST)} {r.choice(LAST)}").split()
        return {
            "person": f"{first} {last}",
            "first": first,
            "last_name": last,
            "role": rng.choice(ROLES),
            "title": rng.choice(TITLES),
            "old_person": f"{old_first} {old_last}",
            "amount": _money(rng, 5000, 50000, 2500),
        }
    if fact == "unit_price":
        price = unique.take(
            lambda r: f"${r.randrange(8, 140)}.{r.choice(['00', '50', '90', '25'])}"
        )
        old = f"${float(price[1:]) * rng.uniform(0.8, 0.95):.2f}"
        return {"price": price, "bare": price[1:], "plan": rng.choice(PLANS), "old": old}
    if fact == "discount":
        pct, old_pct = rng.sample([5, 8, 10, 12, 15, 18, 20, 25], 2)
        return {"pct": str(pct), "old_pct": str(old_pct)}
    if fact == "open_deal":
        code = unique.take(lambda r: f"OPP-{r.randrange(1000, 9999)}")
        amount = unique.take(lambda r: _money(r, 12000, 480000, 400))
        new, old = rng.sample(STAGES, 2)
        return {
            "code": code,
            "digits": code[4:],
            "amount": amount,
            "stage": new,
            "old_stage": old,
            "month": rng.choice(MONTHS),
        }
    if fact == "shipping":
        city, old = rng.sample(CITIES, 2)
        return {"city": city, "old_city": old, "carrier": rng.choice(CARRIERS)}
    if fact == "billing_contact":
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = unique.take(
            lambda r: r.choice(
                [
                    f"ap@{account.domain}",
                    f"invoices@{account.domain}",
                    f"{first.lower()}.{last.lower()}@{account.domain}",
                    f"billing@{account.domain}",
                ]
            )
        )
        return {"email": email, "person": f"{first} {last}"}
    if fact == "meeting_preference":
        return {"day": rng.choice(WEEKDAYS)}
    if fact == "competitor":
        return {"rival": rng.choice(COMPETITORS)}
    if fact == "support_plan":
        tier, hours = rng.choice(TIERS)
        return {"tier": tier, "hours": str(hours)}
    if fact == "customer_number":
        code = unique.take(lambda r: f"C-{r.randrange(10000, 99999)}")
        return {"code": code, "digits": code[2:]}
    raise KeyError(fact)


def _same_day(written: str, said: str) -> str:
    """`said` was drawn independently; rewrite `written`'s day in a (possibly other) form."""
    numbers = re.findall(r"\d+", written)
    if written[:4].isdigit():
        year, month, day = int(numbers[0]), int(numbers[1]), int(numbers[2])
    else:
        day_year = [int(n) for n in numbers]
        month = next(i for i, m in enumerate(MONTHS, 1) if m in written)
        day, year = (day_year[0], day_year[1])
    if said[:4].isdigit():
        return f"{year}-{month:02d}-{day:02d}"
    if said[0].isdigit():
        return f"{day} {MONTHS[month - 1]} {year}"
    return f"{MONTHS[month - 1]} {day}, {year}"


CORRECTABLE = [name for name, fact in FACTS.items() if "corrected" in fact]
CORRECTED_SHARE = 0.3


def _accounts(rng: random.Random) -> list[Account]:
    stems = rng.sample(STEMS, ACCOUNTS_PER_TENANT)
    accounts = []
    for stem in stems:
        suffix = rng.choice(SUFFIXES)
        name = f"{stem} {suffix}"
        slug = f"{stem}-{suffix}".lower()
        domain = rng.choice(
            [
                f"{stem.lower()}.com",
                f"{stem.lower()}-{suffix.lower()}.eu",
                f"{stem.lower()}{suffix.lower()[:4]}.co.uk",
            ]
        )
        accounts.append(Account(name, stem, slug, domain))
    return accounts


def _say(template: str, account: Account, slots: dict[str, str], rng: random.Random) -> str:
    """A question as typed: the account by its full or short name, sometimes lowercase."""
    text = template.format(
        account=account.name, short=rng.choice([account.short, account.name]), **slots
    )
    if rng.random() < 0.25:
        text = text.lower()
    return text[0].upper() + text[1:] if rng.random() < 0.7 else text


def build(seed: int = SEED, tenants: int = TENANTS) -> tuple[list[Memory], list[Question]]:
    rng = random.Random(seed)
    memories: list[Memory] = []
    questions: list[Question] = []
    for t in range(tenants):
        tenant = f"team-{t:02d}"
        unique = Unique(rng)
        pool: dict[str, list[tuple[Memory, Account, dict[str, str]]]] = {
            kind: [] for kind in QUESTION_MIX
        }
        for account in _accounts(rng):
            facts = rng.sample(list(FACTS), rng.randrange(10, len(FACTS) + 1))
            for name in facts:
                fact = FACTS[name]
                slots = _slots(name, rng, unique, account)
                value = rng.choice(fact["value"]).format(**slots)
                memory = Memory(tenant, name, account.slug, value)
                if name in CORRECTABLE and rng.random() < CORRECTED_SHARE:
                    old_slots = _old_slots(name, slots)
                    memory.old_value = rng.choice(fact["value"]).format(**old_slots)
                    memory.value = rng.choice(fact["corrected"]).format(**slots)
                    if "older" in fact:
                        pool["older"].append((memory, account, slots))
                memories.append(memory)
                for kind in ("exact", "subject", "paraphrase"):
                    if kind in fact:
                        pool[kind].append((memory, account, slots))
        for kind, wanted in QUESTION_MIX.items():
            for memory, account, slots in rng.sample(pool[kind], min(wanted, len(pool[kind]))):
                template = rng.choice(FACTS[memory.key][kind])
                questions.append(
                    Question(
                        tenant,
                        _say(template, account, slots, rng),
                        kind,
                        memory.key,
                        memory.context,
                    )
                )
    return memories, questions


def _old_slots(name: str, slots: dict[str, str]) -> dict[str, str]:
    """The slots as they were before the correction, for the memory's first value."""
    old = dict(slots)
    swaps = {
        "payment_terms": ("terms", "old"),
        "renewal_date": ("date", "old"),
        "unit_price": ("price", "old"),
        "discount": ("pct", "old_pct"),
        "open_deal": ("stage", "old_stage"),
        "shipping": ("city", "old_city"),
        "primary_contact": ("person", "old_person"),
    }
    target, source = swaps[name]
    old[target] = slots[source]
    return old
