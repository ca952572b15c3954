# ruff: noqa: E501  (a table of labelled cases, one a line)
"""Labelled grounding cases: a message, the memory an extractor wrote from it, and whether the memory
is faithful to the message.

Faithful: the value says what the message says, in other words if needed (inflection, reordering, a
change of person, a light synonym, a nominalisation, a negation kept in other words, a third-person
observation naming the speaker, a summary that drops detail).  Unfaithful: the value says something
the message does not (a changed figure, identifier, amount, date or time, e-mail address, phone
number or name, a flipped negation, an antonym, an added fact, unrelated text).

`quote` is "" or an exact substring of `message` that locates the statement.  `speaker` is the
display name of who said the message, set when the value names them.

DEV and TEST were written separately (different customers, people and phrasings).
Run `python3 bench/grounding/corpus.py` to check the file and print counts by (faithful, kind).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    message: str  # what was said (one to four sentences, as typed in chat or transcribed)
    value: str  # the memory an extractor would write
    quote: str  # "" or an exact substring of message
    faithful: bool
    kind: str
    speaker: str = ""  # display name of who said the message, when the value names them


FAITHFUL_KINDS = (
    "verbatim",
    "inflection",
    "reorder",
    "person",
    "synonym",
    "nominalisation",
    "negation_kept",
    "third_person",
    "summary",
)
UNFAITHFUL_KINDS = (
    "figure",
    "identifier",
    "amount",
    "date",
    "email",
    "phone",
    "name",
    "negation_flip",
    "antonym",
    "added_fact",
    "unrelated",
)


def F(message: str, value: str, kind: str, quote: str = "", speaker: str = "") -> Case:
    return Case(message, value, quote, True, kind, speaker)


def U(message: str, value: str, kind: str, quote: str = "", speaker: str = "") -> Case:
    return Case(message, value, quote, False, kind, speaker)


# ---------------------------------------------------------------------------------------------
# DEV
# ---------------------------------------------------------------------------------------------

DEV: list[Case] = [
    # --- faithful: verbatim
    F(
        "Our renewal date is March 14.",
        "Our renewal date is March 14.",
        "verbatim",
        quote="renewal date is March 14",
    ),
    F(
        "Invoices go to billing@northwindfoods.com.",
        "Invoices go to billing@northwindfoods.com",
        "verbatim",
    ),
    F(
        "Hey, quick note: the PO number for this quarter is PO-88213.",
        "the PO number for this quarter is PO-88213",
        "verbatim",
        quote="PO-88213",
    ),
    F(
        "I'm allergic to peanuts. Please keep that in mind when you suggest restaurants.",
        "allergic to peanuts",
        "verbatim",
        quote="allergic to peanuts",
    ),
    F(
        "Brightline's decision maker is Dana Whitfield, their VP of Operations.",
        "Brightline's decision maker is Dana Whitfield",
        "verbatim",
    ),
    F("My cat is called Pesto.", "cat is called Pesto", "verbatim"),
    F(
        "Ok so the contract length is 24 months, starting in July.",
        "contract length is 24 months",
        "verbatim",
        quote="24 months",
    ),
    F(
        "Halvorsen uses our API for inventory sync.",
        "Halvorsen uses our API for inventory sync",
        "verbatim",
    ),
    # --- faithful: inflection
    F(
        "We're shipping everything in recyclable packaging from now on.",
        "ships everything in recyclable packaging",
        "inflection",
        quote="recyclable packaging",
    ),
    F("I run every morning before work.", "runs every morning before work", "inflection"),
    F(
        "I've been using the analytics module daily.",
        "uses the analytics module daily",
        "inflection",
    ),
    F(
        "We're expanding into Canada next year.",
        "expanding into Canada next year",
        "inflection",
        quote="expanding into Canada",
    ),
    F(
        "I speak German and French.",
        "speaks German and French",
        "inflection",
        quote="German and French",
    ),
    F(
        "Their team uses Slack for everything.",
        "their team using Slack for everything",
        "inflection",
    ),
    F("We invoice our clients quarterly.", "clients invoiced quarterly", "inflection"),
    F(
        "We need the pallets labelled with the PO number.",
        "needs each pallet labelled with the PO number",
        "inflection",
    ),
    # --- faithful: reorder
    F("Net 45 is what Cobalt pays on.", "Cobalt pays on net 45", "reorder", quote="Net 45"),
    F(
        "On Tuesdays and Thursdays I coach my daughter's soccer team.",
        "coaches daughter's soccer team on Tuesdays and Thursdays",
        "reorder",
    ),
    F(
        "For shipping, Halvorsen wants everything palletised.",
        "Halvorsen wants everything palletised for shipping",
        "reorder",
    ),
    F(
        "Spanish is the language their procurement team works in.",
        "their procurement team works in Spanish",
        "reorder",
    ),
    F(
        "Every other Friday, I work from the cabin.",
        "works from the cabin every other Friday",
        "reorder",
        quote="Every other Friday",
    ),
    F(
        "A 12% discount is what we agreed with Northwind for the three-year deal.",
        "agreed a 12% discount with Northwind for the three-year deal",
        "reorder",
    ),
    F(
        "Central European Time is where most of their team sits.",
        "most of their team is on Central European Time",
        "reorder",
    ),
    F(
        "In the mornings I'm sharpest, so book deep work then.",
        "is sharpest in the mornings",
        "reorder",
    ),
    # --- faithful: person
    F(
        "I prefer email over phone calls.",
        "prefers email over phone calls",
        "person",
        quote="prefer email",
    ),
    F(
        "My budget for the pilot is $40,000.",
        "the user's budget for the pilot is $40,000",
        "person",
        quote="$40,000",
    ),
    F("I'm based in Denver.", "the user is based in Denver", "person", quote="Denver"),
    F("We're on the Enterprise plan.", "the customer is on the Enterprise plan", "person"),
    F("I have two kids, ages 6 and 9.", "has two kids, ages 6 and 9", "person"),
    F(
        "I'm the head of procurement at Lindqvist.",
        "the user is head of procurement at Lindqvist",
        "person",
        quote="head of procurement",
    ),
    F("Our fiscal year ends in June.", "their fiscal year ends in June", "person"),
    F("I take my coffee black.", "takes coffee black", "person"),
    # --- faithful: synonym
    F(
        "I want window seats when I fly.",
        "prefers window seats when flying",
        "synonym",
        quote="window seats",
    ),
    F("Just call me Rob.", "goes by Rob", "synonym"),
    F("The project kicks off on May 6.", "the project starts on May 6", "synonym", quote="May 6"),
    F(
        "We're going to buy 50 more seats in Q3.",
        "plans to purchase 50 more seats in Q3",
        "synonym",
    ),
    F("Our contract begins on January 1.", "contract starts on January 1", "synonym"),
    F(
        "Send the quote to Priya, she's our buyer.",
        "Priya is their purchaser",
        "synonym",
        quote="she's our buyer",
    ),
    F("I hate early meetings.", "dislikes early meetings", "synonym", quote="early meetings"),
    F("Cobalt's team is large, about 300 staff.", "Cobalt has about 300 employees", "synonym"),
    F("I'd like invoices by email.", "wants invoices by email", "synonym"),
    # --- faithful: nominalisation
    F(
        "We decided to renew for two more years.",
        "decision to renew for two more years",
        "nominalisation",
        quote="renew for two more years",
    ),
    F("I'm allergic to shellfish.", "has a shellfish allergy", "nominalisation"),
    F(
        "They expect to grow headcount by 20% next year.",
        "expected headcount growth of 20% next year",
        "nominalisation",
    ),
    F(
        "Deliver before 10am, the dock closes at noon.",
        "delivery before 10am",
        "nominalisation",
        quote="before 10am",
    ),
    F(
        "I volunteer at the animal shelter on weekends.",
        "does volunteer work at the animal shelter on weekends",
        "nominalisation",
    ),
    F("We prefer to pay annually.", "preference for annual payment", "nominalisation"),
    F(
        "Halvorsen is migrating off Oracle this summer.",
        "Halvorsen's migration off Oracle is this summer",
        "nominalisation",
    ),
    # --- faithful: negation kept
    F(
        "Please don't schedule anything on Fridays.",
        "no meetings on Fridays",
        "negation_kept",
        quote="don't schedule anything on Fridays",
    ),
    F("I don't eat pork.", "does not eat pork", "negation_kept"),
    F(
        "We never accept partial shipments.",
        "does not accept partial shipments",
        "negation_kept",
        quote="partial shipments",
    ),
    F(
        "Northwind won't sign anything longer than a year.",
        "Northwind will not sign contracts longer than one year",
        "negation_kept",
    ),
    F(
        "I'm not a fan of phone calls, text me instead.",
        "doesn't like phone calls; prefers texts",
        "negation_kept",
    ),
    F(
        "No plastic wrap on the pallets, please.",
        "does not want plastic wrap on the pallets",
        "negation_kept",
    ),
    F("Don't call me before 9.", "no calls before 9", "negation_kept", quote="before 9"),
    F("They don't have budget approval yet.", "budget not yet approved", "negation_kept"),
    # --- faithful: third person
    F(
        "I painted a sunrise over the lake last weekend.",
        "Melanie painted a sunrise over the lake",
        "third_person",
        speaker="Melanie",
    ),
    F(
        "We just adopted a beagle puppy named Biscuit.",
        "Jonas adopted a beagle puppy named Biscuit",
        "third_person",
        quote="beagle puppy",
        speaker="Jonas",
    ),
    F(
        "I've been teaching piano for eight years.",
        "Aisha has taught piano for eight years",
        "third_person",
        speaker="Aisha",
    ),
    F(
        "Honestly, our team is moving to quarterly billing.",
        "Tom Reyes's team is moving to quarterly billing",
        "third_person",
        quote="quarterly billing",
        speaker="Tom Reyes",
    ),
    F(
        "I'm starting a new job at a logistics firm next month.",
        "Priya is starting a new job at a logistics firm next month",
        "third_person",
        speaker="Priya",
    ),
    F(
        "I finally finished the bookshelf I was building.",
        "Dev finished building a bookshelf",
        "third_person",
        speaker="Dev",
    ),
    F(
        "I can't make the Thursday call, I'll be at a trade show.",
        "Lena will be at a trade show",
        "third_person",
        quote="trade show",
        speaker="Lena",
    ),
    F(
        "I joined a community choir in the spring.",
        "Caroline joined a community choir",
        "third_person",
        speaker="Caroline",
    ),
    # --- faithful: summary (some with a negation elsewhere that does not concern the value)
    F(
        "So we talked internally and, long story short, we'll go with the 3-year term, but legal needs to review the indemnity clause first.",
        "going with the 3-year term",
        "summary",
        quote="3-year term",
    ),
    F("I'm vegetarian, so no meat at the team dinner please.", "is vegetarian", "summary"),
    F(
        "Ship to the Rotterdam warehouse, not the Antwerp one. Antwerp is closing in May.",
        "ship to the Rotterdam warehouse",
        "summary",
        quote="Rotterdam warehouse",
    ),
    F(
        "Our main contact is Helen Brooks, though she's out until the 20th, so don't expect replies this week.",
        "main contact is Helen Brooks",
        "summary",
    ),
    F(
        "I work remotely from Lisbon, and no, I don't miss the office.",
        "works remotely from Lisbon",
        "summary",
    ),
    F(
        "We've been with Zendesk for years but we're not renewing; we're moving support tickets to your platform in September.",
        "moving support tickets to the platform in September",
        "summary",
    ),
    F(
        "My daughter Ana just turned 7 and she's obsessed with dinosaurs.",
        "has a daughter named Ana",
        "summary",
        quote="My daughter Ana",
    ),
    F(
        "The ticket about the broken export, #4471, can be closed, the fix works.",
        "ticket #4471 can be closed",
        "summary",
    ),
    # --- unfaithful: figure
    U(
        "We have 45 users on the platform right now.",
        "has 54 users on the platform",
        "figure",
        quote="45 users",
    ),
    U("The contract length is 18 months.", "contract length is 16 months", "figure"),
    U("They want a 15% discount on the renewal.", "wants a 25% discount on the renewal", "figure"),
    U("I sleep about 7 hours a night.", "sleeps about 8 hours a night", "figure"),
    U("Pallets max 120 cm high, please.", "pallets max 150 cm high", "figure", quote="120 cm"),
    U(
        "Our team is 12 people across two offices.",
        "team of 12 people across three offices",
        "figure",
    ),
    # --- unfaithful: identifier
    U(
        "Order 55821 arrived damaged.",
        "order 55812 arrived damaged",
        "identifier",
        quote="Order 55821",
    ),
    U(
        "Please reference invoice INV-2023-0417 when you reply.",
        "reference invoice INV-2023-0471 in replies",
        "identifier",
    ),
    U("Their account number is ACC-30992.", "account number is ACC-30929", "identifier"),
    U(
        "We need 200 units of SKU BX-440-R.",
        "needs 200 units of SKU BX-440-B",
        "identifier",
        quote="200 units",
    ),
    U("Ticket 7781 is still open.", "ticket 7787 is still open", "identifier"),
    U("The PO for the Lisbon order is 4410-A.", "PO for the Lisbon order is 4410-B", "identifier"),
    # --- unfaithful: amount
    U(
        "Our budget is $25,000 for this year.",
        "budget is $35,000 for this year",
        "amount",
        quote="$25,000",
    ),
    U("They paid €1,200 upfront.", "paid €12,000 upfront", "amount"),
    U("Monthly fee is $499.", "monthly fee is $449", "amount"),
    U("I spend about $60 a week on groceries.", "spends about $80 a week on groceries", "amount"),
    U("The deal is worth £48k annually.", "deal is worth £84k annually", "amount"),
    # --- unfaithful: date / time
    U("Renewal is due on October 3.", "renewal due on November 3", "date", quote="October 3"),
    U("Let's meet Tuesday at 2pm.", "meeting on Wednesday at 2pm", "date"),
    U("My flight lands at 6:40 on Sunday.", "flight lands at 6:40 on Saturday", "date"),
    U("The contract ends 30 June 2025.", "contract ends 30 June 2026", "date"),
    U(
        "Best time to reach me is after 4pm.",
        "best time to reach is after 5pm",
        "date",
        quote="after 4pm",
    ),
    U(
        "I'm off from the 12th to the 19th of August.",
        "off from the 12th to the 19th of April",
        "date",
    ),
    # --- unfaithful: email
    U("Send invoices to ap@halvorsen.no.", "send invoices to ap@halvorsen.com", "email"),
    U(
        "My work email is j.tanaka@brightline.io.",
        "work email is j.tanka@brightline.io",
        "email",
        quote="j.tanaka@brightline.io",
    ),
    U(
        "cc accounts@cobaltlabs.com on everything",
        "cc account@cobaltlabs.com on everything",
        "email",
    ),
    U(
        "Reach Dana at dana.w@brightline.io for anything contract related.",
        "Dana's email is dana.w@brightlime.io",
        "email",
    ),
    # --- unfaithful: phone
    U("You can reach me on 415-555-0182.", "phone number is 415-555-0128", "phone"),
    U(
        "Their front desk is +44 20 7946 0321.",
        "front desk is +44 20 7946 0312",
        "phone",
        quote="+44 20 7946 0321",
    ),
    U(
        "Call the warehouse at (312) 555-0147 before delivery.",
        "call the warehouse at (312) 555-0174 before delivery",
        "phone",
    ),
    U("My mobile is 0612 345 678.", "mobile is 0612 354 678", "phone"),
    # --- unfaithful: name
    U("Our champion there is Marcus Ellery.", "champion is Marcus Ellory", "name"),
    U(
        "My husband Keith handles the travel bookings.",
        "husband Kevin handles the travel bookings",
        "name",
        quote="husband Keith",
    ),
    U("Their CFO is Ingrid Solberg.", "CFO is Ingrid Solheim", "name"),
    U("I'm meeting Jana from Cobalt tomorrow.", "meeting Dana from Cobalt tomorrow", "name"),
    U(
        "My son Liam just started kindergarten.",
        "Melanie's son Noah started kindergarten",
        "name",
        speaker="Melanie",
    ),
    # --- unfaithful: negation flip
    U(
        "We don't need onsite training.",
        "needs onsite training",
        "negation_flip",
        quote="onsite training",
    ),
    U("I'm not vegetarian anymore.", "is vegetarian", "negation_flip"),
    U("They never pay by credit card.", "pays by credit card", "negation_flip"),
    U(
        "Please ship the order, no need to wait for the full batch.",
        "wait for the full batch before shipping",
        "negation_flip",
    ),
    U("I do eat fish, just not red meat.", "does not eat fish", "negation_flip"),
    U(
        "Halvorsen isn't renewing the support add-on.",
        "Halvorsen is renewing the support add-on",
        "negation_flip",
        quote="support add-on",
    ),
    # --- unfaithful: antonym
    U("I prefer aisle seats.", "prefers window seats", "antonym", quote="aisle seats"),
    U("Morning meetings work best for me.", "evening meetings work best", "antonym"),
    U(
        "They want to increase the seat count next quarter.",
        "wants to decrease the seat count next quarter",
        "antonym",
    ),
    U("I like to arrive early to the airport.", "likes to arrive late to the airport", "antonym"),
    U("I really dislike cilantro.", "really likes cilantro", "antonym"),
    U(
        "We're downgrading to the Starter plan.",
        "upgrading to the Starter plan",
        "antonym",
        quote="Starter plan",
    ),
    # --- unfaithful: added fact
    U(
        "We're opening a new warehouse next year.",
        "opening a new warehouse in Texas next year",
        "added_fact",
    ),
    U("I have a dog.", "has a golden retriever", "added_fact"),
    U(
        "Lindqvist is evaluating a competitor.",
        "Lindqvist is evaluating HubSpot as a competitor",
        "added_fact",
        quote="evaluating a competitor",
    ),
    U("I'm moving in the spring.", "moving to Seattle in the spring", "added_fact"),
    U(
        "They want to cancel the add-on.",
        "wants to cancel the add-on because of price",
        "added_fact",
    ),
    U(
        "I went hiking on Saturday.",
        "Jonas went hiking with his brother on Saturday",
        "added_fact",
        speaker="Jonas",
    ),
    # --- unfaithful: unrelated
    U("Thanks, that's all for today!", "prefers quarterly invoicing", "unrelated"),
    U("Can you remind me what we discussed last time?", "is based in Toronto", "unrelated"),
    U("Haha yes that sounds great.", "customer's renewal date is May 1", "unrelated"),
    U("Let me check with my team and get back to you.", "decision maker is the CFO", "unrelated"),
]


# ---------------------------------------------------------------------------------------------
# TEST
# ---------------------------------------------------------------------------------------------

TEST: list[Case] = [
    # --- faithful: verbatim
    F(
        "Meridian Freight pays on net 60.",
        "Meridian Freight pays on net 60",
        "verbatim",
        quote="net 60",
    ),
    F(
        "The renewal for Kestrel Dental is on 1 September.",
        "The renewal for Kestrel Dental is on 1 September",
        "verbatim",
    ),
    F(
        "FYI the billing contact at Tidewater is accounts@tidewaterbakery.co.uk.",
        "billing contact at Tidewater is accounts@tidewaterbakery.co.uk",
        "verbatim",
        quote="accounts@tidewaterbakery.co.uk",
    ),
    F("I'm lactose intolerant.", "lactose intolerant", "verbatim", quote="lactose intolerant"),
    F(
        "Vantage Optics signed a 36-month contract.",
        "Vantage Optics signed a 36-month contract",
        "verbatim",
    ),
    F("Our warehouse closes at 5:30pm.", "warehouse closes at 5:30pm", "verbatim", quote="5:30pm"),
    F(
        "Saltmarsh Media's main competitor in the deal is Brandwise.",
        "main competitor in the deal is Brandwise",
        "verbatim",
    ),
    F("My dog's name is Juniper, she's a border collie.", "dog's name is Juniper", "verbatim"),
    F(
        "Hi! Order 90314 needs to go out with the blue labels.",
        "Order 90314 needs to go out with the blue labels",
        "verbatim",
        quote="Order 90314",
    ),
    F(
        "Ironbridge wants all drawings in PDF format.",
        "Ironbridge wants all drawings in PDF format",
        "verbatim",
    ),
    F(
        "Support ticket 22817 is about the SSO login loop.",
        "Support ticket 22817 is about the SSO login loop",
        "verbatim",
        quote="22817",
    ),
    F("I play bass in a jazz trio.", "I play bass in a jazz trio.", "verbatim"),
    F(
        "Pinecrest Schools' budget cycle starts in April.",
        "budget cycle starts in April",
        "verbatim",
    ),
    F(
        "Our office phone is 020 7946 0958.",
        "office phone is 020 7946 0958",
        "verbatim",
        quote="020 7946 0958",
    ),
    F(
        "Calder Insurance uses the reporting module every Monday.",
        "Calder Insurance uses the reporting module every Monday",
        "verbatim",
    ),
    F(
        "The agreed discount is 8% on orders over 500 units.",
        "agreed discount is 8% on orders over 500 units",
        "verbatim",
        quote="8%",
    ),
    # --- faithful: inflection
    F("I'm studying for my pilot's license.", "studying for a pilot's license", "inflection"),
    F(
        "We ship every order in double-walled boxes.",
        "ships orders in double-walled boxes",
        "inflection",
        quote="double-walled boxes",
    ),
    F("They've already signed the NDA.", "signed the NDA", "inflection"),
    F("I've been playing chess online a lot lately.", "plays chess online a lot", "inflection"),
    F(
        "Arctis Labs is hiring three data engineers.",
        "Arctis Labs hiring three data engineers",
        "inflection",
        quote="three data engineers",
    ),
    F(
        "Our reps use the mobile app in the field.",
        "reps using the mobile app in the field",
        "inflection",
    ),
    F(
        "I bake sourdough most weekends.",
        "bakes sourdough most weekends",
        "inflection",
        quote="sourdough",
    ),
    F(
        "We're piloting the forecasting add-on with two teams.",
        "pilots the forecasting add-on with two teams",
        "inflection",
    ),
    F(
        "I collect vintage film cameras.",
        "collects vintage film cameras",
        "inflection",
        quote="vintage film cameras",
    ),
    F(
        "Sunfield Organics exports to Germany and Austria.",
        "Sunfield Organics exporting to Germany and Austria",
        "inflection",
    ),
    F(
        "They are consolidating their vendors this year.",
        "consolidates vendors this year",
        "inflection",
    ),
    F(
        "I cycle to work when it's not raining.",
        "cycles to work when it's not raining",
        "inflection",
    ),
    F(
        "Ravel Textiles requires signed delivery notes for every drop.",
        "Ravel Textiles requires a signed delivery note for every drop",
        "inflection",
    ),
    F(
        "I'm fostering two kittens at the moment.",
        "fosters two kittens",
        "inflection",
        quote="fostering two kittens",
    ),
    F(
        "Our team meets every Wednesday morning.",
        "team meeting every Wednesday morning",
        "inflection",
    ),
    F("I speak Mandarin with my parents.", "speaks Mandarin with parents", "inflection"),
    F(
        "Quill & Co orders paper stock monthly.",
        "Quill & Co ordering paper stock monthly",
        "inflection",
    ),
    F(
        "We've invoiced them in euros since 2021.",
        "has invoiced them in euros since 2021",
        "inflection",
        quote="in euros",
    ),
    F("I'm trying to read one book a week.", "tries to read one book a week", "inflection"),
    F(
        "Their admins configure the roles themselves.",
        "their admins configuring the roles themselves",
        "inflection",
    ),
    # --- faithful: reorder
    F(
        "Net 15 is non-negotiable for Orchard Lane.",
        "for Orchard Lane, net 15 is non-negotiable",
        "reorder",
        quote="Net 15",
    ),
    F(
        "Every quarter, Vantage reviews their vendor list.",
        "Vantage reviews their vendor list every quarter",
        "reorder",
    ),
    F(
        "Next week I'm flying to Mumbai for a conference.",
        "flying to Mumbai for a conference next week",
        "reorder",
    ),
    F(
        "By the 25th of each month, invoices have to reach Calder.",
        "invoices have to reach Calder by the 25th of each month",
        "reorder",
        quote="25th of each month",
    ),
    F(
        "Portuguese and English are the two languages their support team covers.",
        "their support team covers English and Portuguese",
        "reorder",
    ),
    F("On weekends I mostly garden.", "mostly gardens on weekends", "reorder"),
    F(
        "With Meridian, all pricing goes through their procurement portal.",
        "all pricing with Meridian goes through their procurement portal",
        "reorder",
        quote="procurement portal",
    ),
    F(
        "Pacific Time is where their HQ is, but the buyer sits in Chicago.",
        "their HQ is on Pacific Time",
        "reorder",
    ),
    F(
        "After lunch is when I do my calls.",
        "does calls after lunch",
        "reorder",
        quote="After lunch",
    ),
    F(
        "Two signatures, the CFO's and the COO's, are required on any contract at Ironbridge.",
        "any contract at Ironbridge requires two signatures, the CFO's and the COO's",
        "reorder",
    ),
    F(
        "Since March, Tidewater has been buying oat flour from us.",
        "Tidewater has been buying oat flour from us since March",
        "reorder",
    ),
    F(
        "Eight seats, that's what Quill & Co is licensed for.",
        "Quill & Co is licensed for eight seats",
        "reorder",
        quote="Eight seats",
    ),
    F(
        "In the evenings my partner and I take salsa classes.",
        "takes salsa classes with partner in the evenings",
        "reorder",
    ),
    F(
        "Strapped and shrink-wrapped, that's how Sunfield wants the pallets.",
        "Sunfield wants the pallets strapped and shrink-wrapped",
        "reorder",
    ),
    F(
        "Once a month, I visit my grandmother in Leeds.",
        "visits grandmother in Leeds once a month",
        "reorder",
        quote="grandmother in Leeds",
    ),
    F(
        "For anything over $10k, Kestrel's owner has to sign off.",
        "Kestrel's owner has to sign off on anything over $10k",
        "reorder",
    ),
    F(
        "At 8am sharp the Saltmarsh standup starts.",
        "the Saltmarsh standup starts at 8am sharp",
        "reorder",
    ),
    F(
        "A Kindle and a paperback, I always travel with both.",
        "always travels with a Kindle and a paperback",
        "reorder",
    ),
    # --- faithful: person
    F("I prefer Zoom to Teams.", "prefers Zoom to Teams", "person", quote="Zoom to Teams"),
    F("My time zone is AEST.", "the user's time zone is AEST", "person"),
    F("We're a team of 40 engineers.", "the customer has a team of 40 engineers", "person"),
    F(
        "I'm the office manager at Kestrel Dental.",
        "the user is the office manager at Kestrel Dental",
        "person",
        quote="office manager",
    ),
    F("Our preferred carrier is DHL.", "their preferred carrier is DHL", "person"),
    F("I need my receipts in PDF.", "needs receipts in PDF", "person"),
    F("My wife is a nurse.", "the user's wife is a nurse", "person"),
    F(
        "We pay by bank transfer only.",
        "the customer pays by bank transfer only",
        "person",
        quote="bank transfer",
    ),
    F("I'm left-handed.", "is left-handed", "person"),
    F("I grew up in Manila.", "grew up in Manila", "person", quote="Manila"),
    F("Our sales team works in HubSpot.", "their sales team works in HubSpot", "person"),
    F(
        "I'm in charge of the onboarding rollout.",
        "the user is in charge of the onboarding rollout",
        "person",
    ),
    F("My parents live two hours away.", "the user's parents live two hours away", "person"),
    F(
        "We close our books on the 5th business day.",
        "the organisation closes its books on the 5th business day",
        "person",
        quote="5th business day",
    ),
    F("I own a 2015 Subaru Outback.", "owns a 2015 Subaru Outback", "person"),
    F("We've got 3 locations in Ohio.", "they have 3 locations in Ohio", "person"),
    F("I work night shifts on weekends.", "works night shifts on weekends", "person"),
    F(
        "Our board meets in February and August.",
        "their board meets in February and August",
        "person",
        quote="February and August",
    ),
    F("I usually fly out of Gatwick.", "usually flies out of Gatwick", "person", quote="Gatwick"),
    F("My manager is Eleanor Voss.", "the user's manager is Eleanor Voss", "person"),
    F("We're ISO 27001 certified.", "the customer is ISO 27001 certified", "person"),
    F("I'm learning to sail.", "the user is learning to sail", "person"),
    # --- faithful: synonym
    F(
        "I'd rather sit by the window on long flights.",
        "prefers a window seat on long flights",
        "synonym",
        quote="sit by the window",
    ),
    F("Everyone calls me Liz.", "goes by Liz", "synonym", quote="calls me Liz"),
    F("Onboarding commences on the 14th.", "onboarding begins on the 14th", "synonym"),
    F(
        "We intend to purchase another 12 licenses in autumn.",
        "plans to buy another 12 licenses in autumn",
        "synonym",
    ),
    F(
        "Meridian wants to terminate the legacy contract.",
        "Meridian wants to end the legacy contract",
        "synonym",
        quote="legacy contract",
    ),
    F("Tidewater's owner loathes cold calls.", "Tidewater's owner hates cold calls", "synonym"),
    F("My kid's daycare shuts at 6.", "child's daycare closes at 6", "synonym"),
    F("I'm fond of long-distance hiking.", "likes long-distance hiking", "synonym"),
    F("Their head office is in Gdańsk.", "their headquarters are in Gdańsk", "synonym"),
    F(
        "Arctis needs the quote by Friday.",
        "Arctis requires the quote by Friday",
        "synonym",
        quote="by Friday",
    ),
    F("I reside in Vancouver.", "lives in Vancouver", "synonym", quote="Vancouver"),
    F(
        "Ravel's procurement lead is Tomasz Wiśniewski.",
        "Ravel's head of procurement is Tomasz Wiśniewski",
        "synonym",
    ),
    F("I have to be home by 5 on Thursdays.", "must be home by 5 on Thursdays", "synonym"),
    F(
        "We want to get rid of spreadsheets for forecasting.",
        "wants to eliminate spreadsheets for forecasting",
        "synonym",
    ),
    F(
        "Our CEO is quite keen on the AI features.",
        "their CEO is enthusiastic about the AI features",
        "synonym",
        quote="keen on the AI features",
    ),
    F(
        "I jog along the canal before breakfast.",
        "runs along the canal before breakfast",
        "synonym",
    ),
    F("BluePeak wishes to postpone the kickoff.", "BluePeak wants to delay the kickoff", "synonym"),
    F(
        "My youngest is scared of thunderstorms.",
        "youngest child is afraid of thunderstorms",
        "synonym",
    ),
    F(
        "Pinecrest requested a live demo for the principals.",
        "Pinecrest asked for a live demo for the principals",
        "synonym",
        quote="live demo",
    ),
    F("I'm crazy about Korean food.", "loves Korean food", "synonym"),
    F(
        "Quill & Co would like a bigger discount on bulk orders.",
        "Quill & Co wants a larger discount on bulk orders",
        "synonym",
    ),
    F(
        "We employ roughly 150 people.",
        "has about 150 employees",
        "synonym",
        quote="roughly 150 people",
    ),
    F(
        "Please phone me on my mobile rather than the office line.",
        "prefers calls on mobile rather than the office line",
        "synonym",
    ),
    F(
        "Sunfield chose us over two other vendors.",
        "Sunfield selected us over two other vendors",
        "synonym",
    ),
    # --- faithful: nominalisation
    F(
        "We decided to consolidate all shipments into one weekly delivery.",
        "decision to consolidate shipments into one weekly delivery",
        "nominalisation",
        quote="one weekly delivery",
    ),
    F("I'm allergic to latex.", "has a latex allergy", "nominalisation", quote="allergic to latex"),
    F(
        "Orchard Lane prefers to pay by direct debit.",
        "Orchard Lane's preference is payment by direct debit",
        "nominalisation",
    ),
    F(
        "They plan to expand into Scandinavia in 2025.",
        "planned expansion into Scandinavia in 2025",
        "nominalisation",
        quote="expand into Scandinavia",
    ),
    F(
        "Meridian complained about late deliveries twice this month.",
        "two complaints from Meridian about late deliveries this month",
        "nominalisation",
    ),
    F(
        "I meditate for 20 minutes every evening.",
        "20-minute meditation every evening",
        "nominalisation",
    ),
    F(
        "Vantage will migrate to the new API in Q2.",
        "Vantage's migration to the new API is in Q2",
        "nominalisation",
        quote="new API in Q2",
    ),
    F(
        "We require a signed purchase order before delivery.",
        "requirement: a signed purchase order before delivery",
        "nominalisation",
    ),
    F("I retired from teaching in 2019.", "retirement from teaching in 2019", "nominalisation"),
    F(
        "Kestrel is going to renew early to lock in pricing.",
        "Kestrel's early renewal to lock in pricing",
        "nominalisation",
    ),
    F(
        "Ironbridge approved the budget for the pilot.",
        "approval of the pilot budget by Ironbridge",
        "nominalisation",
    ),
    F(
        "I'm going to relocate to Austin in June.",
        "relocation to Austin in June",
        "nominalisation",
        quote="Austin in June",
    ),
    F(
        "They installed the integration last Tuesday.",
        "installation of the integration last Tuesday",
        "nominalisation",
    ),
    F(
        "We'd like to be invoiced on the first of the month.",
        "invoicing on the first of the month",
        "nominalisation",
        quote="first of the month",
    ),
    F("I volunteer as a firefighter.", "is a volunteer firefighter", "nominalisation"),
    F(
        "Arctis asked us to deliver before the holidays.",
        "Arctis requested delivery before the holidays",
        "nominalisation",
    ),
    F(
        "Saltmarsh intends to cancel the print add-on.",
        "Saltmarsh's intention to cancel the print add-on",
        "nominalisation",
    ),
    F(
        "We measure success by reduction in churn.",
        "success is measured by churn reduction",
        "nominalisation",
    ),
    # --- faithful: negation kept
    F("Never book me on a red-eye.", "no red-eye flights", "negation_kept", quote="red-eye"),
    F("We don't do calls on Mondays.", "no calls on Mondays", "negation_kept"),
    F("I don't drink alcohol.", "does not drink alcohol", "negation_kept"),
    F(
        "Tidewater won't accept deliveries after 3pm.",
        "Tidewater does not accept deliveries after 3pm",
        "negation_kept",
        quote="after 3pm",
    ),
    F(
        "Please don't use my personal email for work stuff.",
        "do not use personal email for work matters",
        "negation_kept",
    ),
    F(
        "They aren't interested in the mobile add-on.",
        "not interested in the mobile add-on",
        "negation_kept",
    ),
    F(
        "No cardboard inserts, Sunfield's recycling can't take them.",
        "Sunfield does not want cardboard inserts",
        "negation_kept",
    ),
    F("I can't eat gluten.", "cannot eat gluten", "negation_kept", quote="gluten"),
    F(
        "Meridian has no budget for training this year.",
        "Meridian lacks a training budget this year",
        "negation_kept",
    ),
    F("I'm not a morning person.", "is not a morning person", "negation_kept"),
    F(
        "We never sign auto-renewal clauses.",
        "does not sign auto-renewal clauses",
        "negation_kept",
        quote="auto-renewal clauses",
    ),
    F("Calder hasn't picked a vendor yet.", "Calder has not yet chosen a vendor", "negation_kept"),
    F(
        "Don't send anything to the old Leeds address.",
        "do not send anything to the old Leeds address",
        "negation_kept",
    ),
    F("I don't have any siblings.", "has no siblings", "negation_kept", quote="siblings"),
    F(
        "Vantage doesn't want to be contacted during their audit in May.",
        "no contact with Vantage during their May audit",
        "negation_kept",
        quote="audit in May",
    ),
    F(
        "Ravel refuses to pay for expedited shipping.",
        "Ravel will not pay for expedited shipping",
        "negation_kept",
        quote="refuses to pay",
    ),
    F("I never check email on weekends.", "does not check email on weekends", "negation_kept"),
    F(
        "Pinecrest can't sign until the school board votes.",
        "Pinecrest cannot sign before the school board votes",
        "negation_kept",
    ),
    F(
        "Nobody at Quill uses the desktop app anymore.",
        "the desktop app is no longer used at Quill",
        "negation_kept",
        quote="desktop app",
    ),
    F(
        "I'm not comfortable flying over water, so no island trips.",
        "no island trips",
        "negation_kept",
    ),
    # --- faithful: third person (the value names the speaker)
    F(
        "I've been researching adoption agencies all week.",
        "Caroline has been researching adoption agencies",
        "third_person",
        quote="adoption agencies",
        speaker="Caroline",
    ),
    F(
        "I ran a charity race for mental health last Saturday.",
        "Melanie ran a charity race for mental health",
        "third_person",
        speaker="Melanie",
    ),
    F(
        "I lost my job at the store, so I'm starting my own dance studio.",
        "Gina is starting a dance studio",
        "third_person",
        quote="starting my own dance studio",
        speaker="Gina",
    ),
    F(
        "I took my dance crew to a competition in Boston.",
        "Jon's dance crew went to a competition in Boston",
        "third_person",
        speaker="Jon",
    ),
    F(
        "I won my first video game tournament last week!",
        "Nate won a video game tournament",
        "third_person",
        speaker="Nate",
    ),
    F(
        "I finished writing my screenplay.",
        "Joanna finished writing a screenplay",
        "third_person",
        quote="screenplay",
        speaker="Joanna",
    ),
    F(
        "I'm reading the Harry Potter books again.",
        "Tim is rereading the Harry Potter books",
        "third_person",
        speaker="Tim",
    ),
    F(
        "I was promoted to team lead at work.",
        "John was promoted to team lead",
        "third_person",
        quote="promoted to team lead",
        speaker="John",
    ),
    F(
        "I've been volunteering at the homeless shelter on Sundays.",
        "Maria volunteers at the homeless shelter on Sundays",
        "third_person",
        speaker="Maria",
    ),
    F(
        "I started a yoga class in the park with some neighbours.",
        "Deborah started a yoga class in the park",
        "third_person",
        speaker="Deborah",
    ),
    F(
        "I bought a used Prius last month.",
        "Evan bought a used Prius",
        "third_person",
        quote="used Prius",
        speaker="Evan",
    ),
    F(
        "I'm trying to cut down on soda.",
        "Sam is trying to drink less soda",
        "third_person",
        quote="cut down on soda",
        speaker="Sam",
    ),
    F(
        "My dogs and I went to the beach on Sunday.",
        "Audrey went to the beach with the dogs on Sunday",
        "third_person",
        speaker="Audrey",
    ),
    F(
        "I started a new job in finance.",
        "Andrew started a new job in finance",
        "third_person",
        speaker="Andrew",
    ),
    F(
        "We'll need the updated quote before our board meeting on the 12th.",
        "Hannah Cole needs the updated quote before the board meeting on the 12th",
        "third_person",
        quote="updated quote",
        speaker="Hannah Cole",
    ),
    F(
        "I'm the one who signs off on anything over fifty thousand.",
        "Rafael Ortiz signs off on anything over fifty thousand",
        "third_person",
        quote="signs off",
        speaker="Rafael Ortiz",
    ),
    F(
        "Our team switched from Pipedrive to your CRM in January.",
        "Mei Lin's team switched from Pipedrive to the CRM in January",
        "third_person",
        speaker="Mei Lin",
    ),
    F(
        "I'll be out of office from the 3rd to the 10th.",
        "Oskar will be out of office from the 3rd to the 10th",
        "third_person",
        quote="from the 3rd to the 10th",
        speaker="Oskar",
    ),
    F(
        "I just got back from a tour in Japan.",
        "Calvin returned from a tour in Japan",
        "third_person",
        speaker="Calvin",
    ),
    F(
        "I restored an old Mustang this summer.",
        "Dave restored an old Mustang",
        "third_person",
        speaker="Dave",
    ),
    F(
        "Honestly we only use the reporting module, nothing else.",
        "Farah Siddiqui's team only uses the reporting module",
        "third_person",
        quote="reporting module",
        speaker="Farah Siddiqui",
    ),
    F(
        "I've got a dentist appointment Thursday at 10.",
        "Lucas has a dentist appointment on Thursday at 10",
        "third_person",
        quote="Thursday at 10",
        speaker="Lucas",
    ),
    F(
        "I adopted a rescue greyhound.",
        "Ines adopted a rescue greyhound",
        "third_person",
        quote="rescue greyhound",
        speaker="Ines",
    ),
    F(
        "I prefer that we keep these check-ins to thirty minutes.",
        "Greg Palmer prefers thirty-minute check-ins",
        "third_person",
        speaker="Greg Palmer",
    ),
    F(
        "My sister is getting married in October.",
        "Yuki's sister is getting married in October",
        "third_person",
        speaker="Yuki",
    ),
    F(
        "I've been learning to make pottery at a community studio.",
        "Ben is learning pottery at a community studio",
        "third_person",
        speaker="Ben",
    ),
    F(
        "We're not going to renew the analytics add-on.",
        "Sofia Marin's company will not renew the analytics add-on",
        "third_person",
        quote="analytics add-on",
        speaker="Sofia Marin",
    ),
    F(
        "I gave a talk at a school about my transition journey.",
        "Caroline gave a talk at a school about transitioning",
        "third_person",
        speaker="Caroline",
    ),
    F(
        "I took the kids camping in the mountains.",
        "Melanie took the kids camping in the mountains",
        "third_person",
        speaker="Melanie",
    ),
    F(
        "I made coconut milk ice cream for my friends.",
        "Nate made coconut milk ice cream for friends",
        "third_person",
        speaker="Nate",
    ),
    # --- faithful: summary (some with a negation elsewhere that does not concern the value)
    F(
        "We went back and forth a lot but in the end we're going with the annual plan, billed upfront, and Ops wants the onboarding done by June.",
        "going with the annual plan, billed upfront",
        "summary",
        quote="annual plan",
    ),
    F(
        "I'm gluten-free, so skip the pasta place, but sushi would be great.",
        "is gluten-free",
        "summary",
    ),
    F(
        "Our CTO, Nadia, not the CEO, makes the final call on tooling.",
        "the CTO, Nadia, makes the final call on tooling",
        "summary",
        quote="final call on tooling",
    ),
    F(
        "Ship to our Dublin site, not Cork; Cork is just offices.",
        "ships to the Dublin site",
        "summary",
        quote="Dublin site",
    ),
    F(
        "Honestly I don't love early starts but 8am works for the Monday check-in.",
        "8am works for the Monday check-in",
        "summary",
    ),
    F(
        "My son Eli is 4, he's into trains, and he won't eat anything green.",
        "has a son named Eli",
        "summary",
        quote="My son Eli",
    ),
    F(
        "We don't have a procurement team; our COO, Beth Harlow, signs every contract.",
        "COO Beth Harlow signs every contract",
        "summary",
    ),
    F(
        "Meridian is trialling the route-optimisation module in two depots, and if it goes well they'll roll it out to all twelve.",
        "Meridian is trialling the route-optimisation module",
        "summary",
    ),
    F(
        "I live in Toronto, no car, so I bike or take the subway everywhere.",
        "lives in Toronto",
        "summary",
    ),
    F(
        "Ticket 30551, the CSV import bug, is resolved, no need to follow up.",
        "ticket 30551 is resolved",
        "summary",
        quote="30551",
    ),
    F(
        "We moved off Salesforce two years ago and we're not going back.",
        "moved off Salesforce two years ago",
        "summary",
    ),
    F(
        "I'm a software engineer by training but these days I mostly manage people.",
        "is a software engineer by training",
        "summary",
    ),
    F(
        "Orchard Lane is price-sensitive: they pushed back on the 5% uplift and asked for a freeze.",
        "Orchard Lane is price-sensitive",
        "summary",
        quote="price-sensitive",
    ),
    F(
        "Don't worry about the weekend, the main thing is that the Kestrel contract is signed for 3 years.",
        "Kestrel contract is signed for 3 years",
        "summary",
    ),
    F(
        "I have a standing tennis game on Wednesday nights, so I can't do evening calls that day.",
        "has a standing tennis game on Wednesday nights",
        "summary",
    ),
    F(
        "Our German subsidiary is the buyer here, so the invoice goes to Munich, not to us in Boston.",
        "invoice goes to Munich",
        "summary",
        quote="invoice goes to Munich",
    ),
    F(
        "Saltmarsh liked the demo but isn't ready to commit; their fiscal year starts in July and the budget comes then.",
        "Saltmarsh's fiscal year starts in July",
        "summary",
    ),
    F(
        "I used to live in Cape Town, then Nairobi, and now I'm in Accra.",
        "now lives in Accra",
        "summary",
    ),
    F(
        "Vantage has 3 decision makers: Ruth (finance), Alan (IT) and Sunil (ops), and nothing moves without all three.",
        "Vantage has 3 decision makers",
        "summary",
        quote="3 decision makers",
    ),
    F(
        "I'm pescatarian, no chicken or beef, but fish is fine.",
        "is pescatarian",
        "summary",
        quote="pescatarian",
    ),
    F(
        "Please, no cold calls to their front desk; their preferred channel is LinkedIn messages to the MD.",
        "preferred channel is LinkedIn messages to the MD",
        "summary",
    ),
    F(
        "We're on the Growth plan with 25 seats, not the Pro plan, whatever the invoice says.",
        "on the Growth plan with 25 seats",
        "summary",
        quote="Growth plan with 25 seats",
    ),
    # --- unfaithful: figure
    U(
        "Meridian runs 14 depots across the UK.",
        "Meridian runs 41 depots across the UK",
        "figure",
        quote="14 depots",
    ),
    U("We need the boxes to hold 24 jars each.", "boxes need to hold 25 jars each", "figure"),
    U("Our churn last year was 3.5%.", "churn last year was 5.3%", "figure"),
    U("I've lived here for 11 years.", "has lived here for 12 years", "figure"),
    U("Kestrel has 6 clinics.", "Kestrel has 8 clinics", "figure", quote="Kestrel has 6 clinics"),
    U("Each pallet should weigh under 800 kg.", "each pallet should weigh under 900 kg", "figure"),
    U(
        "The contract is for 36 months, with a break clause at 12.",
        "contract is for 30 months",
        "figure",
    ),
    U("I walk about 10,000 steps a day.", "walks about 1,000 steps a day", "figure"),
    U(
        "Pinecrest wants licences for 320 teachers.",
        "Pinecrest wants licences for 230 teachers",
        "figure",
        quote="320 teachers",
    ),
    U(
        "We want a 7% discount for paying upfront.",
        "wants a 17% discount for paying upfront",
        "figure",
    ),
    U("My commute is 25 minutes each way.", "commute is 35 minutes each way", "figure"),
    U("Saltmarsh has 2 admins on the account.", "Saltmarsh has 3 admins on the account", "figure"),
    U("I've got 3 turtles now.", "Nate has 2 turtles", "figure", speaker="Nate"),
    U(
        "We're targeting a 20% reduction in onboarding time.",
        "targeting a 25% reduction in onboarding time",
        "figure",
        quote="onboarding time",
    ),
    U("I can only do 45-minute meetings max.", "can only do 30-minute meetings max", "figure"),
    U(
        "Tidewater bakes about 600 loaves a day.",
        "Tidewater bakes about 6,000 loaves a day",
        "figure",
    ),
    # --- unfaithful: identifier
    U(
        "Order 77120 shipped without the packing slip.",
        "order 77210 shipped without the packing slip",
        "identifier",
        quote="Order 77120",
    ),
    U(
        "Please apply the credit to invoice 2024-1189.",
        "apply the credit to invoice 2024-1198",
        "identifier",
    ),
    U("Our customer ID is CUST-004512.", "customer ID is CUST-004521", "identifier"),
    U(
        "Restock SKU TWB-OAT-05 every week.",
        "restock SKU TWB-OAT-50 every week",
        "identifier",
        quote="every week",
    ),
    U(
        "The VAT number on file is GB 294 7781 22.",
        "VAT number on file is GB 294 7718 22",
        "identifier",
    ),
    U(
        "Ticket 40019 was escalated to tier 2.",
        "ticket 40091 was escalated to tier 2",
        "identifier",
    ),
    U(
        "Their tracking number is 1Z999AA10123456784.",
        "tracking number is 1Z999AA10123456748",
        "identifier",
        quote="tracking number",
    ),
    U(
        "Contract reference MSA-2023-017 governs the renewal.",
        "contract reference MSA-2023-071 governs the renewal",
        "identifier",
    ),
    U("I'm in seat 14C on the way back.", "in seat 14D on the way back", "identifier"),
    U(
        "My frequent flyer number is BA 55102934.",
        "frequent flyer number is BA 55102943",
        "identifier",
    ),
    U(
        "Use PO 88-4417 for the Pinecrest order.",
        "use PO 88-4471 for the Pinecrest order",
        "identifier",
        quote="Pinecrest order",
    ),
    U(
        "Ironbridge's account number with us is 600312.",
        "Ironbridge's account number is 600321",
        "identifier",
    ),
    U("The replacement part is model KX-210.", "replacement part is model KX-120", "identifier"),
    U(
        "Ticket SUP-9921 covers the duplicate charges.",
        "ticket SUP-9912 covers the duplicate charges",
        "identifier",
        quote="SUP-9921",
    ),
    U("Booking reference is QH7T2P.", "booking reference is QH7T2B", "identifier"),
    U("Return authorisation RMA-66031 is approved.", "RMA-66013 is approved", "identifier"),
    # --- unfaithful: amount
    U("Their budget caps at $75,000.", "budget caps at $57,000", "amount", quote="$75,000"),
    U(
        "We agreed on $18 per seat per month.",
        "agreed on $16 per seat per month",
        "amount",
        quote="$18 per seat",
    ),
    U("The setup fee is €2,500.", "setup fee is €2,000", "amount"),
    U("Rent is £1,450 a month.", "rent is £1,540 a month", "amount", quote="£1,450"),
    U(
        "Orchard Lane owes us $3,200 on the overdue invoice.",
        "Orchard Lane owes $2,300 on the overdue invoice",
        "amount",
    ),
    U("I'm saving $300 a month for the trip.", "saving $200 a month for the trip", "amount"),
    U(
        "Quill & Co's PO limit is $5k without VP approval.",
        "Quill & Co's PO limit is $50k without VP approval",
        "amount",
        quote="without VP approval",
    ),
    U("The renewal came in at $112,400.", "renewal came in at $114,200", "amount"),
    U("Shipping is a flat $45 per pallet.", "shipping is a flat $40 per pallet", "amount"),
    U("My gym membership is $39 a month.", "gym membership is $49 a month", "amount"),
    U(
        "They'll pay the remaining €9,800 in March.",
        "will pay the remaining €8,900 in March",
        "amount",
        quote="remaining €9,800",
    ),
    U(
        "Calder's annual contract value is $420k.",
        "Calder's annual contract value is $240k",
        "amount",
    ),
    U("I paid $8,000 for the car.", "Evan paid $6,000 for the car", "amount", speaker="Evan"),
    U("Discounted price is $1,199 per unit.", "discounted price is $1,119 per unit", "amount"),
    # --- unfaithful: date / time
    U(
        "Arctis renews on the 28th of February.",
        "Arctis renews on the 28th of January",
        "date",
        quote="28th of February",
    ),
    U("Let's do the QBR on Thursday.", "QBR on Friday", "date", quote="QBR"),
    U("My flight leaves at 7:15am.", "flight leaves at 7:15pm", "date"),
    U("The trial ends on 15 May.", "trial ends on 16 May", "date"),
    U("Payment is due by the 10th.", "payment is due by the 20th", "date"),
    U(
        "We're closed the week of December 22.",
        "closed the week of December 29",
        "date",
        quote="week of December 22",
    ),
    U(
        "I'm free after 3 on Wednesday.",
        "free after 3 on Tuesday",
        "date",
        quote="after 3 on Wednesday",
    ),
    U("Go-live is planned for Q3 2025.", "go-live planned for Q4 2025", "date"),
    U("Deliveries only between 6 and 9 am, please.", "deliveries only between 6 and 9 pm", "date"),
    U("My birthday is June 2.", "birthday is July 2", "date"),
    U(
        "The contract was signed on 3/11/2024.",
        "contract signed on 3/12/2024",
        "date",
        quote="3/11/2024",
    ),
    U("Meridian's board meets in November.", "Meridian's board meets in October", "date"),
    U(
        "I have a physio session Monday at 11.",
        "Lucas has a physio session on Monday at 1",
        "date",
        speaker="Lucas",
    ),
    U("Our fiscal year starts in April.", "fiscal year starts in August", "date"),
    U(
        "The kickoff call is at 09:30 CET.",
        "kickoff call is at 10:30 CET",
        "date",
        quote="kickoff call",
    ),
    U("I'm on vacation until the 14th.", "on vacation until the 4th", "date"),
    # --- unfaithful: email
    U(
        "Send the contract to legal@meridianfreight.co.uk.",
        "send the contract to legal@meridianfreight.com",
        "email",
    ),
    U(
        "My email is sam.okafor@gmail.com.",
        "email is samokafor@gmail.com",
        "email",
        quote="sam.okafor@gmail.com",
    ),
    U(
        "Reach Ruth at ruth.k@vantageoptics.com.",
        "Ruth's email is ruth.k@vantage-optics.com",
        "email",
    ),
    U(
        "Invoices go to ap@kestreldental.com, not the clinic inbox.",
        "invoices go to ar@kestreldental.com",
        "email",
    ),
    U(
        "Please use orders@sunfieldorganics.de for purchase orders.",
        "use order@sunfieldorganics.de for purchase orders",
        "email",
        quote="for purchase orders",
    ),
    U(
        "cc tomasz.w@raveltextiles.pl on shipping updates",
        "cc tomasz.v@raveltextiles.pl on shipping updates",
        "email",
    ),
    U(
        "My personal address is lizzie.park@outlook.com.",
        "personal email is lizzy.park@outlook.com",
        "email",
    ),
    U(
        "Support escalations go to help@quillandco.com.",
        "support escalations go to help@quillco.com",
        "email",
        quote="Support escalations",
    ),
    U(
        "Just email me at mei@arctislabs.ai.",
        "Mei Lin's email is mei@arctislabs.io",
        "email",
        speaker="Mei Lin",
    ),
    U(
        "The billing contact is finance@bluepeakhotels.com.",
        "billing contact is finance@bluepeakhotel.com",
        "email",
    ),
    # --- unfaithful: phone
    U("My cell is 617-555-0193.", "cell is 617-555-0139", "phone", quote="617-555-0193"),
    U("Call their dispatch on 0161 496 0732.", "dispatch number is 0161 496 0723", "phone"),
    U("The store number is (206) 555-0118.", "store number is (206) 555-0181", "phone"),
    U("Reach me on +49 30 901820 44.", "phone is +49 30 901820 45", "phone"),
    U(
        "Kestrel's front desk: 03 9015 7723.",
        "Kestrel's front desk is 03 9015 7732",
        "phone",
        quote="front desk",
    ),
    U("After hours, use 800-555-0166.", "after hours number is 800-555-0196", "phone"),
    U("My husband's number is 07700 900461.", "husband's number is 07700 900416", "phone"),
    U(
        "The warehouse line is +1 905 555 0144 ext. 12.",
        "warehouse line is +1 905 555 0144 ext. 21",
        "phone",
        quote="warehouse line",
    ),
    U("Text me at 312-555-0177.", "text at 312-555-0171", "phone"),
    U("Their IT helpdesk is +61 2 5550 1288.", "IT helpdesk is +61 2 5550 1228", "phone"),
    # --- unfaithful: name
    U(
        "Our champion at Arctis is Priyanka Rao.",
        "champion at Arctis is Priyanka Rai",
        "name",
        quote="champion at Arctis",
    ),
    U(
        "Talk to Bernadette in accounts payable.",
        "talk to Bernadine in accounts payable",
        "name",
        quote="Bernadette",
    ),
    U("My brother Callum is visiting next week.", "brother Colin is visiting next week", "name"),
    U("Their IT lead is Sven Magnusson.", "IT lead is Sven Magnussen", "name"),
    U(
        "We're switching from Freshdesk to your platform.",
        "switching from Zendesk to the platform",
        "name",
        quote="switching from Freshdesk",
    ),
    U(
        "Please address the contract to Dr. Amara Osei.",
        "address the contract to Dr. Amina Osei",
        "name",
    ),
    U("I'm flying Lufthansa to Frankfurt on Monday.", "flying KLM to Frankfurt on Monday", "name"),
    U(
        "My screenplay got picked up by a producer named Reid.",
        "Joanna's screenplay was picked up by a producer named Reed",
        "name",
        speaker="Joanna",
    ),
    U(
        "The decision maker at Pinecrest is superintendent Carla Nunez.",
        "decision maker at Pinecrest is superintendent Clara Nunez",
        "name",
        quote="superintendent Carla Nunez",
    ),
    U("My cat Miso hates the vacuum.", "cat Mochi hates the vacuum", "name"),
    U("Their current vendor is Brandwise.", "current vendor is Brandwave", "name"),
    U(
        "My dance studio is called Rhythm House.",
        "Gina's dance studio is called Rhythm Hall",
        "name",
        speaker="Gina",
    ),
    U(
        "Send it for the attention of Mr. Haldane.",
        "send it for the attention of Mr. Haldene",
        "name",
    ),
    U("I work for Calder Insurance.", "works for Calder Assurance", "name"),
    # --- unfaithful: negation flip
    U(
        "We don't want the onboarding package.",
        "wants the onboarding package",
        "negation_flip",
        quote="onboarding package",
    ),
    U("I'm not allergic to nuts, just sensitive to them.", "is allergic to nuts", "negation_flip"),
    U(
        "Meridian does not accept split deliveries.",
        "Meridian accepts split deliveries",
        "negation_flip",
        quote="split deliveries",
    ),
    U("I never fly economy on long-haul.", "flies economy on long-haul", "negation_flip"),
    U(
        "Tidewater is not renewing the POS integration.",
        "Tidewater is renewing the POS integration",
        "negation_flip",
    ),
    U(
        "Please do call me if the shipment is late, don't just email.",
        "prefers email rather than calls when a shipment is late",
        "negation_flip",
    ),
    U(
        "They have not signed the order form yet.",
        "has signed the order form",
        "negation_flip",
        quote="order form",
    ),
    U("I don't mind early flights.", "dislikes early flights", "negation_flip"),
    U("Kestrel isn't using the SMS reminders.", "Kestrel uses the SMS reminders", "negation_flip"),
    U("I no longer work at Ravel.", "works at Ravel", "negation_flip"),
    U(
        "I haven't had a soda in two weeks.",
        "Sam has had soda in the past two weeks",
        "negation_flip",
        speaker="Sam",
    ),
    U("Saltmarsh doesn't need SSO.", "Saltmarsh needs SSO", "negation_flip", quote="SSO"),
    U("We can't do weekend deliveries.", "can do weekend deliveries", "negation_flip"),
    U("I'm not the decision maker here, that's my boss.", "is the decision maker", "negation_flip"),
    U(
        "Vantage didn't complain about the price.",
        "Vantage complained about the price",
        "negation_flip",
    ),
    U(
        "Do not put the invoice number on the packing slip.",
        "put the invoice number on the packing slip",
        "negation_flip",
        quote="packing slip",
    ),
    # --- unfaithful: antonym
    U(
        "I prefer window seats on short flights.",
        "prefers aisle seats on short flights",
        "antonym",
        quote="window seats",
    ),
    U(
        "Calder's team works best in the afternoon.",
        "Calder's team works best in the morning",
        "antonym",
    ),
    U(
        "They want to reduce the number of licences at renewal.",
        "wants to increase the number of licences at renewal",
        "antonym",
    ),
    U("I like my meetings early in the day.", "likes meetings late in the day", "antonym"),
    U(
        "Orchard Lane's order volume went up this quarter.",
        "Orchard Lane's order volume went down this quarter",
        "antonym",
        quote="order volume",
    ),
    U(
        "Quill & Co prefers monthly invoicing over annual.",
        "Quill & Co prefers annual invoicing over monthly",
        "antonym",
    ),
    U(
        "I hate crowded restaurants.",
        "loves crowded restaurants",
        "antonym",
        quote="crowded restaurants",
    ),
    U("Ironbridge wants to expand the pilot.", "Ironbridge wants to shrink the pilot", "antonym"),
    U(
        "Use the front entrance for deliveries.",
        "use the rear entrance for deliveries",
        "antonym",
        quote="for deliveries",
    ),
    U("The upgrade made the dashboard faster.", "the upgrade made the dashboard slower", "antonym"),
    U(
        "I love performing in small venues.",
        "Calvin loves performing in large venues",
        "antonym",
        speaker="Calvin",
    ),
    U("We want to accelerate the rollout.", "wants to delay the rollout", "antonym"),
    U("I sleep better in a cold room.", "sleeps better in a warm room", "antonym"),
    U(
        "Sunfield wants heavier packaging for export.",
        "Sunfield wants lighter packaging for export",
        "antonym",
        quote="packaging for export",
    ),
    U(
        "Their satisfaction score rose after the fix.",
        "satisfaction score fell after the fix",
        "antonym",
    ),
    U("I'm an early riser.", "is a late riser", "antonym"),
    # --- unfaithful: added fact
    U(
        "We're hiring a new head of sales.",
        "hiring a new head of sales in London",
        "added_fact",
        quote="head of sales",
    ),
    U("I'm training for a triathlon.", "training for a triathlon in October", "added_fact"),
    U(
        "Meridian is looking at a competitor.",
        "Meridian is looking at a competitor, Descartes",
        "added_fact",
    ),
    U("They want to cancel.", "wants to cancel because of poor support", "added_fact"),
    U("I have a sister.", "has a sister who lives in Paris", "added_fact"),
    U(
        "Kestrel is opening another clinic.",
        "Kestrel is opening another clinic in Brighton",
        "added_fact",
        quote="another clinic",
    ),
    U("Please send the samples.", "send the samples to the Leeds office", "added_fact"),
    U(
        "I went to a gaming convention last weekend.",
        "Nate went to a gaming convention with friends last weekend",
        "added_fact",
        speaker="Nate",
    ),
    U(
        "We use your product for invoicing.",
        "uses the product for invoicing and payroll",
        "added_fact",
    ),
    U("I'm vegetarian.", "is vegetarian for ethical reasons", "added_fact"),
    U(
        "Arctis signed the renewal.",
        "Arctis signed the renewal with a 10% discount",
        "added_fact",
        quote="signed the renewal",
    ),
    U("I'm learning Spanish.", "is learning Spanish for a move to Madrid", "added_fact"),
    U(
        "Saltmarsh's CFO approved the purchase.",
        "Saltmarsh's CFO, Diane, approved the purchase",
        "added_fact",
    ),
    U(
        "I cooked dinner for the shelter residents.",
        "Maria cooked a lasagna dinner for the shelter residents",
        "added_fact",
        quote="cooked dinner",
        speaker="Maria",
    ),
    U("The shipment was delayed.", "the shipment was delayed by customs", "added_fact"),
    U("We need more seats.", "needs 20 more seats", "added_fact"),
    # --- unfaithful: unrelated
    U("Sounds good, talk soon!", "prefers video calls over phone", "unrelated"),
    U("Can you pull up the last email thread?", "has two children", "unrelated"),
    U("ok thx", "payment terms are net 45", "unrelated"),
    U("What time is it in Singapore right now?", "is based in Singapore", "unrelated"),
    U("Let me think about it and circle back.", "not interested in the upsell", "unrelated"),
    U("Could you draft a reply to Tomasz?", "Tomasz is the decision maker at Ravel", "unrelated"),
    U("Haha, that's hilarious.", "Tim enjoys fantasy novels", "unrelated", speaker="Tim"),
    U("Remind me tomorrow about this.", "customer's renewal is tomorrow", "unrelated"),
]


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------

for _name, _cases, _min in (("DEV", DEV, 120), ("TEST", TEST, 320)):
    assert len(_cases) >= _min, (_name, len(_cases))
    for _c in _cases:
        assert _c.quote == "" or _c.quote in _c.message, (_name, _c)
        assert _c.kind in (FAITHFUL_KINDS if _c.faithful else UNFAITHFUL_KINDS), (_name, _c)
        assert _c.kind != "third_person" or _c.speaker, (_name, _c)
        assert not _c.speaker or _c.speaker in _c.value, (_name, _c)
        assert _c.value.strip(), (_name, _c)
        assert _c.message.strip(), (_name, _c)
    _share = sum(c.faithful for c in _cases) / len(_cases)
    assert 0.50 <= _share <= 0.60, (_name, _share)
    _quoted = sum(bool(c.quote) for c in _cases) / len(_cases)
    assert 0.25 <= _quoted <= 0.42, (_name, _quoted)
    assert len({(c.message, c.value) for c in _cases}) == len(_cases), _name
assert sum(c.faithful and c.kind == "third_person" for c in TEST) >= 25
assert any(not c.faithful and c.speaker for c in TEST)
assert not {c.message for c in DEV} & {c.message for c in TEST}
assert not {c.value for c in DEV} & {c.value for c in TEST}


def counts(cases: list[Case]) -> Counter[tuple[bool, str]]:
    return Counter((c.faithful, c.kind) for c in cases)


if __name__ == "__main__":
    for name, cases in (("DEV", DEV), ("TEST", TEST)):
        n = len(cases)
        nf = sum(c.faithful for c in cases)
        nq = sum(bool(c.quote) for c in cases)
        ns = sum(bool(c.speaker) for c in cases)
        print(
            f"{name}: {n} cases, {nf} faithful ({nf / n:.0%}), {n - nf} unfaithful, "
            f"{nq} with a quote ({nq / n:.0%}), {ns} with a speaker"
        )
        c = counts(cases)
        for faithful, kinds in ((True, FAITHFUL_KINDS), (False, UNFAITHFUL_KINDS)):
            print(
                "  "
                + ("faithful  " if faithful else "unfaithful")
                + ": "
                + ", ".join(f"{k} {c[(faithful, k)]}" for k in kinds)
            )
