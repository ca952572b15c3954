"""Grounding holdout: labelled cases written apart from DEV/TEST, on other topics and phrasings.

Each case is a message (as typed in chat or transcribed), the memory value an extractor wrote
from it, an optional verbatim quote locating the statement, whether the value is faithful to the
message, and the kind of rewording or mistake.  Topics: logistics and warehousing customers, SaaS
onboarding, field service, insurance brokers, real-estate agents, recruiting, event planning,
clinic admin, and a user's own habits, family, hobbies, travel, food, study and fitness.

Run `python3 -m bench.grounding.holdout` to check the file and print counts by (faithful, kind).
"""

from __future__ import annotations

from collections import Counter

from bench.grounding.corpus import FAITHFUL_KINDS, UNFAITHFUL_KINDS, Case


def F(message: str, value: str, kind: str, quote: str = "", speaker: str = "") -> Case:
    return Case(
        message=message, value=value, quote=quote, faithful=True, kind=kind, speaker=speaker
    )


def U(message: str, value: str, kind: str, quote: str = "", speaker: str = "") -> Case:
    return Case(
        message=message, value=value, quote=quote, faithful=False, kind=kind, speaker=speaker
    )


HOLDOUT: list[Case] = [
    # ---------------------------------------- faithful: verbatim
    F(
        "Kestrel Freight runs three cross-dock sites in Ohio.",
        "Kestrel Freight runs three cross-dock sites in Ohio",
        "verbatim",
    ),
    F(
        "ok so the onboarding call is booked, they want SSO set up before go-live.",
        "They want SSO set up before go-live",
        "verbatim",
        "they want SSO set up before go-live",
    ),
    F(
        "fyi Harbor & Pike only quotes commercial auto, no home policies",
        "Harbor & Pike only quotes commercial auto, no home policies",
        "verbatim",
    ),
    F(
        "The Linwood listing has a shared driveway with the neighbour. Buyers keep asking abt it.",
        "The Linwood listing has a shared driveway with the neighbour",
        "verbatim",
        "The Linwood listing has a shared driveway with the neighbour",
    ),
    F(
        "um, so, the clinic closes at noon on fridays for staff training. yeah.",
        "The clinic closes at noon on fridays for staff training",
        "verbatim",
    ),
    F(
        "Our SLA for dock appointments is 48 hours notice.",
        "SLA for dock appointments is 48 hours notice",
        "verbatim",
    ),
    F(
        "my daughter plays cello in the school orchestra",
        "Daughter plays cello in the school orchestra",
        "verbatim",
        "plays cello in the school orchestra",
    ),
    F(
        "Brightwell Events needs the venue contract signed by both parties before the deposit.",
        "Brightwell Events needs the venue contract signed by both parties before the deposit",
        "verbatim",
    ),
    F(
        "Recruiting note: the candidate has a 60 day notice period.",
        "The candidate has a 60 day notice period",
        "verbatim",
        "the candidate has a 60 day notice period",
    ),
    F(
        "so yeah, Tidewell Logistics invoices in euros only.",
        "Tidewell Logistics invoices in euros only",
        "verbatim",
    ),
    F(
        "i'm training for a half marathon in october",
        "Training for a half marathon in october",
        "verbatim",
    ),
    F(
        "Field techs at Corbel HVAC carry tablets, not laptops.",
        "Field techs at Corbel HVAC carry tablets, not laptops",
        "verbatim",
        "carry tablets, not laptops",
    ),
    F(
        "the admin team at Northgate Family Practice wants reminders sent by text, not email.",
        "Northgate Family Practice wants reminders sent by text, not email",
        "verbatim",
    ),
    F(
        "Quick one — Parcelry's API keys rotate every 90 days.",
        "Parcelry's API keys rotate every 90 days",
        "verbatim",
    ),
    F(
        "we're vegetarian at home, my partner eats fish when we go out though",
        "Partner eats fish when we go out",
        "verbatim",
        "my partner eats fish when we go out",
    ),
    F(
        "Maple Row Realty splits commission 60/40 with co-listing agents.",
        "Maple Row Realty splits commission 60/40 with co-listing agents",
        "verbatim",
    ),
    F(
        "I'm learning Portuguese on Duolingo every evening.",
        "Learning Portuguese on Duolingo every evening",
        "verbatim",
        "learning Portuguese on Duolingo every evening",
    ),
    F(
        "Order PO-55812 ships from the Memphis DC.",
        "Order PO-55812 ships from the Memphis DC",
        "verbatim",
    ),
    # ---------------------------------------- faithful: inflection
    F(
        "Ferrow Cold Chain is moving its dispatch onto our platform next quarter.",
        "Ferrow Cold Chain moves its dispatch onto our platform next quarter",
        "inflection",
    ),
    F("I run every morning before work.", "Runs every morning before work", "inflection"),
    F(
        "Quarry Lane Storage is hiring two forklift operators for the night shift.",
        "Quarry Lane Storage hires two forklift operators for the night shift",
        "inflection",
        "hiring two forklift operators for the night shift",
    ),
    F(
        "i cook dinner for my parents every sunday",
        "Cooks dinner for parents every Sunday",
        "inflection",
        "i cook dinner for my parents every sunday",
    ),
    F("I swim laps at the Y on tuesdays", "Swims laps at the Y on Tuesdays", "inflection"),
    F(
        "Dunmore Clinic's front desk confirms every appointment by phone the day before.",
        "Dunmore Clinic's front desk is confirming every appointment by phone the day before",
        "inflection",
    ),
    F(
        "the techs are scheduling boiler inspections two weeks ahead",
        "Techs schedule boiler inspections two weeks ahead",
        "inflection",
        "scheduling boiler inspections two weeks ahead",
    ),
    F(
        "We're using Greenhouse for applicant tracking.",
        "Uses Greenhouse for applicant tracking",
        "inflection",
    ),
    F(
        "My son collects vintage trading cards.",
        "Son is collecting vintage trading cards",
        "inflection",
    ),
    F(
        "Our planners are booking caterers at least six weeks out.",
        "Planners book caterers at least six weeks out",
        "inflection",
    ),
    F(
        "the agent lists all her duplexes on Zillow first",
        "Agent listing all her duplexes on Zillow first",
        "inflection",
        "lists all her duplexes on Zillow first",
    ),
    F(
        "I'm studying for the CPA exam on weekends.",
        "Studies for the CPA exam on weekends",
        "inflection",
    ),
    F(
        "Bluepoint Freight tracks every trailer with GPS.",
        "Bluepoint Freight is tracking every trailer with GPS",
        "inflection",
    ),
    F(
        "we hike with the dog most saturdays",
        "Hikes with the dog most Saturdays",
        "inflection",
        "hike with the dog most saturdays",
    ),
    F(
        "The onboarding team trains new admins in two sessions.",
        "Onboarding team training new admins in two sessions",
        "inflection",
    ),
    F(
        "Lakeshore Realty's agents hold open houses on sundays.",
        "Lakeshore Realty's agents are holding open houses on Sundays",
        "inflection",
    ),
    F(
        "uh, I bake sourdough twice a week, pretty much.",
        "Bakes sourdough twice a week",
        "inflection",
        "I bake sourdough twice a week",
    ),
    F(
        "Our recruiters screen every candidate by phone first.",
        "Recruiters screening every candidate by phone first",
        "inflection",
    ),
    F("I journal every night before bed", "Journals every night before bed", "inflection"),
    F(
        "The warehouse staff wear badges that get scanned at each door.",
        "Warehouse staff wearing badges that get scanned at each door",
        "inflection",
        "wear badges that get scanned at each door",
    ),
    # ---------------------------------------- faithful: reorder
    F(
        "on mondays the Elm Street clinic opens at 7:30.",
        "The Elm Street clinic opens at 7:30 on Mondays",
        "reorder",
    ),
    F(
        "Every pallet gets shrink-wrapped twice at Vantage 3PL.",
        "At Vantage 3PL every pallet gets shrink-wrapped twice",
        "reorder",
    ),
    F(
        "for lunch I usually have a salad",
        "Usually has a salad for lunch",
        "reorder",
        "for lunch I usually have a salad",
    ),
    F(
        "In the contract, Spruce & Co. asked for net-45 payment terms.",
        "Spruce & Co. asked for net-45 payment terms in the contract",
        "reorder",
        "Spruce & Co. asked for net-45 payment terms",
    ),
    F(
        "before the walkthrough, the buyers want the inspection report",
        "The buyers want the inspection report before the walkthrough",
        "reorder",
    ),
    F(
        "At the Tacoma hub, forklifts are charged overnight.",
        "Forklifts are charged overnight at the Tacoma hub",
        "reorder",
    ),
    F(
        "twice a year we visit my grandparents in Kraków",
        "Visits grandparents in Kraków twice a year",
        "reorder",
        "we visit my grandparents in Kraków",
    ),
    F(
        "For the gala on May 9, Orchid Events needs 220 chairs.",
        "Orchid Events needs 220 chairs for the gala on May 9",
        "reorder",
        "Orchid Events needs 220 chairs",
    ),
    F(
        "After 6pm, the field service hotline goes to voicemail.",
        "The field service hotline goes to voicemail after 6pm",
        "reorder",
    ),
    F(
        "with their first 500 seats, Coldharbor gets a dedicated CSM",
        "Coldharbor gets a dedicated CSM with their first 500 seats",
        "reorder",
    ),
    F(
        "By Friday, the recruiter needs the signed offer letter.",
        "The recruiter needs the signed offer letter by Friday",
        "reorder",
        "the recruiter needs the signed offer letter",
    ),
    F(
        "on long flights i always take an aisle seat",
        "Always takes an aisle seat on long flights",
        "reorder",
    ),
    F(
        "In the renewal, Halden Brokers want flood cover added.",
        "Halden Brokers want flood cover added in the renewal",
        "reorder",
    ),
    F(
        "Through the summer our dock hours run 6am to 4pm.",
        "Dock hours run 6am to 4pm through the summer",
        "reorder",
        "our dock hours run 6am to 4pm",
    ),
    F(
        "At the end of each month, Corvid Labs exports usage reports.",
        "Corvid Labs exports usage reports at the end of each month",
        "reorder",
    ),
    F(
        "for my thesis, I'm interviewing 12 port workers",
        "Interviewing 12 port workers for thesis",
        "reorder",
    ),
    F(
        "From the Dayton warehouse, all returns get processed.",
        "All returns get processed from the Dayton warehouse",
        "reorder",
        "all returns get processed",
    ),
    F("during ramadan I train in the evenings", "Trains in the evenings during Ramadan", "reorder"),
    # ---------------------------------------- faithful: person
    F(
        "I prefer calls after 3pm, mornings are hectic.",
        "Prefers calls after 3pm",
        "person",
        "I prefer calls after 3pm",
    ),
    F("i'm lactose intolerant btw", "Is lactose intolerant", "person"),
    F(
        "I manage the inbound team at Crestline Distribution.",
        "Manages the inbound team at Crestline Distribution",
        "person",
    ),
    F(
        "I have two kids, both in primary school.",
        "Has two kids, both in primary school",
        "person",
        "I have two kids, both in primary school",
    ),
    F(
        "I'm the office manager at Willow Creek Dental.",
        "The user is the office manager at Willow Creek Dental",
        "person",
    ),
    F(
        "I like my reports as PDFs, not spreadsheets.",
        "User likes reports as PDFs, not spreadsheets",
        "person",
    ),
    F(
        "we use Slack for everything internally",
        "The team uses Slack for everything internally",
        "person",
        "we use Slack for everything internally",
    ),
    F("I'm based in Rotterdam.", "User is based in Rotterdam", "person", "I'm based in Rotterdam"),
    F(
        "my budget for the offsite is $18,000",
        "User's budget for the offsite is $18,000",
        "person",
        "budget for the offsite is $18,000",
    ),
    F(
        "I cover the Midlands territory for the brokerage",
        "Covers the Midlands territory for the brokerage",
        "person",
    ),
    F(
        "I play five-a-side football on wednesdays",
        "Plays five-a-side football on Wednesdays",
        "person",
    ),
    F(
        "I want the onboarding checklist emailed to me after each session",
        "Wants the onboarding checklist emailed after each session",
        "person",
        "I want the onboarding checklist emailed to me after each session",
    ),
    F("i'm vegan, so no dairy at the team dinner pls", "Is vegan", "person", "i'm vegan"),
    F("My go-to airline is KLM.", "User's go-to airline is KLM", "person"),
    F(
        "we handle about 300 service calls a month",
        "Handles about 300 service calls a month",
        "person",
    ),
    F(
        "I'm allergic to cats, so no site visits at the farmhouse listing for me.",
        "Is allergic to cats",
        "person",
        "I'm allergic to cats",
    ),
    F("I own a rental duplex in Boise.", "Owns a rental duplex in Boise", "person"),
    F("I speak Spanish and a bit of Tagalog.", "Speaks Spanish and a bit of Tagalog", "person"),
    F(
        "my husband does the school run, I do pickups",
        "User does pickups; husband does the school run",
        "person",
    ),
    F(
        "I need invoices addressed to accounts payable, not to me.",
        "Needs invoices addressed to accounts payable, not to the user",
        "person",
        "invoices addressed to accounts payable, not to me",
    ),
    F(
        "I'm the hiring manager for the two dispatcher roles.",
        "User is the hiring manager for the two dispatcher roles",
        "person",
    ),
    F("I drink my coffee black", "Drinks coffee black", "person"),
    F("i read before bed, usually sci-fi", "Reads before bed, usually sci-fi", "person"),
    F(
        "We're a team of nine agents across two offices.",
        "Team of nine agents across two offices",
        "person",
        "a team of nine agents across two offices",
    ),
    # ---------------------------------------- faithful: synonym
    F(
        "Bramble Logistics wants to begin the pilot in June.",
        "Bramble Logistics wants to start the pilot in June",
        "synonym",
    ),
    F("I detest early meetings.", "Hates early meetings", "synonym", "I detest early meetings"),
    F(
        "the customer purchased 12 handheld scanners",
        "The customer bought 12 handheld scanners",
        "synonym",
    ),
    F("Our clinic is shut on bank holidays.", "Clinic is closed on bank holidays", "synonym"),
    F(
        "Stonebridge Realty's biggest client is a pension fund.",
        "Stonebridge Realty's largest client is a pension fund",
        "synonym",
        "Stonebridge Realty's biggest client is a pension fund",
    ),
    F(
        "the candidate wants to relocate to Leeds",
        "The candidate wants to move to Leeds",
        "synonym",
    ),
    F("I'm fond of Thai food", "Likes Thai food", "synonym"),
    F(
        "Hollis Insurance needs the quote quickly, their renewal is close.",
        "Hollis Insurance needs the quote fast",
        "synonym",
        "Hollis Insurance needs the quote quickly",
    ),
    F(
        "our warehouse in Gary is huge, like 400k sq ft",
        "Warehouse in Gary is very large, about 400k sq ft",
        "synonym",
    ),
    F(
        "the onboarding went great, they're thrilled",
        "Onboarding went well and the customer is delighted",
        "synonym",
    ),
    F(
        "Fernhill Events picked the riverside venue.",
        "Fernhill Events chose the riverside venue",
        "synonym",
        "Fernhill Events picked the riverside venue",
    ),
    F("i often forget to log my workouts", "Frequently forgets to log workouts", "synonym"),
    F(
        "The tech fixed the compressor on site.",
        "The technician repaired the compressor on site",
        "synonym",
    ),
    F("Please phone me at the office line.", "Prefers to be called at the office line", "synonym"),
    F(
        "Kinsale Freight is unhappy with the late deliveries.",
        "Kinsale Freight is dissatisfied with the late deliveries",
        "synonym",
        "unhappy with the late deliveries",
    ),
    F("my sister lives close to the stadium", "Sister lives near the stadium", "synonym"),
    F(
        "The broker wants to cancel the fleet policy.",
        "The broker wants to terminate the fleet policy",
        "synonym",
    ),
    F(
        "we need a bigger loading bay at the Elgin site",
        "Needs a larger loading bay at the Elgin site",
        "synonym",
        "we need a bigger loading bay",
    ),
    F("I'm beginning Spanish lessons next week", "Starting Spanish lessons next week", "synonym"),
    F(
        "Ridgeview Property Group requested a demo of the showing scheduler.",
        "Ridgeview Property Group asked for a demo of the showing scheduler",
        "synonym",
    ),
    F(
        "The clinic admin says the fax machine is broken again.",
        "The clinic's fax machine is not working",
        "synonym",
        "the fax machine is broken",
    ),
    F("i try to sleep by 11", "Aims to sleep by 11", "synonym"),
    F("Our recruiters are swamped this month.", "Recruiters are overloaded this month", "synonym"),
    F(
        "the rooftop terrace is tiny tbh",
        "The rooftop terrace is very small",
        "synonym",
        "the rooftop terrace is tiny",
    ),
    # ---------------------------------------- faithful: nominalisation
    F(
        "Harlow Freight will renew in September.",
        "Harlow Freight's renewal is in September",
        "nominalisation",
    ),
    F(
        "We decided to migrate off Salesforce.",
        "Decision to migrate off Salesforce",
        "nominalisation",
        "We decided to migrate off Salesforce",
    ),
    F("I prefer emails over calls.", "Preference for emails over calls", "nominalisation"),
    F(
        "Opal Health Admin complained about slow syncs.",
        "Complaint from Opal Health Admin about slow syncs",
        "nominalisation",
    ),
    F(
        "The tenants will move in on the 1st.",
        "Tenants' move-in is on the 1st",
        "nominalisation",
        "The tenants will move in on the 1st",
    ),
    F("the client is expanding into Canada", "Client's expansion into Canada", "nominalisation"),
    F(
        "we're evaluating three WMS vendors",
        "Evaluation of three WMS vendors underway",
        "nominalisation",
    ),
    F(
        "The candidate accepted the offer on Monday.",
        "Candidate's acceptance of the offer on Monday",
        "nominalisation",
        "accepted the offer on Monday",
    ),
    F(
        "I meditate for ten minutes every morning.",
        "Ten-minute meditation every morning",
        "nominalisation",
    ),
    F(
        "The installer will arrive between 8 and 10.",
        "Installer's arrival between 8 and 10",
        "nominalisation",
    ),
    F(
        "Gannet Events is planning a launch party for 150 guests.",
        "Gannet Events' planning of a launch party for 150 guests",
        "nominalisation",
        "planning a launch party for 150 guests",
    ),
    F(
        "they integrated with our API last month",
        "Integration with our API last month",
        "nominalisation",
    ),
    F(
        "The broker recommended umbrella cover for the client.",
        "Broker's recommendation: umbrella cover for the client",
        "nominalisation",
    ),
    F(
        "Trellis Apps delayed the go-live by two weeks.",
        "Two-week delay of Trellis Apps' go-live",
        "nominalisation",
        "delayed the go-live by two weeks",
    ),
    F(
        "we inspect the fire extinguishers every quarter",
        "Quarterly inspection of the fire extinguishers",
        "nominalisation",
    ),
    F(
        "My family celebrates Diwali with a big dinner.",
        "Family's Diwali celebration with a big dinner",
        "nominalisation",
    ),
    F(
        "The agent reduced the asking price on Birch Lane.",
        "Reduction of the asking price on Birch Lane",
        "nominalisation",
        "reduced the asking price on Birch Lane",
    ),
    F(
        "I'm attending the logistics expo in Atlanta.",
        "Attendance at the logistics expo in Atlanta",
        "nominalisation",
    ),
    F(
        "The clinic requires patients to arrive 15 minutes early.",
        "Clinic's requirement: patients arrive 15 minutes early",
        "nominalisation",
    ),
    F(
        "We'll train the dispatchers on Thursday.",
        "Dispatcher training on Thursday",
        "nominalisation",
        "train the dispatchers on Thursday",
    ),
    # ---------------------------------------- faithful: negation kept
    F("i don't eat pork", "Does not eat pork", "negation_kept"),
    F(
        "Corbin Freight doesn't want a phone call, email only.",
        "Corbin Freight does not want phone calls; email only",
        "negation_kept",
        "Corbin Freight doesn't want a phone call",
    ),
    F(
        "We never ship hazmat from the Fresno site.",
        "Hazmat is never shipped from the Fresno site",
        "negation_kept",
    ),
    F(
        "The buyers aren't interested in anything without a garage.",
        "Buyers are not interested in homes without a garage",
        "negation_kept",
    ),
    F(
        "I haven't started the onboarding modules yet.",
        "Has not started the onboarding modules yet",
        "negation_kept",
        "I haven't started the onboarding modules yet",
    ),
    F("no weekend calls please", "Does not want calls on weekends", "negation_kept"),
    F(
        "Ashgrove Clinic won't accept walk-ins after 4pm.",
        "Ashgrove Clinic does not accept walk-ins after 4pm",
        "negation_kept",
    ),
    F(
        "the candidate isn't willing to relocate",
        "Candidate is unwilling to relocate",
        "negation_kept",
        "the candidate isn't willing to relocate",
    ),
    F(
        "I can't do mornings, I'm on school drop-off",
        "Cannot do mornings because of school drop-off",
        "negation_kept",
    ),
    F(
        "Kellerman Brokers don't cover flood in their home policies.",
        "Flood is not covered in Kellerman Brokers' home policies",
        "negation_kept",
    ),
    F(
        "we don't have a loading dock at the Queens store",
        "No loading dock at the Queens store",
        "negation_kept",
        "we don't have a loading dock at the Queens store",
    ),
    F("I've never been to Japan.", "Has not been to Japan", "negation_kept"),
    F(
        "The venue doesn't allow open flames, so no candles on the tables.",
        "Open flames are not allowed at the venue",
        "negation_kept",
    ),
    F(
        "Skyline SaaS didn't renew their support add-on.",
        "Skyline SaaS did not renew the support add-on",
        "negation_kept",
        "Skyline SaaS didn't renew their support add-on",
    ),
    F("i'm not a morning person at all", "Is not a morning person", "negation_kept"),
    F(
        "Our techs don't carry spare compressors on the vans.",
        "Spare compressors are not carried on the techs' vans",
        "negation_kept",
    ),
    F(
        "I no longer drink alcohol.",
        "Does not drink alcohol anymore",
        "negation_kept",
        "I no longer drink alcohol",
    ),
    F(
        "The seller won't go below 410k.",
        "The seller will not accept less than 410k",
        "negation_kept",
    ),
    F(
        "nobody on my team uses the mobile app",
        "None of the team uses the mobile app",
        "negation_kept",
    ),
    F(
        "The clinic doesn't take card payments over the phone.",
        "Card payments over the phone are not taken by the clinic",
        "negation_kept",
        "doesn't take card payments over the phone",
    ),
    # ---------------------------------------- faithful: third person (speaker named)
    F(
        "I'm moving to Denver in August.",
        "Priya Raman is moving to Denver in August",
        "third_person",
        speaker="Priya Raman",
    ),
    F(
        "i handle all the carrier contracts here",
        "Marcus handles all the carrier contracts",
        "third_person",
        "i handle all the carrier contracts",
        speaker="Marcus Oyelaran",
    ),
    F(
        "I prefer WhatsApp over email for quick stuff",
        "Lena Vogt prefers WhatsApp over email for quick things",
        "third_person",
        speaker="Lena Vogt",
    ),
    F(
        "I'm the new ops lead at Brookfield Cold Storage.",
        "Tomás Reyes is the new ops lead at Brookfield Cold Storage",
        "third_person",
        speaker="Tomás Reyes",
    ),
    F(
        "I coach my son's under-10 soccer team",
        "Aisha coaches her son's under-10 soccer team",
        "third_person",
        "I coach my son's under-10 soccer team",
        speaker="Aisha Karim",
    ),
    F(
        "I'll approve the SOW once legal signs off.",
        "Dev Mehta will approve the SOW once legal signs off",
        "third_person",
        speaker="Dev Mehta",
    ),
    F(
        "I'm running the Q3 offsite for 60 people.",
        "Hannah Brooks is running the Q3 offsite for 60 people",
        "third_person",
        "running the Q3 offsite for 60 people",
        speaker="Hannah Brooks",
    ),
    F(
        "I sold four condos in Midtown last quarter.",
        "Rosa sold four condos in Midtown last quarter",
        "third_person",
        speaker="Rosa Delgado",
    ),
    F("i'm gluten free", "Kenji is gluten free", "third_person", speaker="Kenji Watanabe"),
    F(
        "I look after the renewals book for the commercial clients.",
        "Fiona Clarke looks after the renewals book for the commercial clients",
        "third_person",
        "the renewals book for the commercial clients",
        speaker="Fiona Clarke",
    ),
    F(
        "I work nights at the Joliet DC.",
        "Omar works nights at the Joliet DC",
        "third_person",
        speaker="Omar Haddad",
    ),
    F(
        "I run the front desk at Cedar Point Clinic.",
        "Grace Liu runs the front desk at Cedar Point Clinic",
        "third_person",
        "I run the front desk at Cedar Point Clinic",
        speaker="Grace Liu",
    ),
    F(
        "I'm learning to play the ukulele",
        "Sam Porter is learning to play the ukulele",
        "third_person",
        speaker="Sam Porter",
    ),
    F(
        "I don't drive, I take the train in",
        "Nadia does not drive and takes the train in",
        "third_person",
        speaker="Nadia Petrova",
    ),
    F(
        "I'm the admin for our HubSpot account.",
        "Ben Achebe is the admin for their HubSpot account",
        "third_person",
        "the admin for our HubSpot account",
        speaker="Ben Achebe",
    ),
    F(
        "I'm recruiting for three field engineer roles right now.",
        "Chloe is recruiting for three field engineer roles",
        "third_person",
        speaker="Chloe Martin",
    ),
    F(
        "uh, I'm usually at the Savannah port on mondays",
        "Ivan is usually at the Savannah port on Mondays",
        "third_person",
        speaker="Ivan Sokolov",
    ),
    F(
        "I ran the Berlin marathon last year.",
        "Mei ran the Berlin marathon last year",
        "third_person",
        "I ran the Berlin marathon last year",
        speaker="Mei Chen",
    ),
    F(
        "I sign off on all claims above 25k.",
        "Patrick Doyle signs off on all claims above 25k",
        "third_person",
        "I sign off on all claims above 25k",
        speaker="Patrick Doyle",
    ),
    F(
        "I have a standing 1:1 with the CFO every thursday",
        "Julia has a standing 1:1 with the CFO every Thursday",
        "third_person",
        speaker="Julia Novak",
    ),
    F(
        "I'm vegetarian, so skip the bbq for me",
        "Raj is vegetarian",
        "third_person",
        "I'm vegetarian",
        speaker="Raj Patel",
    ),
    F(
        "I manage twelve technicians across the north region.",
        "Elena Morales manages twelve technicians across the north region",
        "third_person",
        speaker="Elena Morales",
    ),
    F(
        "I'll be on leave from the 3rd to the 17th.",
        "Chris Adeyemi will be on leave from the 3rd to the 17th",
        "third_person",
        speaker="Chris Adeyemi",
    ),
    F(
        "I grew up in Cork.",
        "Siobhan grew up in Cork",
        "third_person",
        "I grew up in Cork",
        speaker="Siobhan Walsh",
    ),
    F(
        "i'm the one who books the venues for our sales kickoffs",
        "Leo books the venues for their sales kickoffs",
        "third_person",
        speaker="Leo Fischer",
    ),
    F(
        "I own the relationship with Tamarack Freight.",
        "Wendy Zhao owns the relationship with Tamarack Freight",
        "third_person",
        "I own the relationship with Tamarack Freight",
        speaker="Wendy Zhao",
    ),
    F(
        "I volunteer at the food bank on saturdays",
        "Ahmed volunteers at the food bank on Saturdays",
        "third_person",
        speaker="Ahmed Sayed",
    ),
    F(
        "I prefer the Seattle office, it's closer to home.",
        "Marta prefers the Seattle office",
        "third_person",
        "I prefer the Seattle office",
        speaker="Marta Kowalski",
    ),
    F(
        "I'm studying for my real-estate licence exam in the evenings.",
        "Dylan is studying for his real-estate licence exam in the evenings",
        "third_person",
        speaker="Dylan Shaw",
    ),
    F(
        "I take my holidays in late September usually",
        "Ingrid usually takes her holidays in late September",
        "third_person",
        speaker="Ingrid Larsen",
    ),
    F(
        "I'm the point of contact for the Halvorsen account.",
        "Noah Bennett is the point of contact for the Halvorsen account",
        "third_person",
        "the point of contact for the Halvorsen account",
        speaker="Noah Bennett",
    ),
    # ---------------------------------------- faithful: summary
    F(
        "So we talked for like an hour, but basically Redfern Freight wants to consolidate their "
        "three carriers into one by next year.",
        "Redfern Freight wants to consolidate their three carriers into one by next year",
        "summary",
    ),
    F(
        "I go to the gym Mon, Wed and Fri, usually around 6am, mostly weights.",
        "Goes to the gym Mon, Wed and Fri",
        "summary",
        "I go to the gym Mon, Wed and Fri",
    ),
    F(
        "The clinic's new phone system went live Tuesday; staff are still getting used to it and "
        "the hold music is awful.",
        "The clinic's new phone system went live Tuesday",
        "summary",
        "The clinic's new phone system went live Tuesday",
    ),
    F(
        "The Nguyens loved the Oak Street house, the kitchen especially, but they're worried "
        "about the commute and want to see two more places.",
        "The Nguyens loved the Oak Street house",
        "summary",
    ),
    F(
        "ok so for onboarding they want SSO, SCIM provisioning, and a sandbox. also they asked "
        "about audit logs.",
        "They want SSO, SCIM provisioning and a sandbox for onboarding",
        "summary",
    ),
    F(
        "my mum is visiting from Manila for three weeks in December, staying with us.",
        "Mum is visiting from Manila in December",
        "summary",
    ),
    F(
        "Tessaly Brokers renewed the fleet policy, after lots of back and forth on the deductible.",
        "Tessaly Brokers renewed the fleet policy",
        "summary",
        "Tessaly Brokers renewed the fleet policy",
    ),
    F(
        "The candidate, who's currently at DHL, interviewed well and the panel recommends an offer",
        "The panel recommends an offer for the candidate",
        "summary",
    ),
    F(
        "we're doing the company picnic at Lake Harriet, June 21, with food trucks and a DJ",
        "Company picnic at Lake Harriet on June 21",
        "summary",
    ),
    F(
        "I've been doing keto for about two months, lost a bit of weight, feeling good.",
        "Has been doing keto for about two months",
        "summary",
        "I've been doing keto for about two months",
    ),
    F(
        "The tech replaced the thermostat and cleaned the filters, and the customer signed the "
        "work order.",
        "The tech replaced the thermostat",
        "summary",
    ),
    F(
        "Lindqvist Storage is happy overall, though they hate the new label printer and want "
        "training for the night crew.",
        "Lindqvist Storage wants training for the night crew",
        "summary",
        "want training for the night crew",
    ),
    F(
        "we went to Crete in May, rented a car, the beaches were amazing, would totally go again",
        "Went to Crete in May",
        "summary",
    ),
    F(
        "Ok quick recap: the Wexford account is moving to annual billing starting next cycle, no "
        "other changes.",
        "The Wexford account is moving to annual billing starting next cycle",
        "summary",
        "the Wexford account is moving to annual billing starting next cycle",
    ),
    F(
        "I'm doing an evening MBA, two nights a week, plus coursework on weekends, it's a lot.",
        "Doing an evening MBA",
        "summary",
    ),
    F(
        "Pendle Events confirmed the caterer and the AV company but still haven't picked a "
        "photographer.",
        "Pendle Events confirmed the caterer and the AV company",
        "summary",
    ),
    F(
        "the warehouse doesn't do weekend receiving, but they do accept returns on saturdays",
        "The warehouse accepts returns on Saturdays",
        "summary",
        "they do accept returns on saturdays",
    ),
    F(
        "Honestly the client isn't thrilled about the price, but they signed the two-year deal "
        "anyway.",
        "The client signed the two-year deal",
        "summary",
    ),
    F(
        "I don't love running but I do a 5k every Sunday with my neighbour.",
        "Does a 5k every Sunday with neighbour",
        "summary",
        "I do a 5k every Sunday with my neighbour",
    ),
    F(
        "Anyway, the listing photos are done, the drone shots too, and the open house is set for "
        "Saturday.",
        "The open house is set for Saturday",
        "summary",
    ),
    # ---------------------------------------- unfaithful: figure
    U(
        "Kestrel runs 14 trucks out of the Joliet yard.",
        "Kestrel runs 15 trucks out of the Joliet yard",
        "figure",
    ),
    U("i do 40 pushups every morning", "Does 50 pushups every morning", "figure"),
    U(
        "We have 230 seats on the Growth plan.",
        "Has 320 seats on the Growth plan",
        "figure",
        "230 seats on the Growth plan",
    ),
    U(
        "The clinic sees about 60 patients a day.",
        "The clinic sees about 80 patients a day",
        "figure",
    ),
    U("the offsite is for 45 people, maybe a few more", "Offsite is for 54 people", "figure"),
    U(
        "Our reps closed 18 deals in March.",
        "Reps closed 19 deals in March",
        "figure",
        "closed 18 deals in March",
    ),
    U("The broker has 3 offices in Kent.", "The broker has 4 offices in Kent", "figure"),
    U(
        "Harwick Storage has 12 loading doors at the Tulsa site.",
        "Harwick Storage has 21 loading doors at the Tulsa site",
        "figure",
        "12 loading doors at the Tulsa site",
    ),
    U("the duplex has 3 bedrooms per unit", "The duplex has 2 bedrooms per unit", "figure"),
    U(
        "We need to fill 7 driver positions before peak.",
        "Needs to fill 8 driver positions before peak",
        "figure",
    ),
    U(
        "My commute is 25 minutes by bike.",
        "Commute is 35 minutes by bike",
        "figure",
        "My commute is 25 minutes by bike",
    ),
    U("The churn rate last quarter was 4.2%.", "Churn rate last quarter was 4.7%", "figure"),
    U(
        "field techs average 5 jobs per day",
        "Field techs average 6 jobs per day",
        "figure",
        "average 5 jobs per day",
    ),
    U(
        "We offer a 15% discount for annual prepay.",
        "Offers a 10% discount for annual prepay",
        "figure",
    ),
    U("I read 30 books last year.", "Read 13 books last year", "figure"),
    # ---------------------------------------- unfaithful: identifier
    U("Order PO-55812 is stuck at customs.", "Order PO-55821 is stuck at customs", "identifier"),
    U(
        "Ticket INC-40917 is about the label printer.",
        "Ticket INC-40971 is about the label printer",
        "identifier",
        "Ticket INC-40917",
    ),
    U(
        "Invoice INV-2024-0387 is overdue, can you chase?",
        "Invoice INV-2024-0378 is overdue",
        "identifier",
    ),
    U("Their account number is AC-771204.", "Account number is AC-771240", "identifier"),
    U("The pallet SKU is WH-PLT-4810.", "Pallet SKU is WH-PLT-4801", "identifier", "WH-PLT-4810"),
    U(
        "The policy number is HX-33091-B.",
        "Policy number is HX-33091-D",
        "identifier",
        "HX-33091-B",
    ),
    U(
        "MLS listing 2291847 is the Birch Lane house",
        "MLS listing 2291874 is the Birch Lane house",
        "identifier",
    ),
    U("the tracking number is 1Z9F42A80312", "Tracking number is 1Z9F42A80321", "identifier"),
    U(
        "work order WO-6623 was closed yesterday",
        "Work order WO-6632 was closed yesterday",
        "identifier",
        "work order WO-6623 was closed yesterday",
    ),
    U(
        "Requisition REQ-1187 is for the night dispatcher.",
        "Requisition REQ-1178 is for the night dispatcher",
        "identifier",
    ),
    U(
        "Their tenant ID is acme-prod-eu2",
        "Tenant ID is acme-prod-eu3",
        "identifier",
        "acme-prod-eu2",
    ),
    U(
        "Booking ref for the venue is EVT-90412.",
        "Booking ref for the venue is EVT-90421",
        "identifier",
    ),
    U(
        "Claim CLM-558203 is still open, adjuster hasn't called back.",
        "Claim CLM-558208 is still open",
        "identifier",
        "Claim CLM-558203 is still open",
    ),
    U(
        "Case #30918 is the thermostat warranty.",
        "Case #30981 is the thermostat warranty",
        "identifier",
    ),
    U(
        "Container MSKU 448102-7 arrives Thursday.",
        "Container MSKU 448102-1 arrives Thursday",
        "identifier",
    ),
    # ---------------------------------------- unfaithful: amount
    U("The deal is worth $48,000 a year.", "Deal is worth $84,000 a year", "amount"),
    U(
        "Our venue budget is £12,500.",
        "Venue budget is £15,500",
        "amount",
        "venue budget is £12,500",
    ),
    U(
        "the premium came to $2,340 per year",
        "Premium is $2,430 per year",
        "amount",
        "the premium came to $2,340",
    ),
    U("They pay €3.10 per pallet per day.", "Pays €3.40 per pallet per day", "amount"),
    U("Asking price is $615k, seller is firm-ish.", "Asking price is $651k", "amount"),
    U(
        "The onboarding fee is $1,500 one-off.",
        "Onboarding fee is $1,800 one-off",
        "amount",
        "The onboarding fee is $1,500 one-off",
    ),
    U(
        "I spend about $200 a month on groceries.",
        "Spends about $300 a month on groceries",
        "amount",
    ),
    U("The callout charge is $95.", "Callout charge is $59", "amount", "The callout charge is $95"),
    U("the candidate wants 72k base", "Candidate wants 77k base", "amount"),
    U("Catering quote came in at $38 per head.", "Catering quote is $36 per head", "amount"),
    U(
        "They're paying $9 per seat per month.",
        "Paying $19 per seat per month",
        "amount",
        "$9 per seat per month",
    ),
    U("The deposit is 5,000 euros.", "Deposit is 6,000 euros", "amount"),
    U("My gym membership is $45 a month.", "Gym membership is $54 a month", "amount"),
    U(
        "commission on the sale was $18,450",
        "Commission on the sale was $18,540",
        "amount",
        "commission on the sale was $18,450",
    ),
    # ---------------------------------------- unfaithful: date / time
    U(
        "Go-live is Tuesday the 14th.",
        "Go-live is Wednesday the 14th",
        "date",
        "Go-live is Tuesday the 14th",
    ),
    U("The lease starts March 1.", "Lease starts April 1", "date"),
    U("i'm off work from july 3 to july 10", "Off work from July 3 to July 12", "date"),
    U(
        "The install is booked for 9am Thursday.",
        "Install is booked for 10am Thursday",
        "date",
        "booked for 9am Thursday",
    ),
    U("Renewal is due on 30 September.", "Renewal is due on 30 October", "date"),
    U(
        "We do the stock count on the last Friday of every month.",
        "Stock count is on the last Thursday of every month",
        "date",
    ),
    U(
        "The gala is on Saturday, May 9.",
        "The gala is on Saturday, May 19",
        "date",
        "Saturday, May 9",
    ),
    U("the candidate can start on June 2", "Candidate can start on June 3", "date"),
    U("My flight to Lisbon leaves at 6:40 am.", "Flight to Lisbon leaves at 6:40 pm", "date"),
    U(
        "The clinic's flu shot day is November 12.",
        "Flu shot day is November 21",
        "date",
        "November 12",
    ),
    U("Open house is Sunday 1-3pm.", "Open house is Sunday 2-4pm", "date"),
    U("Contract ends 2025-06-30.", "Contract ends 2025-07-30", "date", "Contract ends 2025-06-30"),
    U("Our kickoff call is next Monday.", "Kickoff call is next Tuesday", "date"),
    U("i was born in 1987", "Born in 1989", "date"),
    U("The trial expires on the 21st.", "Trial expires on the 28th", "date"),
    # ---------------------------------------- unfaithful: e-mail address
    U(
        "send the quote to dana.whitfield@kestrelfreight.com",
        "Quote goes to dana.whitfeld@kestrelfreight.com",
        "email",
    ),
    U(
        "My email is tom.r@brookcold.io",
        "Email is tom.r@brookcold.com",
        "email",
        "tom.r@brookcold.io",
    ),
    U(
        "Invoices go to ap@harwickstorage.com.",
        "Invoices go to ar@harwickstorage.com",
        "email",
        "ap@harwickstorage.com",
    ),
    U("Please cc ops-team@parcelry.io on updates.", "Cc ops_team@parcelry.io on updates", "email"),
    U(
        "my personal email is mei.chen88@gmail.com",
        "Personal email is mei.chen89@gmail.com",
        "email",
    ),
    U(
        "The clinic's admin inbox is frontdesk@cedarpointclinic.org.",
        "Clinic admin inbox is frontdesk@cedarpointclinic.com",
        "email",
    ),
    U(
        "Contact the broker at j.okafor@halden-brokers.co.uk",
        "Broker contact is j.okafor@haldenbrokers.co.uk",
        "email",
        "j.okafor@halden-brokers.co.uk",
    ),
    U(
        "Resumes should go to talent@vantage3pl.com.",
        "Resumes go to talents@vantage3pl.com",
        "email",
    ),
    U("reach me at rosa@maplerowrealty.com", "Reachable at rose@maplerowrealty.com", "email"),
    U(
        "Send the BEO to events@orchidevents.co",
        "Send the BEO to event@orchidevents.co",
        "email",
        "events@orchidevents.co",
    ),
    U(
        "The support alias is help@trellisapps.dev.",
        "Support alias is support@trellisapps.dev",
        "email",
    ),
    U(
        "i use kenji.w@outlook.com for personal stuff",
        "Uses kenji.w@hotmail.com for personal stuff",
        "email",
    ),
    # ---------------------------------------- unfaithful: phone number
    U("call me on 07700 900412", "Phone is 07700 900421", "phone"),
    U(
        "The dispatch line is (312) 555-0187.",
        "Dispatch line is (312) 555-0178",
        "phone",
        "The dispatch line is (312) 555-0187",
    ),
    U(
        "Their front desk number is 020 7946 0321.",
        "Front desk number is 020 7946 0312",
        "phone",
        "020 7946 0321",
    ),
    U("my cell is 415-555-0199", "Cell is 415-555-0198", "phone"),
    U("Broker hotline: 1-800-555-0142.", "Broker hotline is 1-800-555-0124", "phone"),
    U(
        "For after-hours service call +44 161 496 0733.",
        "After-hours service: +44 161 496 0773",
        "phone",
        "+44 161 496 0733",
    ),
    U(
        "The venue coordinator's number is 604-555-0126.",
        "Venue coordinator's number is 604-555-0162",
        "phone",
    ),
    U("text me at +1 646 555 0140", "Can be texted at +1 646 555 0104", "phone"),
    U(
        "The warehouse gate phone is 555-0163 ext 22.",
        "Warehouse gate phone is 555-0163 ext 32",
        "phone",
        "555-0163 ext 22",
    ),
    U(
        "Recruiter's direct line: 0161 496 0902.",
        "Recruiter's direct line is 0161 496 0920",
        "phone",
    ),
    U("the listing agent is on 214-555-0117", "Listing agent is on 214-555-0171", "phone"),
    U(
        "Our office line is +61 2 5550 1294.",
        "Office line is +61 2 5550 1249",
        "phone",
        "+61 2 5550 1294",
    ),
    # ---------------------------------------- unfaithful: name
    U("Our contact at Kestrel is Dana Whitfield.", "Contact at Kestrel is Dana Whitford", "name"),
    U(
        "Marcus signed the carrier contract yesterday.",
        "Marius signed the carrier contract",
        "name",
        "Marcus signed the carrier contract",
    ),
    U("The new ops lead is Tomás Reyes.", "The new ops lead is Tomás Ruiz", "name", "Tomás Reyes"),
    U("my sister Anna is coming for the weekend", "Sister Hanna is coming for the weekend", "name"),
    U(
        "The decision maker at Redfern is Gail Horton.",
        "Decision maker at Redfern is Gail Morton",
        "name",
    ),
    U(
        "Fiona handles the renewals at Tessaly.",
        "Nora handles the renewals at Tessaly",
        "name",
        "Fiona handles the renewals at Tessaly",
    ),
    U("The tech who came out was Luis.", "The tech who came out was Louis", "name"),
    U("The candidate is Priyanka Desai.", "The candidate is Priyanka Dasani", "name"),
    U(
        "I'm going to Lisbon with Jorge in the spring",
        "Going to Lisbon with George in the spring",
        "name",
    ),
    U(
        "Our CSM at Parcelry is Hollie Grant.",
        "CSM at Parcelry is Hollie Brant",
        "name",
        "Hollie Grant",
    ),
    U(
        "The buyer's agent is Derek Simms from Lakeshore.",
        "The buyer's agent is Derek Sims from Lakeshore",
        "name",
    ),
    U("I'm the ops manager here.", "Omar Hadad is the ops manager", "name", speaker="Omar Haddad"),
    U("the dog's name is Biscuit", "Dog is named Brisket", "name", "the dog's name is Biscuit"),
    U("Dr. Anand runs the Tuesday clinic.", "Dr. Arnand runs the Tuesday clinic", "name"),
    U(
        "I lead the night shift at the Joliet DC.",
        "Igor Sokolov leads the night shift at the Joliet DC",
        "name",
        speaker="Ivan Sokolov",
    ),
    # ---------------------------------------- unfaithful: negation flipped
    U("We don't ship to PO boxes.", "Ships to PO boxes", "negation_flip"),
    U("i'm not vegetarian, my wife is", "Is vegetarian", "negation_flip", "i'm not vegetarian"),
    U("The clinic does not accept walk-ins.", "The clinic accepts walk-ins", "negation_flip"),
    U(
        "Bramble Logistics didn't renew the support plan.",
        "Bramble Logistics renewed the support plan",
        "negation_flip",
    ),
    U(
        "The candidate is open to relocating.",
        "The candidate is not open to relocating",
        "negation_flip",
        "The candidate is open to relocating",
    ),
    U(
        "We have a loading dock at the Queens store.",
        "No loading dock at the Queens store",
        "negation_flip",
    ),
    U(
        "I drink coffee after 4pm, it doesn't keep me up.",
        "Does not drink coffee after 4pm",
        "negation_flip",
    ),
    U(
        "The venue allows outside catering.",
        "The venue does not allow outside catering",
        "negation_flip",
        "The venue allows outside catering",
    ),
    U(
        "Halden's home policies don't include flood cover.",
        "Halden's home policies include flood cover",
        "negation_flip",
    ),
    U(
        "they're not using the mobile app yet",
        "They are using the mobile app",
        "negation_flip",
        "they're not using the mobile app yet",
    ),
    U("I never work on fridays.", "Works on Fridays", "negation_flip"),
    U(
        "The seller will negotiate on price.",
        "The seller will not negotiate on price",
        "negation_flip",
    ),
    U(
        "our techs don't do weekend callouts",
        "Techs do weekend callouts",
        "negation_flip",
        "our techs don't do weekend callouts",
    ),
    U("I'm not a fan of video calls.", "Is a fan of video calls", "negation_flip"),
    U(
        "The tenants have paid the deposit.",
        "The tenants have not paid the deposit",
        "negation_flip",
    ),
    # ---------------------------------------- unfaithful: antonym
    U(
        "Kinsale Freight is happy with the new routing.",
        "Kinsale Freight is unhappy with the new routing",
        "antonym",
    ),
    U("I prefer early meetings.", "Prefers late meetings", "antonym", "I prefer early meetings"),
    U(
        "The warehouse is understaffed this month.",
        "The warehouse is overstaffed this month",
        "antonym",
    ),
    U(
        "The broker increased the deductible.",
        "The broker decreased the deductible",
        "antonym",
        "increased the deductible",
    ),
    U(
        "Onboarding was easy for their admins.",
        "Onboarding was difficult for their admins",
        "antonym",
    ),
    U(
        "The Oak Street house is cheap for the area.",
        "The Oak Street house is expensive for the area",
        "antonym",
    ),
    U(
        "the clinic's wait times got shorter",
        "Clinic's wait times got longer",
        "antonym",
        "the clinic's wait times got shorter",
    ),
    U("I love spicy food", "Hates spicy food", "antonym"),
    U(
        "The client wants to expand the rollout.",
        "The client wants to shrink the rollout",
        "antonym",
    ),
    U(
        "Sales at the Dayton store went up in Q2.",
        "Sales at the Dayton store went down in Q2",
        "antonym",
        "went up in Q2",
    ),
    U(
        "The candidate's references were positive.",
        "The candidate's references were negative",
        "antonym",
    ),
    U(
        "The venue's ballroom is too small for us.",
        "The venue's ballroom is too large for them",
        "antonym",
    ),
    U(
        "we're adding a second shift at Tacoma",
        "Removing a second shift at Tacoma",
        "antonym",
        "adding a second shift at Tacoma",
    ),
    U(
        "my commute got faster since the new line opened",
        "Commute got slower since the new line opened",
        "antonym",
    ),
    U("The first response time was fast.", "The first response time was slow", "antonym"),
    # ---------------------------------------- unfaithful: added fact
    U(
        "Ferrow Cold Chain wants a demo next week.",
        "Ferrow Cold Chain wants a demo of route optimisation next week",
        "added_fact",
    ),
    U("I'm moving in August.", "Moving to Denver in August", "added_fact"),
    U(
        "The clinic closes at noon on Fridays.",
        "The clinic closes at noon on Fridays for staff training",
        "added_fact",
        "The clinic closes at noon on Fridays",
    ),
    U(
        "Tidewell Logistics invoices in euros.",
        "Tidewell Logistics invoices in euros because their HQ is in Dublin",
        "added_fact",
    ),
    U(
        "The candidate accepted the offer.",
        "The candidate accepted the offer and starts in June",
        "added_fact",
        "accepted the offer",
    ),
    U(
        "We use Greenhouse for recruiting.",
        "Uses Greenhouse and LinkedIn Recruiter for recruiting",
        "added_fact",
    ),
    U("The buyers want a garage.", "The buyers want a two-car garage", "added_fact"),
    U(
        "i play tennis on weekends",
        "Plays tennis on weekends at the club",
        "added_fact",
        "i play tennis on weekends",
    ),
    U(
        "Orchid Events booked the riverside venue.",
        "Orchid Events booked the riverside venue for the May gala",
        "added_fact",
    ),
    U(
        "The tech replaced the thermostat.",
        "The tech replaced the thermostat under warranty",
        "added_fact",
    ),
    U(
        "Pinecrest writes marine cargo policies.",
        "Pinecrest writes marine cargo policies in Florida",
        "added_fact",
        "Pinecrest writes marine cargo policies",
    ),
    U("My daughter plays cello.", "Daughter plays cello in the school orchestra", "added_fact"),
    U("Coldharbor signed the contract.", "Coldharbor signed a three-year contract", "added_fact"),
    U(
        "the Reno warehouse ships on tuesdays",
        "The Reno warehouse ships on Tuesdays via FedEx Freight",
        "added_fact",
        "the Reno warehouse ships on tuesdays",
    ),
    U("I'm studying for the CPA exam.", "Studying for the CPA exam with a tutor", "added_fact"),
    U(
        "Skyline SaaS asked about SSO.",
        "Skyline SaaS asked about SSO because of an audit",
        "added_fact",
        "Skyline SaaS asked about SSO",
    ),
    U(
        "I'm the admin for our HubSpot account.",
        "Ben Achebe is the admin for their HubSpot account and Salesforce org",
        "added_fact",
        speaker="Ben Achebe",
    ),
    # ---------------------------------------- unfaithful: unrelated
    U("ok thanks, talk tomorrow", "Prefers to be contacted on Tuesdays", "unrelated"),
    U(
        "Kestrel Freight runs cross-dock sites in Ohio.",
        "Customer uses Shopify for their storefront",
        "unrelated",
    ),
    U(
        "lol yeah that meeting was long",
        "Is allergic to shellfish",
        "unrelated",
        "that meeting was long",
    ),
    U("Can you resend the deck?", "Budget for Q4 is approved", "unrelated"),
    U("The weather in Tacoma is awful today.", "Tacoma hub runs two shifts", "unrelated"),
    U("sure, sounds good", "Wants a demo of the reporting module", "unrelated"),
    U(
        "I'll check with my manager and get back to you.",
        "Manager approved the purchase",
        "unrelated",
        "I'll check with my manager",
    ),
    U("great chatting, have a good weekend!", "Has a dog named Biscuit", "unrelated"),
    U("Hmm, let me think about the venue options.", "Booked the riverside venue", "unrelated"),
    U(
        "The onboarding call got moved, I'll send a new invite.",
        "Prefers Zoom over Teams",
        "unrelated",
    ),
    U("Just testing if this chat works.", "Works at Brookfield Cold Storage", "unrelated"),
]

# ---------------------------------------------------------------- checks
for _c in HOLDOUT:
    assert not _c.quote or _c.quote in _c.message, (_c.message, _c.quote)
    assert _c.kind in (FAITHFUL_KINDS if _c.faithful else UNFAITHFUL_KINDS), _c
    assert not _c.speaker or _c.speaker.split()[0] in _c.value or _c.kind == "name", _c
assert len(HOLDOUT) >= 340, len(HOLDOUT)
assert len({(c.message, c.value) for c in HOLDOUT}) == len(HOLDOUT), "duplicate (message, value)"
_faithful_share = sum(c.faithful for c in HOLDOUT) / len(HOLDOUT)
assert 0.5 <= _faithful_share <= 0.6, _faithful_share
_quoted_share = sum(bool(c.quote) for c in HOLDOUT) / len(HOLDOUT)
assert 0.28 <= _quoted_share <= 0.4, _quoted_share
assert sum(c.faithful and c.kind == "third_person" for c in HOLDOUT) >= 25


if __name__ == "__main__":
    counts = Counter((c.faithful, c.kind) for c in HOLDOUT)
    for faithful, kinds in ((True, FAITHFUL_KINDS), (False, UNFAITHFUL_KINDS)):
        for kind in kinds:
            label = "faithful" if faithful else "unfaithful"
            print(f"{label:10} {kind:15} {counts[(faithful, kind)]:4}")
    quoted = sum(bool(c.quote) for c in HOLDOUT)
    print(
        f"total {len(HOLDOUT)}  faithful {sum(c.faithful for c in HOLDOUT)}  "
        f"unfaithful {sum(not c.faithful for c in HOLDOUT)}  quoted {quoted}  "
        f"with speaker {sum(bool(c.speaker) for c in HOLDOUT)}"
    )
