# ruff: noqa: E501  (a table of labelled cases, one a line)
"""HOLDOUT4: a fifth set of labelled grounding cases, written apart from the rule.

Written without reading the rule (memory_service/memories/domain/grounding.py, wording.py,
lexicon.py), its documentation or the earlier holdout sets; only `Case` and the kinds come from
corpus.py. New customers, people, products, cities and phrasings: about 60 % a sales/CRM assistant
(accounts, deals, procurement, logistics, support tickets, billing, renewals, meetings, contacts'
preferences) and 40 % everyday personal conversation.

Each case is a user's message, the memory an extractor wrote from it (`value`, and `quote`, ""
or an exact substring of the message) and whether a demanding human would call the value
faithful to the message.  `speaker` is the display name of who said the message, set when the
value names them.

Run `PYTHONPATH=. python -m bench.grounding.holdout4` to check the file and print counts by
(faithful, kind).
"""

from __future__ import annotations

from collections import Counter

from bench.grounding.corpus import DEV, FAITHFUL_KINDS, TEST, UNFAITHFUL_KINDS, Case, F, U

HOLDOUT4: list[Case] = [
    # --- faithful: verbatim
    F(
        "Tallbrook's fiscal year starts in October.",
        "Tallbrook's fiscal year starts in October",
        "verbatim",
        quote="fiscal year starts in October",
    ),
    F(
        "Quick one: the ticket for the sync outage is SUP-40217.",
        "the ticket for the sync outage is SUP-40217",
        "verbatim",
        quote="SUP-40217",
    ),
    F(
        "Mirabel Foods wants all invoices in euros.",
        "Mirabel Foods wants all invoices in euros",
        "verbatim",
    ),
    F(
        "Ok, so their procurement contact is Hanne Kjeldsen, she signs anything over the threshold.",
        "their procurement contact is Hanne Kjeldsen",
        "verbatim",
        quote="procurement contact is Hanne Kjeldsen",
    ),
    F(
        "Please send the quote to orders@vesterlundmarine.no by Friday.",
        "send the quote to orders@vesterlundmarine.no",
        "verbatim",
        quote="orders@vesterlundmarine.no",
    ),
    F(
        "Their warehouse in Gdansk receives deliveries only on weekdays.",
        "warehouse in Gdansk receives deliveries only on weekdays",
        "verbatim",
    ),
    F(
        "The renewal is for 140 seats on the Harbor plan.",
        "renewal is for 140 seats on the Harbor plan",
        "verbatim",
        quote="140 seats",
    ),
    F(
        "Hmm, Odile prefers a call over email for anything urgent.",
        "Odile prefers a call over email for anything urgent",
        "verbatim",
    ),
    F(
        "Kestrel Analytics pays net 45.",
        "Kestrel Analytics pays net 45",
        "verbatim",
        quote="net 45",
    ),
    F(
        "Their main office number is +44 113 496 0721, ask for reception.",
        "main office number is +44 113 496 0721",
        "verbatim",
        quote="+44 113 496 0721",
    ),
    F(
        "Right, the pilot runs until the end of June.",
        "the pilot runs until the end of June",
        "verbatim",
    ),
    F(
        "Corvid Security is on the Sentinel tier.",
        "Corvid Security is on the Sentinel tier",
        "verbatim",
    ),
    F(
        "Just so you know, the account number is ACC-7731-QH.",
        "the account number is ACC-7731-QH",
        "verbatim",
        quote="ACC-7731-QH",
    ),
    F(
        "I'm lactose intolerant, so no creamy sauces please.",
        "I'm lactose intolerant",
        "verbatim",
        quote="lactose intolerant",
    ),
    F("My sister lives in Porto.", "sister lives in Porto", "verbatim"),
    F(
        "We're flying out on the 3rd of August.",
        "flying out on the 3rd of August",
        "verbatim",
        quote="3rd of August",
    ),
    F("My daughter's name is Ottavia.", "daughter's name is Ottavia", "verbatim"),
    F(
        "lol ok, my favourite band is still Radiohead.",
        "favourite band is still Radiohead",
        "verbatim",
    ),
    F(
        "I play five-a-side football on Wednesdays.",
        "play five-a-side football on Wednesdays",
        "verbatim",
        quote="five-a-side football",
    ),
    F(
        "My dentist appointment is at 8:30 on Monday.",
        "dentist appointment is at 8:30 on Monday",
        "verbatim",
    ),
    F(
        "Our landlord is raising the rent in January.",
        "landlord is raising the rent in January",
        "verbatim",
        quote="raising the rent",
    ),
    F("I keep two beehives at my allotment.", "keep two beehives at my allotment", "verbatim"),
    # --- faithful: inflection
    F(
        "We're consolidating our shipments through Rotterdam.",
        "consolidates shipments through Rotterdam",
        "inflection",
        quote="through Rotterdam",
    ),
    F(
        "They've renewed with us every year since 2019.",
        "renewed every year since 2019",
        "inflection",
    ),
    F(
        "Prairie Loom is piloting the Relay connector.",
        "Prairie Loom piloting the Relay connector",
        "inflection",
        quote="Relay connector",
    ),
    F(
        "I'm handling the Ridgeway account until Ravi gets back.",
        "handles the Ridgeway account until Ravi gets back",
        "inflection",
    ),
    F(
        "Their buyers approve purchase orders on Tuesdays.",
        "buyers approving purchase orders on Tuesdays",
        "inflection",
    ),
    F(
        "We need every crate photographed before dispatch.",
        "needs every crate photographed before dispatch",
        "inflection",
        quote="photographed before dispatch",
    ),
    F(
        "Ngozi manages the vendor onboarding at Halcyon Hotels.",
        "Ngozi managing vendor onboarding at Halcyon Hotels",
        "inflection",
    ),
    F(
        "We're moving our support tickets to the new portal.",
        "moving support tickets to the new portal",
        "inflection",
        quote="new portal",
    ),
    F("They bill their franchisees monthly.", "franchisees billed monthly", "inflection"),
    F(
        "I always cc Sigrid on pricing emails.",
        "always ccs Sigrid on pricing emails",
        "inflection",
        quote="cc Sigrid",
    ),
    F(
        "Juniper Freight's drivers scan every pallet at pickup.",
        "Juniper Freight's drivers scanning every pallet at pickup",
        "inflection",
    ),
    F("Their legal team reviews every NDA.", "legal team reviewing every NDA", "inflection"),
    F(
        "We're hiring two account managers this spring.",
        "hiring two account managers this spring",
        "inflection",
        quote="two account managers",
    ),
    F(
        "I cycle to the studio most mornings.",
        "cycles to the studio most mornings",
        "inflection",
        quote="cycle to the studio",
    ),
    F(
        "I've been learning Portuguese on my lunch breaks.",
        "learning Portuguese on lunch breaks",
        "inflection",
    ),
    F(
        "My kids swim at the leisure centre on Saturdays.",
        "kids swimming at the leisure centre on Saturdays",
        "inflection",
    ),
    F(
        "I bake rye bread on Sunday afternoons.",
        "bakes rye bread on Sunday afternoons",
        "inflection",
        quote="rye bread",
    ),
    F(
        "We're renovating the kitchen this summer.",
        "renovating the kitchen this summer",
        "inflection",
    ),
    F(
        "I volunteer at the food bank twice a month.",
        "volunteers at the food bank twice a month",
        "inflection",
        quote="food bank",
    ),
    F(
        "I meditate for ten minutes after waking up.",
        "meditates for ten minutes after waking up",
        "inflection",
    ),
    F("I write poetry in the evenings.", "writes poetry in the evenings", "inflection"),
    F(
        "We're fostering two kittens for the shelter.",
        "fosters two kittens for the shelter",
        "inflection",
        quote="two kittens",
    ),
    # --- faithful: reorder
    F(
        "On Thursdays, Bramwell & Sons closes their loading dock early.",
        "Bramwell & Sons closes their loading dock early on Thursdays",
        "reorder",
        quote="closes their loading dock early",
    ),
    F(
        "For anything about billing, talk to Emeka Obi.",
        "talk to Emeka Obi for anything about billing",
        "reorder",
    ),
    F(
        "Every quarter, Solvang Textiles reorders the dye kits.",
        "Solvang Textiles reorders the dye kits every quarter",
        "reorder",
        quote="reorders the dye kits",
    ),
    F(
        "In Ghent they use a different freight forwarder.",
        "they use a different freight forwarder in Ghent",
        "reorder",
    ),
    F(
        "Before signing, their CFO wants a security review.",
        "their CFO wants a security review before signing",
        "reorder",
        quote="security review",
    ),
    F(
        "After the merger, Norrvik Paper moved procurement to Stockholm.",
        "Norrvik Paper moved procurement to Stockholm after the merger",
        "reorder",
    ),
    F(
        "Through their distributor in Bilbao, Altamira Ceramics buys the glazes.",
        "Altamira Ceramics buys the glazes through their distributor in Bilbao",
        "reorder",
    ),
    F(
        "At the kickoff, Yusuf asked for weekly status reports.",
        "Yusuf asked for weekly status reports at the kickoff",
        "reorder",
        quote="weekly status reports",
    ),
    F(
        "Pellucid Labs and Ferrowave both use the Pulse dashboards.",
        "both Ferrowave and Pellucid Labs use the Pulse dashboards",
        "reorder",
    ),
    F(
        "By the end of May, Greywater Brewing wants the cold-chain sensors installed.",
        "Greywater Brewing wants the cold-chain sensors installed by the end of May",
        "reorder",
        quote="cold-chain sensors",
    ),
    F(
        "For onsite visits, Marlow Print needs 48 hours' notice.",
        "Marlow Print needs 48 hours' notice for onsite visits",
        "reorder",
    ),
    F(
        "Twice a year, Thornbury Schools runs a budget review.",
        "Thornbury Schools runs a budget review twice a year",
        "reorder",
        quote="budget review",
    ),
    F(
        "Monday mornings are when Beatriz does her pipeline review.",
        "Beatriz does her pipeline review on Monday mornings",
        "reorder",
    ),
    F("On Sundays I call my grandmother.", "I call my grandmother on Sundays", "reorder"),
    F(
        "Every summer we rent a cabin near Lake Bled.",
        "we rent a cabin near Lake Bled every summer",
        "reorder",
        quote="rent a cabin near Lake Bled",
    ),
    F(
        "After dinner, my son practises the cello.",
        "my son practises the cello after dinner",
        "reorder",
    ),
    F(
        "In the mornings I'm useless without coffee.",
        "useless without coffee in the mornings",
        "reorder",
        quote="useless without coffee",
    ),
    F(
        "For my birthday, my brother got me a telescope.",
        "my brother got me a telescope for my birthday",
        "reorder",
    ),
    F("Tea and toast is what I have for breakfast.", "has tea and toast for breakfast", "reorder"),
    F(
        "Since March, I've been going to a climbing gym.",
        "going to a climbing gym since March",
        "reorder",
        quote="climbing gym",
    ),
    F(
        "Spicy food and long queues are the two things I can't stand.",
        "can't stand long queues and spicy food",
        "reorder",
    ),
    F(
        "Near the station there's a bakery I love.",
        "loves a bakery near the station",
        "reorder",
        quote="a bakery I love",
    ),
    # --- faithful: person
    F(
        "I manage the Quendra Health account.",
        "The user manages the Quendra Health account.",
        "person",
        quote="Quendra Health account",
    ),
    F("My quota this year is 1.2 million.", "The user's quota this year is 1.2 million.", "person"),
    F(
        "I prefer demos in the afternoon, my mornings are packed.",
        "User prefers demos in the afternoon.",
        "person",
        quote="prefer demos in the afternoon",
    ),
    F(
        "We're the regional distributor for Tessaly Cosmetics.",
        "The user's company is the regional distributor for Tessaly Cosmetics.",
        "person",
    ),
    F(
        "My manager is Harriet Coombs.",
        "user's manager is Harriet Coombs",
        "person",
        quote="Harriet Coombs",
    ),
    F(
        "I cover the Nordics and the Baltics.",
        "the user covers the Nordics and the Baltics",
        "person",
    ),
    F(
        "I need the pricing sheet before my call with Ferrowave.",
        "the user needs the pricing sheet before the call with Ferrowave",
        "person",
        quote="pricing sheet",
    ),
    F("My territory includes Calgary now.", "the user's territory includes Calgary now", "person"),
    F(
        "I'm on call for escalations this week.",
        "the user is on call for escalations this week",
        "person",
        quote="on call for escalations",
    ),
    F(
        "I report to the VP of Sales in Dublin.",
        "User reports to the VP of Sales in Dublin.",
        "person",
    ),
    F(
        "We sell mostly to dental clinics.",
        "The user's company sells mostly to dental clinics.",
        "person",
    ),
    F(
        "My commission is paid quarterly.",
        "user's commission is paid quarterly",
        "person",
        quote="paid quarterly",
    ),
    F(
        "I'll be the point of contact for Oakhaven Dental from now on.",
        "The user will be the point of contact for Oakhaven Dental.",
        "person",
    ),
    F("I'm a night owl.", "The user is a night owl.", "person"),
    F(
        "My wife is a paramedic.",
        "user's wife is a paramedic",
        "person",
        quote="wife is a paramedic",
    ),
    F("I grew up in Valparaiso.", "The user grew up in Valparaiso.", "person", quote="Valparaiso"),
    F(
        "My favourite dish is mushroom risotto.",
        "The user's favourite dish is mushroom risotto.",
        "person",
    ),
    F(
        "I'm training for a half marathon.",
        "the user is training for a half marathon",
        "person",
        quote="half marathon",
    ),
    F("I have two brothers and no sisters.", "the user has two brothers and no sisters", "person"),
    F(
        "We live in a flat above a bookshop.",
        "the user lives in a flat above a bookshop",
        "person",
        quote="above a bookshop",
    ),
    F("I hate driving at night.", "The user hates driving at night.", "person"),
    F(
        "My allergist says I should carry an EpiPen.",
        "the user's allergist says the user should carry an EpiPen",
        "person",
        quote="carry an EpiPen",
    ),
    # --- faithful: synonym
    F(
        "Lumen Orchard wants to buy another 30 licences.",
        "Lumen Orchard wants to purchase another 30 licences",
        "synonym",
        quote="another 30 licences",
    ),
    F(
        "Their CTO is quite worried about data residency.",
        "CTO is concerned about data residency",
        "synonym",
    ),
    F("The shipment to Tucson was late again.", "Tucson shipment was delayed again", "synonym"),
    F(
        "Blue Heron Outfitters asked us to begin the rollout in April.",
        "Blue Heron Outfitters asked to start the rollout in April",
        "synonym",
        quote="rollout in April",
    ),
    F(
        "Ravi says the budget is large enough for the full suite.",
        "Ravi says the budget is big enough for the full suite",
        "synonym",
    ),
    F(
        "Castellan Bank needs help migrating their old contacts.",
        "Castellan Bank needs assistance migrating their old contacts",
        "synonym",
    ),
    F(
        "Kwame wants to speak to someone in finance about the invoice.",
        "Kwame wants to talk to someone in finance about the invoice",
        "synonym",
        quote="someone in finance",
    ),
    F(
        "The onboarding call is cancelled, their PM is ill.",
        "onboarding call called off; their PM is sick",
        "synonym",
    ),
    F(
        "Their office is close to the airport in Nagoya.",
        "office is near the airport in Nagoya",
        "synonym",
        quote="airport in Nagoya",
    ),
    F("Mateo picked the annual contract.", "Mateo chose the annual contract", "synonym"),
    F("Please tell Ilse the samples arrived.", "inform Ilse that the samples arrived", "synonym"),
    F(
        "Ridgeway Pharma requires a signed DPA before any pilot.",
        "Ridgeway Pharma needs a signed DPA before any pilot",
        "synonym",
        quote="signed DPA",
    ),
    F(
        "Their finance team is fast at approving small orders.",
        "finance team is quick at approving small orders",
        "synonym",
    ),
    F(
        "My son is scared of thunderstorms.",
        "son is afraid of thunderstorms",
        "synonym",
        quote="thunderstorms",
    ),
    F("I'm attempting to cut down on sugar.", "trying to cut down on sugar", "synonym"),
    F("Our new flat is really big.", "new flat is very large", "synonym", quote="new flat"),
    F("I'm really glad I started therapy.", "really happy about starting therapy", "synonym"),
    F(
        "I begin my new job on Monday.",
        "starts new job on Monday",
        "synonym",
        quote="new job on Monday",
    ),
    F("My grandad is unwell again.", "grandad is sick again", "synonym"),
    F(
        "I'd like a quiet hotel room.",
        "wants a quiet hotel room",
        "synonym",
        quote="quiet hotel room",
    ),
    F("I finished the puzzle my aunt gave me.", "completed the puzzle my aunt gave me", "synonym"),
    F("Our dog is really smart.", "dog is very clever", "synonym", quote="dog is really smart"),
    # --- faithful: nominalisation
    F(
        "Tallbrook is migrating to the cloud edition in Q3.",
        "migration to the cloud edition in Q3",
        "nominalisation",
        quote="migrating to the cloud edition",
    ),
    F(
        "Mirabel Foods will renew in November.",
        "Mirabel Foods renewal in November",
        "nominalisation",
    ),
    F(
        "They want to expand to the Lisbon office next year.",
        "wants expansion to the Lisbon office next year",
        "nominalisation",
    ),
    F(
        "Our contact at Juniper Freight is retiring in the autumn.",
        "retirement of the Juniper Freight contact in the autumn",
        "nominalisation",
        quote="retiring in the autumn",
    ),
    F(
        "Vesterlund Marine will decide by the 20th.",
        "Vesterlund Marine decision by the 20th",
        "nominalisation",
    ),
    F(
        "Quendra Health is evaluating three vendors, including us.",
        "Quendra Health's evaluation of three vendors, including us",
        "nominalisation",
        quote="evaluating three vendors",
    ),
    F(
        "Pellucid Labs wants to integrate the Relay connector with their ERP.",
        "Pellucid Labs wants integration of the Relay connector with their ERP",
        "nominalisation",
    ),
    F(
        "They'll deliver the hardware to the Halifax site.",
        "hardware delivery to the Halifax site",
        "nominalisation",
        quote="Halifax site",
    ),
    F(
        "Kestrel Analytics complained about the slow exports.",
        "complaint from Kestrel Analytics about slow exports",
        "nominalisation",
    ),
    F(
        "Ferrowave wants to cancel the training package.",
        "Ferrowave wants cancellation of the training package",
        "nominalisation",
    ),
    F(
        "We need to onboard their 12 new hires in May.",
        "onboarding of 12 new hires in May",
        "nominalisation",
        quote="12 new hires",
    ),
    F(
        "Sigrid approved the discount yesterday.",
        "approval of the discount by Sigrid",
        "nominalisation",
    ),
    F(
        "Greywater Brewing is relocating its bottling line to Cork.",
        "relocation of Greywater Brewing's bottling line to Cork",
        "nominalisation",
    ),
    F(
        "I'm moving to Ljubljana in the spring.",
        "move to Ljubljana in the spring",
        "nominalisation",
        quote="Ljubljana",
    ),
    F("We're getting married next June.", "wedding next June", "nominalisation"),
    F(
        "I graduated from nursing school in 2021.",
        "graduation from nursing school in 2021",
        "nominalisation",
        quote="nursing school",
    ),
    F("My brother is visiting us at Easter.", "brother's visit at Easter", "nominalisation"),
    F(
        "I'm recovering from knee surgery.",
        "recovery from knee surgery",
        "nominalisation",
        quote="knee surgery",
    ),
    F("We're adopting a rescue greyhound.", "adoption of a rescue greyhound", "nominalisation"),
    F(
        "I retire at the end of the year.",
        "retirement at the end of the year",
        "nominalisation",
        quote="end of the year",
    ),
    F(
        "I'm travelling to Adelaide for my cousin's wedding.",
        "trip to Adelaide for cousin's wedding",
        "nominalisation",
    ),
    F(
        "I'm preparing for the bar exam in February.",
        "preparation for the bar exam in February",
        "nominalisation",
        quote="bar exam",
    ),
    # --- faithful: negation kept
    F(
        "Norrvik Paper doesn't want a phone call, email only.",
        "Norrvik Paper does not want phone calls; email only",
        "negation_kept",
        quote="email only",
    ),
    F(
        "They never accept deliveries after 4 pm.",
        "no deliveries accepted after 4 pm",
        "negation_kept",
    ),
    F(
        "We aren't renewing the Pulse dashboards.",
        "not renewing the Pulse dashboards",
        "negation_kept",
        quote="Pulse dashboards",
    ),
    F(
        "Hanne isn't the decision maker, her boss is.",
        "Hanne is not the decision maker",
        "negation_kept",
    ),
    F(
        "Please don't send paper invoices to Altamira anymore.",
        "no more paper invoices to Altamira",
        "negation_kept",
        quote="paper invoices",
    ),
    F(
        "Their IT team won't allow browser extensions.",
        "IT team does not allow browser extensions",
        "negation_kept",
    ),
    F(
        "Bramwell & Sons has no budget left this year.",
        "Bramwell & Sons has no remaining budget this year",
        "negation_kept",
    ),
    F(
        "Tessaly didn't sign the amendment yet.",
        "Tessaly has not signed the amendment yet",
        "negation_kept",
        quote="amendment",
    ),
    F(
        "The Sentinel tier doesn't include phone support.",
        "Sentinel tier has no phone support",
        "negation_kept",
    ),
    F(
        "Don't schedule anything with Yusuf on Fridays.",
        "nothing scheduled with Yusuf on Fridays",
        "negation_kept",
        quote="on Fridays",
    ),
    F(
        "Corvid Security can't use any US-hosted services.",
        "Corvid Security cannot use US-hosted services",
        "negation_kept",
    ),
    F(
        "They're not interested in the mobile app.",
        "not interested in the mobile app",
        "negation_kept",
        quote="mobile app",
    ),
    F(
        "Halcyon Hotels no longer uses the legacy booking sync.",
        "Halcyon Hotels stopped using the legacy booking sync",
        "negation_kept",
    ),
    F("I don't eat pork or shellfish.", "does not eat pork or shellfish", "negation_kept"),
    F(
        "I've never been to South America.",
        "has never visited South America",
        "negation_kept",
        quote="never been to South America",
    ),
    F("My daughter can't have gluten.", "daughter cannot have gluten", "negation_kept"),
    F(
        "I'm not a fan of horror films.",
        "does not like horror films",
        "negation_kept",
        quote="horror films",
    ),
    F("We don't own a car.", "has no car", "negation_kept"),
    F(
        "I don't drink alcohol anymore.",
        "no longer drinks alcohol",
        "negation_kept",
        quote="alcohol",
    ),
    F("Please don't text me after 10 pm.", "no texts after 10 pm", "negation_kept"),
    F(
        "My husband doesn't like crowded restaurants.",
        "husband dislikes crowded restaurants",
        "negation_kept",
        quote="crowded restaurants",
    ),
    F("I haven't decided on a university yet.", "has not chosen a university yet", "negation_kept"),
    # --- faithful: third person (the value names the speaker)
    F(
        "I went to a grief support group on Tuesday night.",
        "Rosalind attended a grief support group",
        "third_person",
        speaker="Rosalind",
    ),
    F(
        "I ran my first 10k last weekend!",
        "Kenji ran his first 10k",
        "third_person",
        quote="first 10k",
        speaker="Kenji",
    ),
    F(
        "I've been volunteering at an animal shelter since the autumn.",
        "Marisol volunteers at an animal shelter",
        "third_person",
        speaker="Marisol",
    ),
    F(
        "Honestly I just signed up for a pottery class.",
        "Anders signed up for a pottery class",
        "third_person",
        quote="pottery class",
        speaker="Anders",
    ),
    F(
        "My mum and I went to the Van Gogh exhibition yesterday.",
        "Farah went to the Van Gogh exhibition with her mum",
        "third_person",
        speaker="Farah",
    ),
    F(
        "I finally passed my driving test.",
        "Declan passed his driving test",
        "third_person",
        quote="driving test",
        speaker="Declan",
    ),
    F(
        "I'm reading a book about the history of tea.",
        "Yara is reading a book about the history of tea",
        "third_person",
        speaker="Yara",
    ),
    F(
        "I planted tomatoes and basil on the balcony.",
        "Tomasz planted tomatoes and basil on the balcony",
        "third_person",
        quote="tomatoes and basil",
        speaker="Tomasz",
    ),
    F(
        "I took my kids camping by the river last month.",
        "Ines took her kids camping by the river",
        "third_person",
        speaker="Ines",
    ),
    F(
        "I've started seeing a therapist every other week.",
        "Beckett sees a therapist every other week",
        "third_person",
        speaker="Beckett",
    ),
    F(
        "I made a quilt for my niece's birthday.",
        "Noor made a quilt for her niece's birthday",
        "third_person",
        quote="quilt",
        speaker="Noor",
    ),
    F(
        "I just got back from a week in Lisbon.",
        "Gustavo spent a week in Lisbon",
        "third_person",
        speaker="Gustavo",
    ),
    F(
        "I sing in a jazz band on Friday nights.",
        "Elodie sings in a jazz band on Friday nights",
        "third_person",
        quote="jazz band",
        speaker="Elodie",
    ),
    F(
        "I joined a book club at the library.",
        "Hamid joined a book club at the library",
        "third_person",
        speaker="Hamid",
    ),
    F(
        "I closed the Lumen Orchard deal this morning.",
        "Wren closed the Lumen Orchard deal",
        "third_person",
        quote="Lumen Orchard deal",
        speaker="Wren",
    ),
    F(
        "I'm flying to Tampere on Monday to meet their ops team.",
        "Solveig is flying to Tampere on Monday to meet their ops team",
        "third_person",
        speaker="Solveig",
    ),
    F(
        "I spoke with their procurement lead yesterday, she's on board.",
        "Idris spoke with their procurement lead",
        "third_person",
        quote="procurement lead",
        speaker="Idris",
    ),
    F(
        "I'm taking over the Marlow Print renewal from Colm.",
        "Paloma is taking over the Marlow Print renewal from Colm",
        "third_person",
        speaker="Paloma",
    ),
    F(
        "I presented the roadmap to Ferrowave's board last week.",
        "Callum presented the roadmap to Ferrowave's board",
        "third_person",
        quote="roadmap",
        speaker="Callum",
    ),
    F(
        "My team hit our Q2 target two weeks early.",
        "Zofia's team hit their Q2 target two weeks early",
        "third_person",
        speaker="Zofia",
    ),
    F(
        "I handle all the EMEA support escalations.",
        "Ottilie handles the EMEA support escalations",
        "third_person",
        quote="EMEA support escalations",
        speaker="Ottilie",
    ),
    F(
        "I visited the Bilbao warehouse on Wednesday.",
        "Rashid visited the Bilbao warehouse",
        "third_person",
        speaker="Rashid",
    ),
    F(
        "I've been at Castellan Bank for six years, mostly in procurement.",
        "Mireille has worked at Castellan Bank for six years",
        "third_person",
        quote="six years",
        speaker="Mireille",
    ),
    F(
        "I attended the logistics expo in Hamburg.",
        "Teodor attended the logistics expo in Hamburg",
        "third_person",
        speaker="Teodor",
    ),
    # --- faithful: summary (some with a negation elsewhere that does not concern the value)
    F(
        "So, long story short, Oakhaven Dental loved the demo, but they want to wait until their new clinic in Boise opens before buying anything. Probably September.",
        "Oakhaven Dental wants to wait until their Boise clinic opens before buying",
        "summary",
        quote="wait until their new clinic in Boise opens",
    ),
    F(
        "Their old vendor kept missing SLAs, which is why Juniper Freight is looking at us. They need an answer on pricing by next week.",
        "Juniper Freight is looking at us because their old vendor kept missing SLAs",
        "summary",
    ),
    F(
        "Okay so I talked to Beatriz. She's fine with the price, she just needs legal to sign off on the liability clause.",
        "Beatriz needs legal sign-off on the liability clause",
        "summary",
        quote="liability clause",
    ),
    F(
        "The Leeds depot is closing for stocktake on the 28th, so don't book any collections there that day. Manchester is open as normal.",
        "Leeds depot closed for stocktake on the 28th",
        "summary",
    ),
    F(
        "Ugh, ticket SUP-51102 got reopened. The customer says the CSV export still drops the last row.",
        "customer reports the CSV export still drops the last row",
        "summary",
        quote="CSV export still drops the last row",
    ),
    F(
        "Kwame called. They want to add the Ledger add-on, but only if we can include it in the current contract rather than a new one.",
        "they want the Ledger add-on included in the current contract rather than a new one",
        "summary",
    ),
    F(
        "Thornbury Schools are not price-sensitive, but they're really strict about accessibility. Everything must meet WCAG 2.1 AA.",
        "Thornbury Schools requires WCAG 2.1 AA accessibility",
        "summary",
        quote="WCAG 2.1 AA",
    ),
    F(
        "Their fiscal year closes in March, so Solvang Textiles usually has leftover budget in February. Good time to pitch the upgrade.",
        "Solvang Textiles usually has leftover budget in February",
        "summary",
    ),
    F(
        "Dmitri isn't technical at all, so keep the demo business-focused. He cares about reporting for his regional managers.",
        "Dmitri cares about reporting for his regional managers",
        "summary",
        quote="reporting for his regional managers",
    ),
    F(
        "We shipped the replacement units on Monday via DHL. Tracking should show up tomorrow, and Greywater confirmed someone will be at the dock.",
        "replacement units shipped on Monday via DHL",
        "summary",
    ),
    F(
        "Saoirse from Tessaly mentioned they're opening three new stores in Ireland. She didn't say when exactly.",
        "Tessaly is opening three new stores in Ireland",
        "summary",
        quote="three new stores in Ireland",
    ),
    F(
        "Honestly the meeting with Ridgeway went well. They want a sandbox for their QA team and a follow-up with our security lead.",
        "Ridgeway wants a sandbox for their QA team",
        "summary",
    ),
    F(
        "Colm says Marlow Print won't renew the print-management module, but they'll keep the core platform.",
        "Marlow Print will keep the core platform",
        "summary",
        quote="keep the core platform",
    ),
    F(
        "Pellucid's invoices have to reference their cost centre, otherwise AP bounces them. Cost centre is RD-440.",
        "Pellucid's invoices must reference cost centre RD-440",
        "summary",
    ),
    F(
        "It was a crazy week. My car broke down on the motorway, and then my daughter came down with chickenpox.",
        "daughter came down with chickenpox",
        "summary",
        quote="chickenpox",
    ),
    F(
        "We went to Cornwall for the half-term. The kids loved the beach, though it rained most days.",
        "went to Cornwall for half-term",
        "summary",
    ),
    F(
        "I'm not great with early mornings, but I've started going to the gym at 6 because it's the only quiet time.",
        "has started going to the gym at 6",
        "summary",
        quote="going to the gym at 6",
    ),
    F(
        "My neighbour Arturo lent me his ladder, so I finally cleaned out the gutters.",
        "cleaned out the gutters with a ladder borrowed from neighbour Arturo",
        "summary",
    ),
    F(
        "I've been sleeping badly since the baby arrived. She's wonderful though, and my parents help out on weekends.",
        "parents help out on weekends",
        "summary",
        quote="my parents help out on weekends",
    ),
    F(
        "So my flight to Calgary got cancelled and I had to rebook for Thursday. Not thrilled.",
        "rebooked the Calgary flight for Thursday",
        "summary",
    ),
    F(
        "My doctor told me to cut back on salt. I didn't realise how much was in bread!",
        "doctor advised cutting back on salt",
        "summary",
        quote="cut back on salt",
    ),
    F(
        "I've got a job interview at a design studio in Ghent on Friday. Pretty nervous, but excited.",
        "has a job interview at a design studio in Ghent on Friday",
        "summary",
    ),
    F(
        "We're not doing a big party this year. Just dinner with close friends for my fortieth.",
        "fortieth birthday will be just dinner with close friends",
        "summary",
        quote="dinner with close friends",
    ),
    F(
        "Haha my cat knocked my coffee over the laptop again. Anyway, the keyboard still works, thankfully.",
        "cat knocked coffee over the laptop",
        "summary",
    ),
    # --- unfaithful: figure
    U(
        "Tallbrook wants 85 seats on the renewal.",
        "Tallbrook wants 58 seats on the renewal",
        "figure",
        quote="85 seats",
    ),
    U(
        "Their fleet is 240 trucks across four depots.",
        "fleet of 420 trucks across four depots",
        "figure",
    ),
    U(
        "We agreed on a 12% volume discount for Mirabel Foods.",
        "Mirabel Foods gets a 15% volume discount",
        "figure",
        quote="12% volume discount",
    ),
    U(
        "Vesterlund needs the pallets stacked no higher than 3 layers.",
        "pallets stacked no higher than 4 layers",
        "figure",
    ),
    U(
        "Quendra Health has about 1,800 staff using the portal.",
        "about 18,000 staff use the portal",
        "figure",
        quote="1,800 staff",
    ),
    U("The SLA says first response within 4 hours.", "first response within 24 hours", "figure"),
    U("Kestrel runs 6 regional offices.", "Kestrel runs 9 regional offices", "figure"),
    U(
        "The pilot covers 25 users in the Porto team.",
        "pilot covers 35 users in the Porto team",
        "figure",
        quote="25 users",
    ),
    U("Their uptime requirement is 99.9 percent.", "uptime requirement is 99.5 percent", "figure"),
    U(
        "Greywater ships roughly 300 kegs a week.",
        "Greywater ships roughly 3,000 kegs a week",
        "figure",
        quote="300 kegs",
    ),
    U("I've got three kids, all under ten.", "has four kids under ten", "figure"),
    U("I run 5 km three times a week.", "runs 15 km three times a week", "figure", quote="5 km"),
    U("My flat is on the 7th floor.", "flat is on the 17th floor", "figure"),
    U(
        "I've been a nurse for 12 years.",
        "has been a nurse for 21 years",
        "figure",
        quote="12 years",
    ),
    U("I sleep about six hours a night.", "sleeps about eight hours a night", "figure"),
    U(
        "We have two cats and a rabbit.",
        "Idris has three cats and a rabbit",
        "figure",
        speaker="Idris",
    ),
    # --- unfaithful: identifier
    U(
        "The PO for the Gdansk order is PO-55102.",
        "PO for the Gdansk order is PO-55120",
        "identifier",
        quote="PO-55102",
    ),
    U(
        "Can you look at ticket SUP-88341? It's the SSO bug.",
        "SSO bug is ticket SUP-88314",
        "identifier",
    ),
    U("Their account ID is CX-20931.", "account ID is CX-20391", "identifier", quote="CX-20931"),
    U("The replacement part is SKU HB-7740-B.", "replacement part is SKU HB-7740-D", "identifier"),
    U(
        "Invoice INV-2024-0917 is the one they're disputing.",
        "disputing invoice INV-2024-0971",
        "identifier",
        quote="INV-2024-0917",
    ),
    U("DHL tracking is JD014600003328.", "DHL tracking number JD014600003382", "identifier"),
    U(
        "Their VAT number is BE0468123579.",
        "VAT number BE0468123597",
        "identifier",
        quote="BE0468123579",
    ),
    U("The contract reference is MSA-PL-0042.", "contract reference MSA-PL-0024", "identifier"),
    U("Deal ID in the CRM is OPP-30418.", "CRM deal ID OPP-30481", "identifier", quote="OPP-30418"),
    U("The firmware they're on is v4.12.3.", "firmware v4.13.2", "identifier"),
    U(
        "Ship it to dock door D14 at the Halifax site.",
        "ship to dock door D41 at the Halifax site",
        "identifier",
    ),
    U("My flight is BA 2419 to Porto.", "flight BA 2491 to Porto", "identifier", quote="BA 2419"),
    U("Booking reference is QZ7K4M, under my surname.", "booking reference QZ7K4N", "identifier"),
    U(
        "My library card number is 20394417.",
        "library card number 20394471",
        "identifier",
        quote="20394417",
    ),
    U("The parcel locker code is 8F3-K21.", "parcel locker code 8F3-K12", "identifier"),
    U("Our new car's plate is LK71 XRT.", "car plate LK17 XRT", "identifier", quote="LK71 XRT"),
    # --- unfaithful: amount
    U("The deal is worth €84,000 a year.", "deal worth €48,000 a year", "amount", quote="€84,000"),
    U("Their budget for the rollout is $120k.", "rollout budget is $210k", "amount"),
    U(
        "Shipping to Tucson costs $38 per pallet.",
        "shipping to Tucson costs $83 per pallet",
        "amount",
        quote="$38 per pallet",
    ),
    U("The outstanding balance is £2,450.", "outstanding balance is £2,540", "amount"),
    U(
        "We quoted them 19 euros per seat per month.",
        "quoted 19 dollars per seat per month",
        "amount",
    ),
    U(
        "Their sign-off limit is 10,000 without board approval.",
        "sign-off limit is 100,000 without board approval",
        "amount",
        quote="10,000",
    ),
    U(
        "The Ledger add-on lists at $1,200 a year.",
        "Ledger add-on lists at $1,500 a year",
        "amount",
    ),
    U(
        "They paid a deposit of $6,500 last week.",
        "paid a deposit of $5,600",
        "amount",
        quote="deposit of $6,500",
    ),
    U("The late fee on that invoice was 75 euros.", "late fee was 57 euros", "amount"),
    U(
        "Ravi approved a credit note of £310.",
        "Ravi approved a credit note of £3,100",
        "amount",
        quote="£310",
    ),
    U(
        "The training package is 4,000 dollars flat.",
        "training package costs 4,500 dollars",
        "amount",
    ),
    U("Our rent is 1,350 a month.", "rent is 1,530 a month", "amount", quote="1,350"),
    U("The wedding venue wants a £900 deposit.", "wedding venue deposit is £9,000", "amount"),
    U(
        "I spent about $60 on the concert tickets.",
        "spent about $160 on concert tickets",
        "amount",
        quote="$60",
    ),
    U("My phone bill went up to 42 euros.", "phone bill is 24 euros", "amount"),
    U(
        "I'm saving 200 a month for the trip.",
        "Hamid saves 300 a month for the trip",
        "amount",
        speaker="Hamid",
    ),
    # --- unfaithful: date / time
    U(
        "The renewal date for Corvid is 30 September.",
        "Corvid renewal date is 30 October",
        "date",
        quote="30 September",
    ),
    U(
        "Kickoff with Prairie Loom is on Tuesday at 10.",
        "Prairie Loom kickoff on Thursday at 10",
        "date",
    ),
    U(
        "The delivery window is 7 to 9 am.",
        "delivery window is 7 to 9 pm",
        "date",
        quote="7 to 9 am",
    ),
    U("Their contract ends on 31 March 2026.", "contract ends on 31 March 2027", "date"),
    U("Quarterly business review is set for the 14th.", "QBR on the 4th", "date", quote="the 14th"),
    U("Ngozi is out of office until 8 July.", "Ngozi out of office until 18 July", "date"),
    U("The trial expires on June 2.", "trial expires on July 2", "date", quote="June 2"),
    U(
        "Collections from the Bilbao warehouse are at 3:30 pm.",
        "Bilbao warehouse collections at 3:00 pm",
        "date",
    ),
    U(
        "They want the demo on Wednesday afternoon.",
        "demo on Wednesday morning",
        "date",
        quote="Wednesday afternoon",
    ),
    U("Payment is due on the 1st of each month.", "payment due on the 15th of each month", "date"),
    U("We signed with them back in 2018.", "signed with them in 2016", "date", quote="2018"),
    U("My mum's birthday is 12 May.", "mum's birthday is 21 May", "date", quote="12 May"),
    U("Our flight leaves at 6:40 in the morning.", "flight leaves at 6:40 in the evening", "date"),
    U(
        "Parents' evening is next Thursday at 5.",
        "parents' evening next Thursday at 7",
        "date",
        quote="next Thursday at 5",
    ),
    U("I'm off work from the 22nd to the 29th.", "off work from the 22nd to the 26th", "date"),
    U(
        "We moved into this house in 2015.",
        "Gustavo moved into his house in 2019",
        "date",
        speaker="Gustavo",
    ),
    # --- unfaithful: email
    U(
        "Send the renewal paperwork to legal@tallbrook-logistics.com.",
        "send renewal paperwork to legal@tallbrooklogistics.com",
        "email",
        quote="legal@tallbrook-logistics.com",
    ),
    U(
        "Hanne's email is hanne.kjeldsen@norrvik.dk.",
        "Hanne's email is hanne.kjeldsen@norrvik.se",
        "email",
    ),
    U(
        "Invoices go to ap@quendrahealth.org, not to Ravi.",
        "invoices go to ap@quendrahealth.com",
        "email",
        quote="ap@quendrahealth.org",
    ),
    U(
        "You can reach Mateo at m.ibarra@blueheron.co.",
        "Mateo's email is m.ibarra@blueheron.com",
        "email",
    ),
    U(
        "Support tickets come from helpdesk@ferrowave.io.",
        "tickets come from help@ferrowave.io",
        "email",
        quote="helpdesk@ferrowave.io",
    ),
    U(
        "Use procurement@castellanbank.ch for the tender.",
        "tender contact procurement@castellan.ch",
        "email",
    ),
    U(
        "Yusuf's address is ydemir@kestrel-analytics.com.",
        "Yusuf's email is y.demir@kestrel-analytics.com",
        "email",
        quote="ydemir@kestrel-analytics.com",
    ),
    U(
        "Copy ops-team@juniperfreight.com on the delivery updates.",
        "copy ops@juniperfreight.com on delivery updates",
        "email",
    ),
    U(
        "Beatriz prefers her personal email, beatriz.lomba@gmail.com.",
        "Beatriz prefers beatriz.lomba@gmail.pt",
        "email",
        quote="beatriz.lomba@gmail.com",
    ),
    U(
        "The shared inbox for Thornbury is it-requests@thornbury.sch.uk.",
        "Thornbury shared inbox it-request@thornbury.sch.uk",
        "email",
    ),
    U(
        "My new email is sam.okafor88@proton.me.",
        "new email sam.okafor86@proton.me",
        "email",
        quote="sam.okafor88@proton.me",
    ),
    U(
        "Send the photos to grandma at rita.moss@btinternet.com.",
        "grandma's email is rita.moss@btinternet.co.uk",
        "email",
    ),
    U(
        "The school office is office@stbrendans.ie.",
        "school office email office@stbrendan.ie",
        "email",
        quote="office@stbrendans.ie",
    ),
    U(
        "Book club emails come from pagesandpints@gmail.com.",
        "book club emails from pagesandpints@yahoo.com",
        "email",
    ),
    U(
        "My work address is k.tanaka@lumenorchard.jp.",
        "Kenji's work email is kenji.tanaka@lumenorchard.jp",
        "email",
        speaker="Kenji",
    ),
    # --- unfaithful: phone
    U(
        "Call their warehouse on 0161 496 0384.",
        "warehouse number 0161 496 0348",
        "phone",
        quote="0161 496 0384",
    ),
    U("Odile's mobile is +33 6 12 45 78 90.", "Odile's mobile is +33 6 12 45 78 09", "phone"),
    U(
        "The Ridgeway helpline is 1-800-555-0142.",
        "Ridgeway helpline is 1-800-555-0124",
        "phone",
        quote="1-800-555-0142",
    ),
    U("Reach Kwame on +233 24 555 0198 after 2 pm.", "Kwame's number is +233 24 555 0189", "phone"),
    U(
        "Reception in Ghent is +32 9 224 18 50.",
        "Ghent reception +32 9 242 18 50",
        "phone",
        quote="+32 9 224 18 50",
    ),
    U("Dispatch's direct line is (520) 555-0173.", "dispatch direct line (520) 555-0137", "phone"),
    U(
        "Sigrid's desk phone is extension 4417.",
        "Sigrid's desk extension is 4471",
        "phone",
        quote="extension 4417",
    ),
    U("For urgent outages ring +44 20 7946 0815.", "urgent outage line +44 20 7946 0851", "phone"),
    U(
        "Mateo's WhatsApp is +34 612 555 309.",
        "Mateo's WhatsApp +34 612 555 390",
        "phone",
        quote="+34 612 555 309",
    ),
    U("The Calgary office number is 403-555-0196.", "Calgary office 403-555-0169", "phone"),
    U("My new number is 07700 900461.", "new number 07700 900416", "phone", quote="07700 900461"),
    U("The vet's number is 028 9018 2276.", "vet's number 028 9018 2267", "phone"),
    U(
        "Call my husband on 0412 555 783 if I don't answer.",
        "husband's number 0412 555 738",
        "phone",
        quote="0412 555 783",
    ),
    U("The babysitter's number is 555-0148.", "babysitter's number 555-0184", "phone"),
    U("My landline is 01632 960 227.", "Noor's landline is 01632 960 272", "phone", speaker="Noor"),
    # --- unfaithful: negation flip
    U(
        "Tallbrook doesn't want the premium support tier.",
        "Tallbrook wants the premium support tier",
        "negation_flip",
        quote="premium support tier",
    ),
    U("They don't accept partial shipments.", "accepts partial shipments", "negation_flip"),
    U(
        "Prairie Loom isn't using the mobile app.",
        "Prairie Loom uses the mobile app",
        "negation_flip",
        quote="mobile app",
    ),
    U(
        "Hanne has never approved a multi-year deal.",
        "Hanne has approved multi-year deals",
        "negation_flip",
    ),
    U(
        "Juniper Freight won't pay for expedited shipping.",
        "Juniper Freight will pay for expedited shipping",
        "negation_flip",
        quote="expedited shipping",
    ),
    U(
        "Their security team did not pass the pen test.",
        "security team passed the pen test",
        "negation_flip",
    ),
    U(
        "No, Altamira hasn't signed the NDA yet.",
        "Altamira has signed the NDA",
        "negation_flip",
        quote="signed the NDA",
    ),
    U(
        "We can't offer them the legacy discount.",
        "can offer them the legacy discount",
        "negation_flip",
    ),
    U("Ferrowave is not renewing in June.", "Ferrowave is renewing in June", "negation_flip"),
    U(
        "The bug doesn't affect the Android app, only iOS.",
        "bug affects the Android app",
        "negation_flip",
        quote="Android app",
    ),
    U(
        "Emeka doesn't need a login to the billing portal.",
        "Emeka needs a login to the billing portal",
        "negation_flip",
    ),
    U(
        "I don't drink coffee after lunch.",
        "drinks coffee after lunch",
        "negation_flip",
        quote="coffee after lunch",
    ),
    U(
        "My son isn't allergic to nuts, it was a false alarm.",
        "son is allergic to nuts",
        "negation_flip",
    ),
    U(
        "We're not going to the wedding in Cork.",
        "going to the wedding in Cork",
        "negation_flip",
        quote="wedding in Cork",
    ),
    U("I never watch TV in the evenings.", "watches TV in the evenings", "negation_flip"),
    U(
        "I didn't get the promotion.",
        "Beckett got the promotion",
        "negation_flip",
        speaker="Beckett",
    ),
    # --- unfaithful: name
    U(
        "Our sponsor at Halcyon Hotels is Ngozi Eze.",
        "sponsor at Halcyon Hotels is Ngozi Obi",
        "name",
        quote="Ngozi Eze",
    ),
    U("The new buyer at Mirabel is Tobias Wren.", "new buyer at Mirabel is Tobias Renn", "name"),
    U(
        "Ilse Vandermeer signs the purchase orders.",
        "Ilse Vandermolen signs the purchase orders",
        "name",
        quote="Ilse Vandermeer",
    ),
    U("Ask Dmitri about the customs paperwork.", "ask Dominik about the customs paperwork", "name"),
    U(
        "Colm Fitzgerald is our champion at Marlow Print.",
        "champion at Marlow Print is Colm Fitzpatrick",
        "name",
    ),
    U("Send the contract to Saoirse.", "send the contract to Siobhan", "name"),
    U(
        "Their new CFO is Anneliese Brandt.",
        "new CFO is Annelise Brand",
        "name",
        quote="Anneliese Brandt",
    ),
    U(
        "Kestrel Analytics is buying the Pulse dashboards.",
        "Kestrel Solutions is buying the Pulse dashboards",
        "name",
    ),
    U(
        "My best friend Leontine is getting married.",
        "best friend Leonie is getting married",
        "name",
        quote="best friend Leontine",
    ),
    U("Our dog is called Mabel.", "dog is called Maple", "name"),
    U("My brother Piet lives in Utrecht.", "brother Jan lives in Utrecht", "name"),
    U(
        "I'm meeting Rosa for lunch on Friday.",
        "meeting Rita for lunch on Friday",
        "name",
        quote="meeting Rosa",
    ),
    U(
        "My daughter Esme started ballet.",
        "Farah's daughter Ella started ballet",
        "name",
        speaker="Farah",
    ),
    # --- unfaithful: antonym
    U(
        "Odile prefers morning calls.",
        "Odile prefers evening calls",
        "antonym",
        quote="morning calls",
    ),
    U(
        "Bramwell wants to increase the order volume in Q4.",
        "Bramwell wants to reduce the order volume in Q4",
        "antonym",
    ),
    U("Their team found the onboarding easy.", "team found the onboarding difficult", "antonym"),
    U(
        "Corvid is upgrading to the Sentinel tier.",
        "Corvid is downgrading to the Sentinel tier",
        "antonym",
        quote="upgrading",
    ),
    U(
        "Yusuf was happy with the last quarterly review.",
        "Yusuf was unhappy with the last quarterly review",
        "antonym",
    ),
    U("The shipment arrived early.", "shipment arrived late", "antonym", quote="arrived early"),
    U("Solvang wants shorter contract terms.", "Solvang wants longer contract terms", "antonym"),
    U(
        "Sales in the north region went up this quarter.",
        "north region sales went down this quarter",
        "antonym",
        quote="went up",
    ),
    U("I love cold weather.", "hates cold weather", "antonym"),
    U(
        "I like sitting at the front of the bus.",
        "likes sitting at the back of the bus",
        "antonym",
        quote="front of the bus",
    ),
    U("My son is the tallest in his class.", "son is the shortest in his class", "antonym"),
    U("We bought a bigger fridge.", "bought a smaller fridge", "antonym", quote="bigger fridge"),
    U("I find running relaxing.", "Tomasz finds running stressful", "antonym", speaker="Tomasz"),
    # --- unfaithful: added fact
    U(
        "Lumen Orchard is opening a new packing facility.",
        "Lumen Orchard is opening a new packing facility in Tucson",
        "added_fact",
        quote="new packing facility",
    ),
    U("Their CFO wants a discount.", "CFO wants a 10% discount", "added_fact"),
    U(
        "Pellucid Labs is unhappy with the support response times.",
        "Pellucid Labs is unhappy with support response times and may churn",
        "added_fact",
    ),
    U(
        "Ravi is the new point of contact at Ridgeway.",
        "Ravi, Ridgeway's head of IT, is the new point of contact",
        "added_fact",
        quote="new point of contact",
    ),
    U(
        "The shipment to Porto is delayed.",
        "shipment to Porto is delayed due to a customs hold",
        "added_fact",
    ),
    U(
        "Norrvik Paper signed the renewal.",
        "Norrvik Paper signed a three-year renewal",
        "added_fact",
        quote="signed the renewal",
    ),
    U(
        "Harriet wants a follow-up meeting.",
        "Harriet wants a follow-up meeting with our CEO",
        "added_fact",
    ),
    U(
        "Greywater is evaluating other CRM tools.",
        "Greywater is evaluating Salesforce",
        "added_fact",
        quote="evaluating other CRM tools",
    ),
    U("I started a new job.", "started a new job as a teacher", "added_fact"),
    U(
        "We're going away for the weekend.",
        "going to Edinburgh for the weekend",
        "added_fact",
        quote="away for the weekend",
    ),
    U("My sister had a baby.", "sister had a baby girl", "added_fact"),
    U(
        "I bought a bike.",
        "bought an electric bike for commuting",
        "added_fact",
        quote="bought a bike",
    ),
    U("I'm learning an instrument.", "learning the violin", "added_fact"),
    U(
        "I went to a concert last night.",
        "Elodie went to a concert with her sister last night",
        "added_fact",
        speaker="Elodie",
    ),
    # --- unfaithful: unrelated
    U("Thanks, that's really helpful.", "Tallbrook's renewal is due in October", "unrelated"),
    U("Can you draft a reply for me?", "prefers email over phone", "unrelated"),
    U("Ok cool, talk tomorrow.", "account manager is Harriet Coombs", "unrelated"),
    U("Wait, which one did we send yesterday?", "Mirabel Foods pays by bank transfer", "unrelated"),
    U("Let me double-check the numbers first.", "the deal is worth €50,000", "unrelated"),
    U("Haha, fair enough.", "has a cat named Olive", "unrelated"),
    U("Good morning! How's it going?", "lives in Tampere", "unrelated"),
    U(
        "Can you summarise the last call?",
        "Kestrel wants the Relay connector",
        "unrelated",
        quote="the last call",
    ),
    U("Sorry, I was in a meeting.", "is training for a triathlon", "unrelated"),
    U(
        "My train is delayed, I'll be ten minutes late for the call with Juniper.",
        "Juniper Freight wants to expand to Calgary",
        "unrelated",
        quote="call with Juniper",
    ),
]


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------

HARD_KINDS = ("figure", "identifier", "amount", "date", "email", "phone", "negation_flip")

assert len(HOLDOUT4) >= 340, len(HOLDOUT4)
for _c in HOLDOUT4:
    assert _c.quote == "" or _c.quote in _c.message, _c
    assert _c.kind in (FAITHFUL_KINDS if _c.faithful else UNFAITHFUL_KINDS), _c
    assert _c.kind != "third_person" or _c.speaker, _c
    assert not _c.speaker or _c.speaker in _c.value, _c
    assert _c.value.strip(), _c
    assert _c.message.strip(), _c
assert len({(c.message, c.value) for c in HOLDOUT4}) == len(HOLDOUT4)
assert {c.kind for c in HOLDOUT4 if c.faithful} == set(FAITHFUL_KINDS)
assert {c.kind for c in HOLDOUT4 if not c.faithful} == set(UNFAITHFUL_KINDS)
for _k in HARD_KINDS:
    assert sum(not c.faithful and c.kind == _k for c in HOLDOUT4) >= 15, _k
assert not {c.message for c in HOLDOUT4} & {c.message for c in DEV + TEST}


def counts(cases: list[Case]) -> Counter[tuple[bool, str]]:
    return Counter((c.faithful, c.kind) for c in cases)


if __name__ == "__main__":
    n = len(HOLDOUT4)
    nf = sum(c.faithful for c in HOLDOUT4)
    nq = sum(bool(c.quote) for c in HOLDOUT4)
    ns = sum(bool(c.speaker) for c in HOLDOUT4)
    print(
        f"HOLDOUT4: {n} cases, {nf} faithful ({nf / n:.0%}), {n - nf} unfaithful, "
        f"{nq} with a quote ({nq / n:.0%}), {ns} with a speaker"
    )
    c = counts(HOLDOUT4)
    for faithful, kinds in ((True, FAITHFUL_KINDS), (False, UNFAITHFUL_KINDS)):
        print(
            "  "
            + ("faithful  " if faithful else "unfaithful")
            + ": "
            + ", ".join(f"{k} {c[(faithful, k)]}" for k in kinds)
        )
