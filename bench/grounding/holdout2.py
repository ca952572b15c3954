# ruff: noqa: E501
"""Second held-out grounding set: labelled (message, memory) pairs written independently of DEV/TEST.

Customers, people and phrasings differ from corpus.py and holdout.py.  Run
`python -m bench.grounding.holdout2` to check the file and print counts by (faithful, kind).
"""

from __future__ import annotations

from collections import Counter

from bench.grounding.corpus import FAITHFUL_KINDS, UNFAITHFUL_KINDS, Case


def F(kind: str, message: str, value: str, quote: str = "", speaker: str = "") -> Case:
    return Case(message, value, quote, True, kind, speaker)


def U(kind: str, message: str, value: str, quote: str = "", speaker: str = "") -> Case:
    return Case(message, value, quote, False, kind, speaker)


HOLDOUT2: list[Case] = [
    # ------------------------------------------------------------------ faithful: verbatim
    F(
        "verbatim",
        "quick note: Brightline Packaging is our backup supplier for corrugated boxes.",
        "Brightline Packaging is our backup supplier for corrugated boxes",
        "Brightline Packaging is our backup supplier for corrugated boxes",
    ),
    F(
        "verbatim",
        "um so yeah, I walk the dog every morning before seven, like, rain or shine, it's just what we do",
        "I walk the dog every morning before seven",
    ),
    F(
        "verbatim",
        "Hi team, Dana Whitfield from Orchard Lane Bistro orders linens every second Tuesday. Thanks, Priya",
        "Dana Whitfield from Orchard Lane Bistro orders linens every second Tuesday",
        "orders linens every second Tuesday",
    ),
    F("verbatim", "my sister lives in Porto now", "My sister lives in Porto now."),
    F(
        "verbatim",
        "For the record, Keel & Marsh LLP pays invoices by bank transfer only.",
        "Keel & Marsh LLP pays invoices by bank transfer only",
        "pays invoices by bank transfer only",
    ),
    F(
        "verbatim",
        "Reminder for everyone on the events committee: the donor dinner is on Friday 14 June at the Grange Hall.",
        "The donor dinner is on Friday 14 June at the Grange Hall",
    ),
    F(
        "verbatim",
        "lol ok fine, I play bass in a covers band on weekends",
        "I play bass in a covers band on weekends",
    ),
    F(
        "verbatim",
        "Riverside Motors wants 12 demo units of the tablet kiosk.",
        "Riverside Motors wants 12 demo units of the tablet kiosk",
        "12 demo units",
    ),
    F(
        "verbatim",
        "we're on the Business Flex 40 plan with Telvio, 18 lines total",
        "We're on the Business Flex 40 plan with Telvio, 18 lines total",
    ),
    F(
        "verbatim",
        "Note to self: the tomatoes go in the raised bed by the shed.",
        "The tomatoes go in the raised bed by the shed",
    ),
    F(
        "verbatim",
        "So the thing is, uh, Marcus at Pemberton Dental wants the invoice addressed to their Leeds office, not the head office.",
        "Marcus at Pemberton Dental wants the invoice addressed to their Leeds office, not the head office",
        "addressed to their Leeds office",
    ),
    F(
        "verbatim",
        "Our training budget for Q3 is $18,500.",
        "Our training budget for Q3 is $18,500",
        "$18,500",
    ),
    F(
        "verbatim",
        "I take the 7:42 train from Woking most days.",
        "I take the 7:42 train from Woking most days",
        "7:42 train from Woking",
    ),
    F(
        "verbatim",
        "Halvorsen Agency bills us monthly, net 30.",
        "Halvorsen Agency bills us monthly, net 30",
        "net 30",
    ),
    F(
        "verbatim",
        "Order 55120 shipped yesterday via DHL, tracking to follow.",
        "Order 55120 shipped yesterday via DHL",
    ),
    F(
        "verbatim",
        "my cat Biscuit is allergic to chicken, so no chicken treats please",
        "my cat Biscuit is allergic to chicken",
        "allergic to chicken",
    ),
    F(
        "verbatim",
        "Contact for billing at Fernside Accounting is accounts@fernside-acc.co.uk.",
        "Contact for billing at Fernside Accounting is accounts@fernside-acc.co.uk",
        "accounts@fernside-acc.co.uk",
    ),
    F(
        "verbatim",
        "I volunteer at the food bank on Saturday mornings.",
        "I volunteer at the food bank on Saturday mornings",
    ),
    F(
        "verbatim",
        "Their warehouse manager's direct line is 0161 555 0392.",
        "The warehouse manager's direct line is 0161 555 0392",
        "0161 555 0392",
    ),
    F(
        "verbatim",
        "We're flying to Lisbon on 22 August for the family holiday, can't wait.",
        "flying to Lisbon on 22 August for the family holiday",
    ),
    # ------------------------------------------------------------------ faithful: inflection
    F(
        "inflection",
        "we've been using Castell Supply for napkins and table linen for years",
        "We have used Castell Supply for napkins and table linen for years",
    ),
    F(
        "inflection",
        "Both of our kids take piano lessons on Wednesdays.",
        "Both of our kids are taking piano lessons on Wednesdays",
    ),
    F(
        "inflection",
        "Novak Tools ships the drill bits in boxes of fifty.",
        "Novak Tools shipping drill bits in boxes of fifty",
        "ships the drill bits in boxes of fifty",
    ),
    F(
        "inflection",
        "I run three times a week, usually along the canal.",
        "I go running three times a week, usually along the canal",
    ),
    F(
        "inflection",
        "The reps at Dunmore Ford are asking for a demo of the lead-scoring module.",
        "The reps at Dunmore Ford asked for a demo of the lead-scoring module",
    ),
    F(
        "inflection",
        "The volunteers meet every Thursday at the church hall.",
        "The volunteers are meeting every Thursday at the church hall",
    ),
    F(
        "inflection",
        "Ashdown Consulting renewed their support contract in January.",
        "Ashdown Consulting renewed its support contract in January",
        "renewed their support contract in January",
    ),
    F(
        "inflection",
        "I'm growing chillies on the balcony this year.",
        "I grow chillies on the balcony this year",
    ),
    F(
        "inflection",
        "My mum visits us every other Sunday.",
        "My mum is visiting us every other Sunday",
    ),
    F(
        "inflection",
        "Corbel Hotels buys its hand soap in bulk.",
        "Corbel Hotels buying its hand soap in bulk",
    ),
    F(
        "inflection",
        "We're hiring two freelance copywriters for the autumn campaign.",
        "Hiring two freelance copywriters for the autumn campaign",
        "hiring two freelance copywriters",
    ),
    F(
        "inflection",
        "Our trainees struggled with the pivot-table module.",
        "Our trainees were struggling with the pivot-table module",
    ),
    F("inflection", "I listen to jazz while I cook.", "listening to jazz while cooking"),
    F(
        "inflection",
        "The accountants at Pryor & Webb want quarterly reports instead of monthly ones.",
        "The accountants at Pryor & Webb wanted quarterly reports instead of monthly ones",
        "want quarterly reports instead of monthly ones",
    ),
    F(
        "inflection",
        "Their kitchen orders fresh herbs daily.",
        "Their kitchen ordering fresh herbs daily",
    ),
    F(
        "inflection",
        "So, um, I usually bake bread on Sunday afternoons, it's kind of my thing.",
        "Usually baking bread on Sunday afternoons",
    ),
    F(
        "inflection",
        "The freelancers invoice us at the end of each month.",
        "The freelancers are invoicing us at the end of each month",
    ),
    F(
        "inflection",
        "Hi Jo, we've switched all 30 handsets to the Unlimited Pro tariff as of today.",
        "We switched all 30 handsets to the Unlimited Pro tariff",
        "switched all 30 handsets to the Unlimited Pro tariff",
    ),
    F(
        "inflection",
        "The tenors are rehearsing on Monday nights this term.",
        "The tenors rehearse on Monday nights this term",
    ),
    F(
        "inflection",
        "Bellcote Academy's instructors teach the forklift course in Spanish and English.",
        "Bellcote Academy instructors teaching the forklift course in Spanish and English",
    ),
    F(
        "inflection",
        "Thornbury Mills supplies the cotton yarn for our socks.",
        "Thornbury Mills supplying cotton yarn for our socks",
    ),
    # ------------------------------------------------------------------ faithful: reorder
    F(
        "reorder",
        "For the spring catalogue we need 500 units of the oak shelf from Lindqvist Joinery.",
        "500 units of the oak shelf from Lindqvist Joinery are needed for the spring catalogue",
    ),
    F(
        "reorder",
        "On Tuesdays I swim before work.",
        "I swim before work on Tuesdays",
        "I swim before work",
    ),
    F(
        "reorder",
        "Harrow & Co. handles our payroll, and Bexley Audit does the year-end audit.",
        "Bexley Audit does the year-end audit and Harrow & Co. handles payroll",
        "Bexley Audit does the year-end audit",
    ),
    F(
        "reorder",
        "Every December we volunteer at the shelter, me and my brother.",
        "My brother and I volunteer at the shelter every December",
    ),
    F(
        "reorder",
        "Dispatched from our Leicester plant, the gaskets reach Nordvik Marine within five days.",
        "The gaskets reach Nordvik Marine within five days, dispatched from the Leicester plant",
    ),
    F(
        "reorder",
        "Invoices go to Ruth Okafor at the Gatwick Inn, not the general manager.",
        "Not the general manager but Ruth Okafor at the Gatwick Inn receives the invoices",
        "Invoices go to Ruth Okafor",
    ),
    F(
        "reorder",
        "After dinner, my partner and I usually play chess.",
        "My partner and I usually play chess after dinner",
    ),
    F(
        "reorder",
        "Maple Street Toyota leases 14 vehicles from us on a two-year term.",
        "On a two-year term, 14 vehicles are leased from us by Maple Street Toyota",
    ),
    F(
        "reorder",
        "The roses I prune in February, the hydrangeas in March.",
        "I prune the hydrangeas in March and the roses in February",
    ),
    F(
        "reorder",
        "Our donors in Ohio prefer quarterly newsletters over monthly ones.",
        "Quarterly newsletters are preferred over monthly ones by our donors in Ohio",
        "prefer quarterly newsletters over monthly ones",
    ),
    F(
        "reorder",
        "To the Manchester office, please send the toner, and the paper to Salford.",
        "Send the paper to Salford and the toner to the Manchester office",
    ),
    F(
        "reorder",
        "We pay Studio Kettle, the design agency, a retainer of £2,400 a month.",
        "A £2,400 monthly retainer is paid to Studio Kettle, the design agency",
        "a retainer of £2,400 a month",
    ),
    F(
        "reorder",
        "My aunt in Cork, she sends us a fruit cake every Christmas, bless her.",
        "Every Christmas my aunt in Cork sends us a fruit cake",
    ),
    F(
        "reorder",
        "The first aid course, Safewell Training runs it twice a year for us.",
        "Safewell Training runs the first aid course for us twice a year",
    ),
    F(
        "reorder",
        "If the line is busy, call the backup number, which is 020 7946 0118.",
        "The backup number, 020 7946 0118, is to be called if the line is busy",
        "020 7946 0118",
    ),
    F(
        "reorder",
        "ok so the walk-in freezer, Alpine Refrigeration services it, every six months.",
        "Alpine Refrigeration services the walk-in freezer every six months",
    ),
    F(
        "reorder",
        "The guitar I practise in the evenings, the piano on weekend mornings.",
        "I practise piano on weekend mornings and guitar in the evenings",
    ),
    F(
        "reorder",
        "Mileage reimbursement for the sales team is handled by Carver Accounting.",
        "Carver Accounting handles mileage reimbursement for the sales team",
        "handled by Carver Accounting",
    ),
    F(
        "reorder",
        "By bus I get to work in forty minutes, by bike in twenty-five.",
        "I get to work in twenty-five minutes by bike and in forty by bus",
    ),
    F(
        "reorder",
        "Signed last week: the three-year fibre contract with Connexa for all four branches.",
        "The three-year fibre contract with Connexa for all four branches was signed last week",
    ),
    # ------------------------------------------------------------------ faithful: person
    F(
        "person",
        "I prefer to get quotes by email, not phone.",
        "Prefers to get quotes by email, not phone",
        "I prefer to get quotes by email",
    ),
    F("person", "I'm vegetarian, so no meat in the catering order.", "User is vegetarian"),
    F(
        "person",
        "Dear Sir or Madam, we want all invoices in euros from now on. Regards, Accounts Payable",
        "They want all invoices in euros from now on",
    ),
    F("person", "I don't drink coffee after 2pm.", "Does not drink coffee after 2pm"),
    F(
        "person",
        "My daughter starts university in September.",
        "The user's daughter starts university in September",
        "starts university in September",
    ),
    F(
        "person",
        "I coach under-11s football on Saturday mornings.",
        "Coaches under-11s football on Saturday mornings",
        "I coach under-11s football",
    ),
    F(
        "person",
        "We always reorder the disposable gloves when we're down to ten boxes.",
        "They always reorder disposable gloves when down to ten boxes",
    ),
    F(
        "person",
        "I'm allergic to penicillin, just so you know.",
        "User is allergic to penicillin",
        "allergic to penicillin",
    ),
    F(
        "person",
        "Hey, I handle the supplier contracts for our Lyon plant.",
        "Handles the supplier contracts for their Lyon plant",
    ),
    F("person", "I like my reports in PDF, landscape.", "Likes reports in PDF, landscape"),
    F(
        "person",
        "We're a 12-person law firm based in Norwich.",
        "They are a 12-person law firm based in Norwich",
        "12-person law firm based in Norwich",
    ),
    F("person", "I commute by ferry from Gosport.", "User commutes by ferry from Gosport"),
    F(
        "person",
        "My budget for the offsite is capped at $9,000.",
        "Their budget for the offsite is capped at $9,000",
        "capped at $9,000",
    ),
    F("person", "I feed the cats at 6 and 6.", "Feeds the cats at 6 and 6"),
    F(
        "person",
        "Our school buys 200 licences every August.",
        "Their school buys 200 licences every August",
        "200 licences every August",
    ),
    F(
        "person",
        "I'd rather you called me on my mobile than the office line.",
        "Would rather be called on their mobile than the office line",
    ),
    F("person", "I sing alto in the community choir.", "Sings alto in the community choir"),
    F(
        "person",
        "We're switching our 25 lines to Orbitel in May.",
        "They are switching their 25 lines to Orbitel in May",
    ),
    F(
        "person",
        "I write up my meal plan every Sunday night, otherwise the week falls apart.",
        "Writes up a meal plan every Sunday night",
    ),
    F(
        "person",
        "I manage donor relations for Coastal Kids Trust.",
        "User manages donor relations for Coastal Kids Trust",
        "donor relations for Coastal Kids Trust",
    ),
    F(
        "person",
        "Me and my wife are going to Crete for our anniversary.",
        "The user and their wife are going to Crete for their anniversary",
    ),
    F(
        "person",
        "I'm the one who signs off on all purchase orders over $5,000.",
        "Signs off on all purchase orders over $5,000",
        "purchase orders over $5,000",
    ),
    # ------------------------------------------------------------------ faithful: synonym
    F(
        "synonym",
        "Kessler Fabrication is our main supplier of aluminium extrusions.",
        "Kessler Fabrication is our primary supplier of aluminium extrusions",
        "main supplier of aluminium extrusions",
    ),
    F("synonym", "honestly I can't stand early meetings", "Dislikes early meetings"),
    F(
        "synonym",
        "The shipment from Oakridge Textiles arrived late again.",
        "The delivery from Oakridge Textiles came late again",
    ),
    F(
        "synonym",
        "right so, um, big news, we bought a new espresso machine for the café, finally, the old one was dying",
        "We purchased a new espresso machine for the café",
    ),
    F(
        "synonym",
        "Our donor base is mostly retired teachers.",
        "Our donor base consists largely of retired teachers",
        "mostly retired teachers",
    ),
    F(
        "synonym",
        "I'm starting a pottery class next month.",
        "I'm beginning a pottery class next month",
    ),
    F(
        "synonym",
        "The client wants a quick turnaround on the logo.",
        "The client wants a fast turnaround on the logo",
    ),
    F(
        "synonym",
        "Lambert Tax Advisers asked us to cancel the extra seat.",
        "Lambert Tax Advisers requested that we cancel the extra seat",
        "asked us to cancel the extra seat",
    ),
    F(
        "synonym",
        "My commute is really long since we moved.",
        "My commute has been very lengthy since we moved",
    ),
    F(
        "synonym",
        "The fryer at the Dockside Grill broke down on Friday, so they need the engineer out asap.",
        "The fryer at the Dockside Grill stopped working on Friday",
    ),
    F(
        "synonym",
        "We need a big order of cable ties before the trade show.",
        "We need a large order of cable ties before the trade show",
        "a big order of cable ties",
    ),
    F(
        "synonym",
        "The dealership wants to reduce its monthly data costs.",
        "The dealership wants to lower its monthly data costs",
    ),
    F(
        "synonym",
        "My neighbour helps me with the vegetable patch.",
        "My neighbour assists me with the vegetable patch",
    ),
    F(
        "synonym",
        "Feedback from Tuesday: the trainer was excellent but the room was too small.",
        "The trainer was outstanding but the room was too cramped",
        "the trainer was excellent but the room was too small",
    ),
    F(
        "synonym",
        "Please phone Greta before sending the contract.",
        "Call Greta before sending the contract",
    ),
    F(
        "synonym",
        "I enjoy hiking with my brother in the Peaks.",
        "Likes hiking with their brother in the Peaks",
    ),
    F(
        "synonym",
        "The agency's rates went up this year.",
        "The agency's rates increased this year",
        "rates went up",
    ),
    F("synonym", "Our puppy is very smart.", "Our puppy is very clever", "very smart"),
    F(
        "synonym",
        "Hillcrest Legal wants to end the pilot early.",
        "Hillcrest Legal wants to stop the pilot early",
    ),
    F(
        "synonym",
        "We got a huge donation from the Pell family.",
        "We received a large donation from the Pell family",
    ),
    F(
        "synonym",
        "The course materials were hard to follow.",
        "The course materials were difficult to follow",
    ),
    F(
        "synonym",
        "My friend Tomasz is moving to Gdańsk.",
        "My friend Tomasz is relocating to Gdańsk",
        "moving to Gdańsk",
    ),
    # ------------------------------------------------------------------ faithful: nominalisation
    F(
        "nominalisation",
        "We decided to expand into Scandinavia next year.",
        "Decision to expand into Scandinavia next year",
    ),
    F(
        "nominalisation",
        "Kessler delivers every Monday.",
        "Deliveries from Kessler every Monday",
        "delivers every Monday",
    ),
    F(
        "nominalisation",
        "I meditate every morning for ten minutes.",
        "Daily ten-minute morning meditation",
    ),
    F(
        "nominalisation",
        "Brookfield Catering will renew the contract in October.",
        "Contract renewal by Brookfield Catering in October",
    ),
    F(
        "nominalisation",
        "The freelancer is going to redesign our website.",
        "Website redesign by the freelancer",
        "redesign our website",
    ),
    F(
        "nominalisation",
        "The Hollis Trust pledged to donate $50,000 over five years.",
        "Pledge of $50,000 over five years from the Hollis Trust",
    ),
    F(
        "nominalisation",
        "Agenda: 1. Q3 targets 2. We need to train the new hires on the CRM 3. AOB",
        "CRM training needed for the new hires",
    ),
    F(
        "nominalisation",
        "Our shipment to Rotterdam was delayed by the strike.",
        "Delay of the Rotterdam shipment due to the strike",
        "delayed by the strike",
    ),
    F("nominalisation", "I swim on Wednesdays.", "Swimming on Wednesdays"),
    F(
        "nominalisation",
        "The Fenwick Hotel wants to cancel its linen order.",
        "Cancellation of the Fenwick Hotel's linen order requested",
    ),
    F(
        "nominalisation",
        "Grafton & Lowe audit our books each spring.",
        "Spring audit of our books by Grafton & Lowe each year",
        "audit our books each spring",
    ),
    F(
        "nominalisation",
        "We're migrating all lines to 5G by June.",
        "Migration of all lines to 5G by June",
    ),
    F(
        "nominalisation",
        "My sister and I are planning a trip to Vienna.",
        "Trip to Vienna being planned with sister",
    ),
    F(
        "nominalisation",
        "The bakery orders flour weekly from Millbrook.",
        "Weekly flour order from Millbrook for the bakery",
        "orders flour weekly from Millbrook",
    ),
    F(
        "nominalisation",
        "The dealer asked us to install chargers at both sites.",
        "Request from the dealer for charger installation at both sites",
    ),
    F(
        "nominalisation",
        "We must approve all freelancer invoices before payment.",
        "Approval of all freelancer invoices required before payment",
    ),
    F(
        "nominalisation",
        "I garden a lot in the summer.",
        "Lots of gardening in the summer",
        "I garden a lot",
    ),
    F(
        "nominalisation",
        "The students will be assessed at the end of week four.",
        "Student assessment at the end of week four",
    ),
    F(
        "nominalisation",
        "Ridgeway Motors plans to replace its phone system.",
        "Replacement of the phone system planned by Ridgeway Motors",
    ),
    F(
        "nominalisation",
        "I cook for my parents on Sundays.",
        "Sunday cooking for parents",
        "cook for my parents on Sundays",
    ),
    F(
        "nominalisation",
        "We're consolidating our three suppliers into one.",
        "Consolidation of the three suppliers into one",
    ),
    # ------------------------------------------------------------------ faithful: negation_kept
    F(
        "negation_kept",
        "We don't work with offshore freelancers.",
        "Does not use offshore freelancers",
        "don't work with offshore freelancers",
    ),
    F("negation_kept", "I never eat breakfast.", "Skips breakfast every day"),
    F(
        "negation_kept",
        "Redfern Bakery isn't interested in the loyalty add-on.",
        "Redfern Bakery has no interest in the loyalty add-on",
    ),
    F(
        "negation_kept",
        "The invoice hasn't been paid yet.",
        "The invoice is still unpaid",
        "hasn't been paid yet",
    ),
    F("negation_kept", "I'm not a fan of jazz.", "Doesn't like jazz"),
    F("negation_kept", "None of our donors want paper receipts.", "No donor wants paper receipts"),
    F(
        "negation_kept",
        "The Kia dealership didn't renew the maintenance plan.",
        "The maintenance plan was not renewed by the Kia dealership",
        "didn't renew the maintenance plan",
    ),
    F(
        "negation_kept",
        "Dear supplier team, please note that we can't take deliveries before 9am as the loading bay is locked. Regards, Marlow Inn",
        "Deliveries cannot be accepted before 9am",
    ),
    F(
        "negation_kept",
        "My dad doesn't drive anymore.",
        "My dad no longer drives",
        "doesn't drive anymore",
    ),
    F(
        "negation_kept",
        "The course isn't available online.",
        "The course is not offered online",
        "isn't available online",
    ),
    F(
        "negation_kept",
        "No one at Mercer Legal uses the mobile app.",
        "Nobody at Mercer Legal uses the mobile app",
    ),
    F("negation_kept", "I don't want any calls on Fridays.", "Wants no calls on Fridays"),
    F(
        "negation_kept",
        "The parts from Zhen Metals weren't up to spec.",
        "The parts from Zhen Metals did not meet spec",
        "weren't up to spec",
    ),
    F("negation_kept", "We haven't decided on a caterer.", "Caterer still undecided"),
    F("negation_kept", "My rabbit won't eat carrots.", "My rabbit refuses to eat carrots"),
    F(
        "negation_kept",
        "Unlimited data isn't included in the Basic 10 plan.",
        "The Basic 10 plan does not include unlimited data",
        "Unlimited data isn't included",
    ),
    F(
        "negation_kept",
        "The agency never misses a deadline.",
        "The agency always meets its deadlines",
    ),
    F(
        "negation_kept",
        "I haven't been to the gym since March.",
        "Has not gone to the gym since March",
    ),
    F(
        "negation_kept",
        "The hotel won't need extra towels this month.",
        "No extra towels needed by the hotel this month",
        "won't need extra towels this month",
    ),
    F(
        "negation_kept",
        "We're not renewing the office lease.",
        "The office lease will not be renewed",
    ),
    F(
        "negation_kept",
        "I don't volunteer at the shelter in winter.",
        "Doesn't volunteer at the shelter during winter",
    ),
    # ------------------------------------------------------------------ faithful: third_person
    F(
        "third_person",
        "I look after procurement for the Leeds plant.",
        "Priya Nair looks after procurement for the Leeds plant",
        "",
        "Priya Nair",
    ),
    F(
        "third_person",
        "I walk to work unless it's raining.",
        "Tom Becker walks to work unless it's raining",
        "walk to work unless it's raining",
        "Tom Becker",
    ),
    F(
        "third_person",
        "I'm the new donor relations lead at Harbour Light.",
        "Aisha Rahman is the new donor relations lead at Harbour Light",
        "",
        "Aisha Rahman",
    ),
    F(
        "third_person",
        "I prefer invoices as PDFs.",
        "Gareth prefers invoices as PDFs",
        "",
        "Gareth Lloyd",
    ),
    F(
        "third_person",
        "I keep bees in the back garden.",
        "Mei Chen keeps bees in the back garden",
        "keep bees in the back garden",
        "Mei Chen",
    ),
    F(
        "third_person",
        "I run the service department at Ortega Chevrolet.",
        "Luis Ortega runs the service department at Ortega Chevrolet",
        "",
        "Luis Ortega",
    ),
    F(
        "third_person",
        "I teach the Monday evening bookkeeping class.",
        "Hannah Weiss teaches the Monday evening bookkeeping class",
        "",
        "Hannah Weiss",
    ),
    F(
        "third_person",
        "um yeah so I basically order all the dry goods for the three restaurants, every Thursday",
        "Olu Adeyemi orders all the dry goods for the three restaurants every Thursday",
        "order all the dry goods for the three restaurants",
        "Olu Adeyemi",
    ),
    F(
        "third_person",
        "I'm a freelance illustrator, mostly children's books.",
        "Sofia Marino is a freelance illustrator, mostly of children's books",
        "",
        "Sofia Marino",
    ),
    F(
        "third_person",
        "I play drums in a blues band.",
        "Jack Moran plays drums in a blues band",
        "",
        "Jack Moran",
    ),
    F(
        "third_person",
        "I approve any discount above 15%.",
        "Ingrid Solberg approves any discount above 15%",
        "any discount above 15%",
        "Ingrid Solberg",
    ),
    F(
        "third_person",
        "I'm vegan and so is my wife.",
        "Rajesh Kumar and his wife are vegan",
        "",
        "Rajesh Kumar",
    ),
    F(
        "third_person",
        "I handle all the telecom contracts for our dealerships.",
        "Claire Dubois handles all the telecom contracts for their dealerships",
        "",
        "Claire Dubois",
    ),
    F(
        "third_person",
        "I volunteer as a reading mentor at Elm Street Primary.",
        "Femi Okoro volunteers as a reading mentor at Elm Street Primary",
        "reading mentor at Elm Street Primary",
        "Femi Okoro",
    ),
    F(
        "third_person",
        "I cycle to the office most days.",
        "Nadia Petrova cycles to the office most days",
        "",
        "Nadia Petrova",
    ),
    F(
        "third_person",
        "Hi both, I'm the partner responsible for IT at Hartley & Shaw, so send the renewal to me.",
        "Ben Hartley is the partner responsible for IT at Hartley & Shaw",
        "",
        "Ben Hartley",
    ),
    F(
        "third_person",
        "I grow bonsai as a hobby.",
        "Yuki Tanaka grows bonsai as a hobby",
        "grow bonsai as a hobby",
        "Yuki Tanaka",
    ),
    F(
        "third_person",
        "I book all our staff training with Apex Learning.",
        "Marta Silva books all staff training with Apex Learning",
        "",
        "Marta Silva",
    ),
    F(
        "third_person",
        "I'm taking my parents to Kerala in December.",
        "Dev Patel is taking his parents to Kerala in December",
        "",
        "Dev Patel",
    ),
    F(
        "third_person",
        "I sign off the agency's invoices before they go to finance.",
        "Erin Walsh signs off the agency's invoices before they go to finance",
        "sign off the agency's invoices",
        "Erin Walsh",
    ),
    F(
        "third_person",
        "so, uh, I have two greyhounds, both rescues, and they're the laziest dogs ever",
        "Kofi Mensah has two rescue greyhounds",
        "",
        "Kofi Mensah",
    ),
    F(
        "third_person",
        "I'm the fleet manager at Fischer Autohaus.",
        "Lena Fischer is the fleet manager at Fischer Autohaus",
        "",
        "Lena Fischer",
    ),
    F(
        "third_person",
        "I bake sourdough every weekend.",
        "Sam Whitaker bakes sourdough every weekend",
        "bake sourdough every weekend",
        "Sam Whitaker",
    ),
    F(
        "third_person",
        "I look after the grant applications for Riverbend Arts.",
        "Grace Oyelaran looks after grant applications for Riverbend Arts",
        "",
        "Grace Oyelaran",
    ),
    F(
        "third_person",
        "I order the wine for the hotel restaurant.",
        "Marco Bellini orders the wine for the hotel restaurant",
        "",
        "Marco Bellini",
    ),
    F(
        "third_person",
        "I'd like the weekly pipeline report on Monday mornings.",
        "Anna Kowalski would like the weekly pipeline report on Monday mornings",
        "weekly pipeline report on Monday mornings",
        "Anna Kowalski",
    ),
    F(
        "third_person",
        "I take the 8:15 bus into town.",
        "Pete Donnelly takes the 8:15 bus into town",
        "",
        "Pete Donnelly",
    ),
    F(
        "third_person",
        "I'm learning the cello at evening classes.",
        "Zara Hussain is learning the cello at evening classes",
        "",
        "Zara Hussain",
    ),
    F(
        "third_person",
        "I buy all the safety gear for our two factories.",
        "Henrik Larsen buys all the safety gear for their two factories",
        "all the safety gear for our two factories",
        "Henrik Larsen",
    ),
    # ------------------------------------------------------------------ faithful: summary
    F(
        "summary",
        "So, um, the thing with Brightline is, they've been late on three of the last four deliveries, and honestly, it's getting to the point where, you know, we're looking at other box suppliers.",
        "Brightline has been late on three of the last four deliveries",
        "late on three of the last four deliveries",
    ),
    F(
        "summary",
        "Morning! Quick one: the Elmwood Hotel wants 300 bath towels, 300 hand towels and 150 bath mats, all white, delivered before the 1st.",
        "The Elmwood Hotel wants towels and bath mats delivered before the 1st",
    ),
    F(
        "summary",
        "I've got a border collie called Pip, she's four, mad about frisbees and she herds the kids when they run around the garden.",
        "Has a four-year-old border collie called Pip",
    ),
    F(
        "summary",
        "Our nonprofit runs after-school tutoring in three neighbourhoods, funded mostly by small monthly donors, and we're trying to grow that base.",
        "The nonprofit runs after-school tutoring in three neighbourhoods",
        "runs after-school tutoring in three neighbourhoods",
    ),
    F(
        "summary",
        "Dear Ms Holt, further to our call, Fairbank Accountants would like to add four users to their plan from next month and move to annual billing. Kind regards, Jon",
        "Fairbank Accountants would like to add four users and move to annual billing",
    ),
    F(
        "summary",
        "well I, I kind of do the same thing every morning, right, up at six, stretch, coffee, then I check emails on the train",
        "Gets up at six every morning",
    ),
    F(
        "summary",
        "Items for Thursday: 1) confirm the Dunmore Ford demo, 2) send the revised quote to Pell Motors, 3) book the training room.",
        "Thursday tasks include sending the revised quote to Pell Motors",
        "send the revised quote to Pell Motors",
    ),
    F(
        "summary",
        "We switched from Telvio to Orbitel last month because the coverage at the warehouse was awful and the support line kept dropping calls.",
        "Switched from Telvio to Orbitel last month",
    ),
    F(
        "summary",
        "My brother Ravi is getting married in Goa in November and the whole family is flying out, which is chaos, honestly.",
        "Brother Ravi is getting married in Goa in November",
    ),
    F(
        "summary",
        "The freelance photographer we used for the spring lookbook, Alina, she was great, fast, cheap, and the client loved the shots.",
        "Used freelance photographer Alina for the spring lookbook",
        "The freelance photographer we used for the spring lookbook, Alina",
    ),
    F(
        "summary",
        "For the bootcamp, Apex Learning quoted $14,200 for 20 seats, including materials, exams and a follow-up coaching session.",
        "Apex Learning quoted $14,200 for 20 bootcamp seats",
        "$14,200 for 20 seats",
    ),
    F(
        "summary",
        "I've been growing tomatoes, courgettes, beans and a few pumpkins on the allotment, though the slugs got most of the lettuce.",
        "Grows vegetables on the allotment",
    ),
    F(
        "summary",
        "We're a family-run Italian place, 60 covers, and we go through about ten kilos of mozzarella a week.",
        "Goes through about ten kilos of mozzarella a week",
        "about ten kilos of mozzarella a week",
    ),
    F(
        "summary",
        "Hi Sam, just to confirm, Wexford & Daly have agreed to the three-year term, they want the onboarding in February, and their IT contact is Niamh.",
        "Wexford & Daly agreed to the three-year term",
    ),
    F(
        "summary",
        "Yeah so on Saturdays I'm at the animal shelter, walking dogs mostly, sometimes cleaning kennels, from nine until lunchtime.",
        "Spends Saturday mornings at the animal shelter, mostly walking dogs",
    ),
    F(
        "summary",
        "I practise piano about half an hour a day, mostly Chopin at the moment, but my teacher wants me to do more scales.",
        "Practises piano about half an hour a day",
        "about half an hour a day",
    ),
    F(
        "summary",
        "The Marlow Inn reorders cleaning supplies monthly: bleach, floor cleaner, glass spray, and bin liners.",
        "The Marlow Inn reorders cleaning supplies monthly",
    ),
    F(
        "summary",
        "Okay so Grandma's 90th is on the 12th, we're doing lunch at her favourite pub, and cousins are coming from Perth.",
        "Grandma's 90th is on the 12th",
        "Grandma's 90th is on the 12th",
    ),
    F(
        "summary",
        "Our sales team of eight uses the Business Max plan, each with 50GB, plus two tablets on data-only SIMs.",
        "The sales team uses the Business Max plan",
    ),
    F(
        "summary",
        "We manufacture hydraulic fittings, mostly for agricultural machinery, and ship about 40% of output to Germany.",
        "Manufactures hydraulic fittings, mostly for agricultural machinery",
    ),
    # ------------------------------------------------------------------ unfaithful: figure
    U(
        "figure",
        "Hiya, so for the new kitchen staff starting Monday we need 250 hairnets, the blue ones, same as last time.",
        "Needs 260 hairnets for the new kitchen staff",
        "we need 250 hairnets",
    ),
    U(
        "figure",
        "Our team has 14 field reps across the Midlands.",
        "Our team has 41 field reps across the Midlands",
        "14 field reps",
    ),
    U(
        "figure",
        "yeah I'm, um, I'm trying to keep fit, so I run 5 km every morning now, before the kids get up",
        "Runs 15 km every morning",
        "I run 5 km every morning",
    ),
    U(
        "figure",
        "The workshop holds a maximum of 24 participants.",
        "The workshop holds a maximum of 25 participants",
    ),
    U(
        "figure",
        "The dealership sold 38 used cars in April.",
        "The dealership sold 36 used cars in April",
    ),
    U("figure", "We've got 3 cats and a tortoise.", "Has 2 cats and a tortoise"),
    U(
        "figure",
        "The donor list has about 1,200 active names.",
        "The donor list has about 2,100 active names",
        "about 1,200 active names",
    ),
    U(
        "figure",
        "Kessler's lead time on brackets is 6 weeks.",
        "Kessler's lead time on brackets is 8 weeks",
    ),
    U("figure", "We're on 18 lines with Telvio.", "On 19 lines with Telvio"),
    U("figure", "I sleep about 7 hours a night.", "Sleeps about 6 hours a night"),
    U(
        "figure",
        "So, um, the Lakeside Hotel has, like, 84 rooms, and they want new kettles in every one of them.",
        "The Lakeside Hotel has 48 rooms and wants new kettles in every one",
    ),
    U(
        "figure",
        "The contract discount is 12% for orders over 500 units.",
        "The contract discount is 15% for orders over 500 units",
        "12%",
    ),
    U(
        "figure",
        "I've planted 30 tulip bulbs along the fence.",
        "Planted 300 tulip bulbs along the fence",
    ),
    U("figure", "The bootcamp runs for 10 weeks.", "The bootcamp runs for 12 weeks"),
    U(
        "figure",
        "Ashdown Consulting has 45 staff on our platform.",
        "Ashdown Consulting has 54 staff on the platform",
    ),
    U(
        "figure",
        "I've got two greyhounds, both rescues.",
        "Kofi Mensah has three greyhounds",
        "",
        "Kofi Mensah",
    ),
    # ------------------------------------------------------------------ unfaithful: identifier
    U(
        "identifier",
        "Please chase order 48213 with Novak Tools.",
        "Chase order 48231 with Novak Tools",
        "order 48213",
    ),
    U(
        "identifier",
        "Invoice INV-2024-0317 is still outstanding for Keel & Marsh.",
        "Invoice INV-2024-0371 is still outstanding for Keel & Marsh",
    ),
    U(
        "identifier",
        "Dear Priya, as requested, Corbel Hotels' account number with us is ACC-77102. Best, Finance",
        "Corbel Hotels' account number is ACC-77120",
        "ACC-77102",
    ),
    U(
        "identifier",
        "We're reordering SKU BX-4410, the small kraft boxes.",
        "Reordering SKU BX-4401, the small kraft boxes",
        "SKU BX-4410",
    ),
    U(
        "identifier",
        "The Wi-Fi issue is ticket #30952.",
        "The Wi-Fi issue is ticket #30925",
        "ticket #30952",
    ),
    U(
        "identifier",
        "PO 7781 covers the hydraulic fittings for Nordvik Marine.",
        "PO 7718 covers the hydraulic fittings for Nordvik Marine",
    ),
    U(
        "identifier",
        "The VIN on the demo car ends in 4KT92.",
        "The VIN on the demo car ends in 4KT29",
    ),
    U("identifier", "My gym membership number is GM-50318.", "Gym membership number is GM-50813"),
    U(
        "identifier",
        "um, so the case reference from the council was, uh, PL/2023/0457, for the shed extension",
        "The council case reference for the shed extension is PL/2023/0475",
        "PL/2023/0457",
    ),
    U(
        "identifier",
        "Grant application GA-1182 went to the Hollis Trust on Monday.",
        "Grant application GA-1128 went to the Hollis Trust on Monday",
    ),
    U(
        "identifier",
        "Course code XLS-201 is the advanced Excel module.",
        "Course code XLS-210 is the advanced Excel module",
    ),
    U(
        "identifier",
        "The SIM for the warehouse tablet is ICCID ending 8840.",
        "The warehouse tablet SIM ICCID ends in 8804",
    ),
    U(
        "identifier",
        "Booking reference for Crete is QZ7K4M.",
        "Booking reference for Crete is QZ7K4N",
        "QZ7K4M",
    ),
    U(
        "identifier",
        "Return authorisation RMA-60219 is for the faulty compressor.",
        "Return authorisation RMA-60291 is for the faulty compressor",
    ),
    U(
        "identifier",
        "Matter number 2024-LIT-088 is the one Hillcrest Legal is billing against.",
        "Hillcrest Legal is billing against matter number 2024-LIT-080",
    ),
    # ------------------------------------------------------------------ unfaithful: amount
    U(
        "amount",
        "Halvorsen Agency charges us $4,500 a month.",
        "Halvorsen Agency charges $4,800 a month",
        "$4,500 a month",
    ),
    U("amount", "The training quote came in at £3,250.", "The training quote came in at £3,520"),
    U(
        "amount",
        "So the annual gala, um, final tally came in, we raised $182,000, which, wow, is a record for us",
        "The annual gala raised $128,000",
        "we raised $182,000",
    ),
    U("amount", "I spend about €60 a week on groceries.", "Spends about €80 a week on groceries"),
    U(
        "amount",
        "Dunmore Ford's monthly bill is $1,140.",
        "Dunmore Ford's monthly bill is $1,410",
        "$1,140",
    ),
    U(
        "amount",
        "The linen order for the Fenwick Hotel totals £2,870.",
        "The linen order for the Fenwick Hotel totals £2,780",
    ),
    U(
        "amount",
        "We pay the freelance editor $55 an hour.",
        "Pays the freelance editor $65 an hour",
        "$55 an hour",
    ),
    U("amount", "The Pell family gave $25,000 last year.", "The Pell family gave $2,500 last year"),
    U("amount", "My phone plan is £18 a month.", "Phone plan costs £16 a month"),
    U(
        "amount",
        "Grafton & Lowe's audit fee is $9,800.",
        "Grafton & Lowe's audit fee is $9,300",
        "$9,800",
    ),
    U(
        "amount",
        "A set of winter tyres for the van was $640.",
        "Winter tyres for the van cost $460",
    ),
    U("amount", "The guitar lessons are $35 per session.", "Guitar lessons cost $45 per session"),
    U(
        "amount",
        "The per-unit price on the steel brackets is $3.15.",
        "The per-unit price on the steel brackets is $3.50",
        "$3.15",
    ),
    U(
        "amount",
        "We budgeted £1,200 for the volunteer picnic.",
        "Budgeted £2,100 for the volunteer picnic",
    ),
    # ------------------------------------------------------------------ unfaithful: date
    U(
        "date",
        "The Brookfield Catering renewal is due on 14 October.",
        "The Brookfield Catering renewal is due on 14 November",
        "14 October",
    ),
    U(
        "date",
        "Can't do Tuesday evenings, I have choir practice then, sorry!",
        "Has choir practice on Wednesday evenings",
        "I have choir practice then",
    ),
    U(
        "date",
        "The delivery window at the restaurant is 7 to 9am.",
        "The delivery window at the restaurant is 7 to 10am",
    ),
    U("date", "Our fiscal year ends on 30 June.", "Their fiscal year ends on 30 July"),
    U(
        "date",
        "The onboarding for Wexford & Daly starts on Monday 3 February.",
        "Onboarding for Wexford & Daly starts on Monday 3 March",
        "Monday 3 February",
    ),
    U("date", "I water the greenhouse at 6pm every day.", "Waters the greenhouse at 8pm every day"),
    U(
        "date",
        "The donor breakfast is on Thursday at 8:30.",
        "The donor breakfast is on Friday at 8:30",
        "Thursday at 8:30",
    ),
    U(
        "date",
        "The fibre install at Maple Street Toyota is booked for 11 March.",
        "The fibre install at Maple Street Toyota is booked for 12 March",
    ),
    U(
        "date",
        "so yeah we're off to Lisbon from the 2nd to the 9th of August",
        "Off to Lisbon from the 2nd to the 9th of September",
    ),
    U(
        "date",
        "The exam for the forklift course is on the 21st.",
        "The exam for the forklift course is on the 27th",
        "on the 21st",
    ),
    U("date", "I catch the 6:50 bus to the depot.", "Catches the 6:15 bus to the depot"),
    U(
        "date",
        "The agency's retainer renews every April.",
        "The agency's retainer renews every August",
    ),
    U(
        "date",
        "Kessler closes for summer shutdown in the first two weeks of August.",
        "Kessler closes for summer shutdown in the first two weeks of July",
    ),
    U("date", "Mum's birthday is on 9 May.", "Mum's birthday is on 19 May", "9 May"),
    U(
        "date",
        "Quarter-end close at Pryor & Webb is always the last Friday of the month.",
        "Quarter-end close at Pryor & Webb is always the last Thursday of the month",
    ),
    U(
        "date",
        "Mornings I get the 8:15 bus into town, back on the 5:40.",
        "Pete Donnelly takes the 8:45 bus into town",
        "",
        "Pete Donnelly",
    ),
    # ------------------------------------------------------------------ unfaithful: email
    U(
        "email",
        "Send the quote to lena.fischer@fischer-autohaus.de please.",
        "Send quotes to lena.fisher@fischer-autohaus.de",
        "lena.fischer@fischer-autohaus.de",
    ),
    U(
        "email",
        "My personal email is tom.becker88@gmail.com.",
        "Personal email is tom.becker89@gmail.com",
        "tom.becker88@gmail.com",
    ),
    U("email", "Invoices to ap@kesslerfab.com, not to me.", "Invoices go to ap@kesslerfabs.com"),
    U(
        "email",
        "The donor's email is r.pell@pellfamily.org.",
        "The donor's email is r.pell@pellfamily.com",
    ),
    U(
        "email",
        "For bookings, use events@marlowinn.co.uk.",
        "For bookings, use events@marlow-inn.co.uk",
        "events@marlowinn.co.uk",
    ),
    U(
        "email",
        "Contacts for the lookbook — photographer: Alina; illustrator: Sofia, sofia@marinoillustration.com; copy: Jodie.",
        "Sofia's email is sofia@marinoilustration.com",
        "sofia@marinoillustration.com",
    ),
    U(
        "email",
        "Please cc billing@hillcrestlegal.com on every invoice.",
        "CC billing@hillcrest-legal.com on every invoice",
    ),
    U(
        "email",
        "Use orders@dockside-grill.com for supply orders.",
        "Use order@dockside-grill.com for supply orders",
        "orders@dockside-grill.com",
    ),
    U(
        "email",
        "Contact for the grant is grants@riverbendarts.org.",
        "Contact for the grant is grant@riverbendarts.org",
    ),
    U(
        "email",
        "My new work email is d.patel@northgate-eng.com.",
        "New work email is d.patal@northgate-eng.com",
    ),
    U(
        "email",
        "The IT contact at Wexford & Daly is niamh.ryan@wexforddaly.ie.",
        "The IT contact at Wexford & Daly is niamh.ryan@wexforddaly.com",
        "niamh.ryan@wexforddaly.ie",
    ),
    U(
        "email",
        "Send the rota to volunteers@elmstreetfoodbank.org.",
        "Send the rota to volunteer@elmstreetfoodbank.org",
    ),
    U(
        "email",
        "The agency's project lead is kai@studiokettle.co.",
        "The agency's project lead is kai@studiokettle.com",
    ),
    # ------------------------------------------------------------------ unfaithful: phone
    U(
        "phone",
        "Call me on 07700 900461 after five.",
        "Call on 07700 900416 after five",
        "07700 900461",
    ),
    U(
        "phone",
        "The warehouse direct line is 0161 555 0392.",
        "The warehouse direct line is 0161 555 0329",
        "0161 555 0392",
    ),
    U(
        "phone",
        "Riverside Motors' service desk: (614) 555-0187.",
        "Riverside Motors service desk is (614) 555-0178",
    ),
    U("phone", "My vet's number is 01632 960 215.", "Vet's number is 01632 960 251"),
    U(
        "phone",
        "The hotel's night manager is on +44 20 7946 0831.",
        "The hotel's night manager is on +44 20 7946 0813",
        "+44 20 7946 0831",
    ),
    U(
        "phone",
        "The training coordinator's mobile is 0412 555 078.",
        "The training coordinator's mobile is 0412 555 087",
    ),
    U(
        "phone",
        "Hi, for anything urgent please reach the Pryor & Webb front desk at 312-555-0144 rather than my mobile. Thanks, Dana",
        "Pryor & Webb front desk is 312-555-0141",
    ),
    U(
        "phone",
        "um, my sister's new number is, uh, 07700 900 732, can you save that",
        "Sister's new number is 07700 900 723",
    ),
    U(
        "phone",
        "For outages, Connexa support is 0800 555 0199.",
        "For outages, Connexa support is 0800 555 0198",
        "0800 555 0199",
    ),
    U(
        "phone",
        "The food bank's coordinator can be reached on 555-0163.",
        "The food bank coordinator is on 555-0136",
    ),
    U(
        "phone",
        "Luis's direct number at the dealership is 614-555-0122.",
        "Luis's direct number at the dealership is 614-555-0112",
    ),
    U("phone", "Book the table on 020 7946 0555.", "Book tables on 020 7946 0565"),
    U(
        "phone",
        "Kessler's after-hours line is 937-555-0170.",
        "Kessler's after-hours line is 937-555-0107",
        "937-555-0170",
    ),
    # ------------------------------------------------------------------ unfaithful: name
    U(
        "name",
        "Our contact at Oakridge Textiles is Helen Marsh.",
        "Our contact at Oakridge Textiles is Helen Walsh",
        "Helen Marsh",
    ),
    U("name", "My brother Tomasz is visiting next week.", "Brother Tomas is visiting next week"),
    U(
        "name",
        "Brackets? We buy those from Kessler Fabrication, always have.",
        "Buys brackets from Keller Fabrication",
        "Kessler Fabrication",
    ),
    U(
        "name",
        "The freelance copywriter we hired is Jodie Kerr.",
        "The freelance copywriter hired is Josie Kerr",
    ),
    U("name", "Grayson Legal signed the renewal.", "Grayling Legal signed the renewal"),
    U("name", "Our dog is called Pip.", "The dog is called Kip"),
    U(
        "name",
        "The donor who pledged the matching gift is Margaret Hollis.",
        "The donor who pledged the matching gift is Margaret Hollins",
        "Margaret Hollis",
    ),
    U(
        "name",
        "Talk to Raj in accounts about the refund.",
        "Talk to Ravi in accounts about the refund",
        "Raj in accounts",
    ),
    U(
        "name",
        "The Excel trainer from Apex Learning was Dominic.",
        "The Excel trainer from Apex Learning was Derek",
    ),
    U("name", "We're switching from Telvio to Orbitel.", "Switching from Orbitel to Telvio"),
    U("name", "My piano teacher is Mrs Adebayo.", "Piano teacher is Mrs Adeyemi"),
    U(
        "name",
        "The restaurant's head chef, Paolo, signs for deliveries.",
        "The restaurant's head chef, Paulo, signs for deliveries",
    ),
    U(
        "name",
        "Invoices at Hartley & Shaw go to Ben Hartley.",
        "Invoices at Hartley & Shaw go to Ben Shaw",
        "Ben Hartley",
    ),
    U("name", "We're going to Vienna with my cousin Elise.", "Going to Vienna with cousin Eliza"),
    U(
        "name",
        "I cycle to the office most days, even in winter.",
        "Nadia Ivanova cycles to the office most days",
        "",
        "Nadia Petrova",
    ),
    # ------------------------------------------------------------------ unfaithful: negation_flip
    U(
        "negation_flip",
        "We don't need the extended warranty on the fryers.",
        "We need the extended warranty on the fryers",
        "don't need the extended warranty",
    ),
    U(
        "negation_flip",
        "ugh, no, I'm not going to the conference this year, too much on with the house move",
        "Is going to the conference this year",
        "I'm not going to the conference this year",
    ),
    U(
        "negation_flip",
        "Fairbank Accountants want to move to annual billing.",
        "Fairbank Accountants do not want to move to annual billing",
    ),
    U(
        "negation_flip",
        "The donor asked not to be named in the report.",
        "The donor asked to be named in the report",
    ),
    U("negation_flip", "I don't eat pork.", "Eats pork"),
    U(
        "negation_flip",
        "The dealership hasn't signed the fleet agreement yet.",
        "The dealership has signed the fleet agreement",
        "hasn't signed the fleet agreement",
    ),
    U("negation_flip", "Our Lyon plant is not ISO certified.", "Our Lyon plant is ISO certified"),
    U(
        "negation_flip",
        "The course includes the certification exam.",
        "The course does not include the certification exam",
        "includes the certification exam",
    ),
    U(
        "negation_flip",
        "um, so, no, we're not renewing with Halvorsen, the, uh, the retainer's just too much",
        "Renewing with Halvorsen",
    ),
    U("negation_flip", "My cat doesn't go outside.", "My cat goes outside"),
    U(
        "negation_flip",
        "The Basic 10 plan includes EU roaming.",
        "The Basic 10 plan does not include EU roaming",
    ),
    U(
        "negation_flip",
        "I can make the Saturday volunteer shift.",
        "Can't make the Saturday volunteer shift",
    ),
    U(
        "negation_flip",
        "Keel & Marsh LLP doesn't accept card payments.",
        "Keel & Marsh LLP accepts card payments",
        "doesn't accept card payments",
    ),
    U(
        "negation_flip",
        "The freelancer is available in July.",
        "The freelancer is not available in July",
    ),
    U(
        "negation_flip",
        "We never order from Zhen Metals any more.",
        "We still order from Zhen Metals",
    ),
    U(
        "negation_flip",
        "I don't drive to work, I get the train.",
        "Tom Becker drives to work",
        "",
        "Tom Becker",
    ),
    # ------------------------------------------------------------------ unfaithful: antonym
    U(
        "antonym",
        "The new supplier's quality is better than Kessler's.",
        "The new supplier's quality is worse than Kessler's",
    ),
    U(
        "antonym",
        "For scheduling: I prefer early morning meetings, before the school run gets going.",
        "Prefers late morning meetings",
        "early morning meetings",
    ),
    U(
        "antonym",
        "The donor increased their monthly gift.",
        "The donor decreased their monthly gift",
    ),
    U(
        "antonym",
        "The restaurant wants larger napkins.",
        "The restaurant wants smaller napkins",
        "larger napkins",
    ),
    U(
        "antonym",
        "Quick debrief from the Bellcote cohort — the trainees found the course easy, maybe too easy, and asked for more advanced material.",
        "The trainees found the course hard",
        "the trainees found the course easy",
    ),
    U(
        "antonym",
        "Sales at Maple Street Toyota are up this quarter.",
        "Sales at Maple Street Toyota are down this quarter",
    ),
    U("antonym", "My commute got shorter after the move.", "Commute got longer after the move"),
    U(
        "antonym",
        "The agency wants to expand the scope of the project.",
        "The agency wants to reduce the scope of the project",
    ),
    U("antonym", "I love gardening in the rain.", "Hates gardening in the rain"),
    U(
        "antonym",
        "Hillcrest Legal accepted our proposal.",
        "Hillcrest Legal rejected our proposal",
        "accepted our proposal",
    ),
    U("antonym", "Our data usage is lower than last year.", "Data usage is higher than last year"),
    U(
        "antonym",
        "The puppy is very calm around other dogs.",
        "The puppy is very anxious around other dogs",
    ),
    U("antonym", "We're opening a second branch in Hull.", "We're closing a second branch in Hull"),
    U(
        "antonym",
        "The hotel wants the deliveries earlier in the day.",
        "The hotel wants deliveries later in the day",
    ),
    U(
        "antonym",
        "Any discount above 15% needs my approval, nobody else's.",
        "Ingrid Solberg rejects any discount above 15%",
        "",
        "Ingrid Solberg",
    ),
    # ------------------------------------------------------------------ unfaithful: added_fact
    U(
        "added_fact",
        "We buy our steel brackets from Kessler Fabrication.",
        "We buy our steel brackets from Kessler Fabrication in Ohio",
    ),
    U("added_fact", "I walk the dog every morning.", "Walks the dog every morning in the park"),
    U(
        "added_fact",
        "The Marlow Inn wants new kettles for every room.",
        "The Marlow Inn wants new stainless-steel kettles for every room",
    ),
    U(
        "added_fact",
        "Fairbank Accountants are adding four users.",
        "Fairbank Accountants are adding four users because they are expanding",
    ),
    U(
        "added_fact",
        "My sister is moving to Porto.",
        "Sister is moving to Porto for a new job",
        "moving to Porto",
    ),
    U(
        "added_fact",
        "The donor gala is on Friday 14 June.",
        "The donor gala is on Friday 14 June at the Grange Hall",
    ),
    U(
        "added_fact",
        "We switched our lines to Orbitel.",
        "Switched lines to Orbitel to save money",
        "switched our lines to Orbitel",
    ),
    U(
        "added_fact",
        "The freelance designer is redoing our logo.",
        "The freelance designer is redoing our logo and website",
    ),
    U(
        "added_fact",
        "I play guitar, badly, but I enjoy it.",
        "Plays guitar in a jazz band",
        "I play guitar",
    ),
    U(
        "added_fact",
        "Dunmore Ford wants a demo of the lead-scoring module.",
        "Dunmore Ford wants a demo of the lead-scoring module next Tuesday",
        "a demo of the lead-scoring module",
    ),
    U(
        "added_fact",
        "We need hairnets for the new kitchen staff.",
        "Needs 200 hairnets for the new kitchen staff",
    ),
    U(
        "added_fact",
        "My parents are coming for Christmas.",
        "Parents are coming for Christmas and staying two weeks",
    ),
    U(
        "added_fact",
        "Apex Learning runs our first aid course.",
        "Apex Learning runs our first aid course online",
        "runs our first aid course",
    ),
    U("added_fact", "I volunteer at the food bank.", "Volunteers at the food bank on Saturdays"),
    U(
        "added_fact",
        "Pryor & Webb want quarterly reports.",
        "Pryor & Webb want quarterly reports in Excel format",
    ),
    U(
        "added_fact",
        "I keep two hives in the back garden.",
        "Mei Chen keeps two hives in the back garden and sells the honey",
        "",
        "Mei Chen",
    ),
    # ------------------------------------------------------------------ unfaithful: unrelated
    U(
        "unrelated",
        "We buy brackets from Kessler Fabrication.",
        "Prefers vegetarian catering at events",
    ),
    U(
        "unrelated",
        "Can you remind me about the dentist tomorrow?",
        "The company uses Salesforce for its CRM",
    ),
    U(
        "unrelated",
        "Thanks, that's all for today!",
        "Customer is interested in upgrading to the premium tier",
    ),
    U(
        "unrelated",
        "um, yeah, the weather's been awful, hasn't it, anyway",
        "Has a golden retriever named Max",
    ),
    U(
        "unrelated",
        "The Marlow Inn reorders cleaning supplies monthly.",
        "Budget for Q3 marketing is $40,000",
    ),
    U(
        "unrelated",
        "Please send me the latest price list.",
        "Lives in Manchester with two children",
    ),
    U("unrelated", "I'm going to grab lunch, back in 20.", "Plays tennis every Wednesday"),
    U("unrelated", "Can we move our call to 3pm?", "Is allergic to shellfish"),
    U(
        "unrelated",
        "The demo went well, they liked the dashboards.",
        "The user's favourite band is Radiohead",
        "they liked the dashboards",
    ),
    U(
        "unrelated",
        "Hi! Hope you had a nice weekend.",
        "Works in procurement at a steel manufacturer",
    ),
    U(
        "unrelated",
        "Let me check with my manager and get back to you.",
        "The nonprofit's annual gala raised $120,000",
    ),
    U("unrelated", "ok sounds good", "Prefers to be contacted by text message", "sounds good"),
    U(
        "unrelated",
        "What's the difference between the two plans?",
        "Has a daughter starting university in September",
    ),
]


# ---------------------------------------------------------------------- checks
for _c in HOLDOUT2:
    assert not _c.quote or _c.quote in _c.message, (_c.message, _c.quote)
    assert _c.kind in (FAITHFUL_KINDS if _c.faithful else UNFAITHFUL_KINDS), _c
assert len(HOLDOUT2) >= 340, len(HOLDOUT2)
assert len({(c.message, c.value) for c in HOLDOUT2}) == len(HOLDOUT2), "duplicate (message, value)"


if __name__ == "__main__":
    counts = Counter((c.faithful, c.kind) for c in HOLDOUT2)
    for (faithful, kind), n in sorted(counts.items(), key=lambda kv: (not kv[0][0], kv[0][1])):
        print(f"{'faithful' if faithful else 'unfaithful':10} {kind:15} {n}")
    n_f = sum(c.faithful for c in HOLDOUT2)
    n_q = sum(bool(c.quote) for c in HOLDOUT2)
    n_s = sum(bool(c.speaker) for c in HOLDOUT2)
    print(
        f"total {len(HOLDOUT2)}: faithful {n_f}, unfaithful {len(HOLDOUT2) - n_f}, with quote {n_q}, with speaker {n_s}"
    )
