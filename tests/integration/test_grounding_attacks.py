"""What a hostile review found the grounding rule let through, or choked on, kept as tests: each
value below says something its message does not, and is refused with the service's thesaurus
plugged in and without it. Inputs built to make the rule's expressions backtrack are answered at
once."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from memory_service.memories.adapters.thesaurus import open_thesaurus
from memory_service.memories.domain import grounding

# (the value an extractor wrote, what the user said)
UNFAITHFUL = [
    # negations spelled without an apostrophe or with another one, or in a clause of their own
    ("wants a demo", "I dont want a demo"),
    ("wants a demo", "I wont want a demo"),
    ("wants a demo", "I don\u00b4t want a demo"),
    ("wants a demo", "I don`t want a demo"),
    ("wants a demo", "I don\u02bct want a demo"),
    ("will renew", "I'd love to renew but can't"),
    ("calls on Fridays", "Calls on Fridays, please don't"),
    ("interested in a demo", "Interested in a demo? Nope."),
    ("wants a demo", "Demo: no."),
    ("calls on Fridays", "Call on Fridays? Never."),
    ("happy with support", "I'm happy with support, not!"),
    ("wants a demo", "Demo? Not wanted."),
    ("offers decaf", "We don't offer decaf, never have."),
    ("wants gluten", "I want gluten-free"),
    ("is vegetarian", "I'm non-vegetarian"),
    ("uses HubSpot and Salesforce", "We use HubSpot but never Salesforce"),
    ("not interested", "not only interested but excited"),
    ("uses Salesforce", "We used to use Salesforce, now HubSpot"),
    ("is vegetarian", "I used to be vegetarian"),
    ("approves the budget", "Do I approve the budget?"),
    # times, dates and figures
    ("meeting at 10 am", "meeting at 10 pm"),
    ("call at 5am", "call at 5pm, not at 5am"),
    ("renewal in May", "renewal in March"),
    ("kickoff May 5", "kickoff June 5"),
    ("renewal on 2024-03-05", "renewal on 2024-05-03"),
    ("renewal on 03/05/2024", "renewal on 05/03/2024"),
    ("since 2020", "until 2020"),
    ("5 seats", "five hundred seats"),
    ("budget 5 usd", "budget $5 million"),
    ("budget is 2", "budget is 2 billion"),
    ("has 50\u00ad0 users", "We have 50 users and 0 complaints"),
    ("has 50\u200b0 users", "We have 50 users and 0 complaints"),
    # identifiers and single letters
    ("order BX 440 R", "order BX 440 B"),
    ("ticket 123/A", "ticket 123/B"),
    ("gate B", "gate A"),
    ("Plan B", "Plan A"),
    ("row 12 seat C", "row 12 seat D"),
    ("John F. Kennedy", "John K. Kennedy"),
    ("order BX\u2011440\u2011R", "order BX-440-B"),
    ("order BX\u2013440\u2013R", "order BX-440-B"),
    ("order BX/440/R", "order BX/440/B"),
    # a capitalised first word is not the speaker's name when the evidence names another
    ("Salesforce is our CRM", "I use HubSpot as our CRM"),
    ("Google is the employer", "I work at Apple"),
    ("Acme is our vendor", "Our vendor is Globex"),
    ("Zoom is preferred for calls", "I prefer Teams for calls"),
    # synonyms that bridged to another meaning, and opposites
    ("delivered 500 units", "I ordered 500 units"),
    ("loves Salesforce", "We're locked into Salesforce"),
    ("loves the pricing", "The pricing is crazy"),
    ("went to Acme HQ", "I called Acme HQ"),
    ("joined Acme", "I visited Acme"),
    ("approved the proposal", "I decided to reject the proposal"),
    ("Acme is a customer", "Acme is our vendor"),
    ("finished the migration", "I started the migration"),
    ("stopped the pilot", "We started the pilot"),
    ("wants to add seats", "I want to subtract seats"),
    ("wants it sooner", "I want it later"),
    # names: said of someone else, or spelled otherwise
    ("Karim is the decision maker", "The decision maker is Hassan, not Karim, Karim just runs it."),
    ("Ama is head roaster", "I'm head roaster, Ama runs the cafe side."),
    ("Brother Tomas is visiting", "My brother Tomasz is visiting next week."),
    # phrasal verbs, set phrases and light verbs read for what they mean, never against it
    ("prices fell this year", "Our prices went up this year."),
    ("prices went down this year", "Our prices rose this year."),
    ("the fryer works again", "The fryer broke down on Friday."),
    ("the fax machine is broken", "The fax machine is working again."),
    ("ordered enough insulation", "The contractor ordered too little insulation."),
    ("went to Acme HQ", "I called Acme HQ"),
    ("gave budget approval", "The client refused budget approval."),
    ("has to validate every lot", "The lab doesn't have to validate every lot."),
    ("payment due to Acme", "Acme pays us by the end of the month."),
    ("signed up for the webinar", "I called off the webinar."),
    # a thesaurus relation to a word the value says itself adds a fact ("baby girl")
    ("sister had a baby girl", "My sister had a baby."),
    (
        "Ravi, Ridgeway's head of IT, is the new point of contact",
        "Ravi is the new point of contact at Ridgeway.",
    ),
    (
        "wants to reduce the order volume in Q4",
        "Bramwell wants to increase the order volume in Q4.",
    ),
    ("finds running stressful", "I find running relaxing."),
    # the second review: light verbs, phrasal verbs and set phrases read against their meaning
    ("Got a refund from Acme", "I asked Acme for a refund."),
    ("Got a 10% discount from Acme", "We gave Acme a 10% discount."),
    ("Got a 15% discount from Acme", "We offered Acme a 15% discount."),
    ("Legal gave approval on the MSA", "Legal withheld approval on the MSA."),
    ("Got approval from legal", "We're still waiting for approval from legal."),
    ("Found a cheaper vendor", "I'm looking for a cheaper vendor."),
    ("Found the signed contract", "I lost the signed contract."),
    ("Handles the Acme account", "I lost the Acme account last month."),
    ("Priya handles renewals", "Priya complained about renewals."),
    ("Priya is involved in the Acme deal", "Priya was removed from the Acme deal."),
    ("Price includes tax", "The price is $500 plus tax."),
    ("Deal includes onboarding", "Onboarding costs extra on top of the deal."),
    ("Team consists of 5 engineers", "We need 5 more engineers on the team."),
    ("Spends $50k a month on renewals", "We make $50k a month from renewals."),
    ("Spent $20k on Gong", "We saved $20k by dropping Gong."),
    ("User got fired", "I fired my assistant yesterday."),
    ("Pushed back the meeting to Monday", "We pushed the meeting up to Monday."),
    ("Kicked off the rollout in Q3", "We kicked the rollout to Q3."),
    ("Price went down", "In the end it came down to price."),
    ("Orders were delivered in May", "Orders dropped off sharply in May."),
    ("Churn went down after the fall launch", "Churn went down after the spring launch."),
    ("Churn fell after the fall launch", "Churn fell after the spring launch."),
    ("Renewal is in the fall", "Usage fell a lot, renewal is in spring."),
    ("Resolved the invoice issue", "I'll sort out the invoice issue tomorrow."),
    ("Dislikes looking after the dog", "I can't look after the dog this weekend."),
    ("Delivered the proposal to Acme", "Acme and I walked through the proposal hand in hand."),
    ("Acme turned down the offer", "Acme didn't turn down the offer, they just asked for time."),
    ("Gave up on the Acme deal", "We haven't given up on the Acme deal."),
    ("Got the contract from Acme", "I sent Acme the contract."),
    ("Printer is not broken", "The printer is broken."),
    ("The laptop is broken", "Nothing is broken on the laptop."),
    ("User was not sent the link", "The link you sent is broken."),
    ("No Salesforce sync", "Our Salesforce sync is broken."),
    ("Shipments did not arrive", "The shipments arrived out of order."),
    ("No quote by line item", "I broke down the quote by line item."),
    ("Has no seats for the team", "We have too few seats for the team."),
    ("Customer loves the late delivery", "The customer is mad about the late delivery."),
    ("Will call Acme tomorrow", "I'll go by Acme tomorrow."),
    ("Will call their office Tuesday", "I'll go by their office Tuesday."),
    ("Needs to sign the contract", "Legal already signed the contract."),
    ("Needs to cancel", "I might cancel."),
    ("Acme requires a discount", "Acme has to approve any discount."),
    ("The renewal requires legal review", "The renewal delay has to do with legal review."),
    ("Acme's CFO is gone", "Acme's CFO has been to our office twice."),
    ("Needs no more than 20 seats", "We need no fewer than 20 seats."),
    ("Budget is no more than $50k", "Our budget is no less than $50k."),
    ("Over budget", "We need more budget."),
    ("User exceeded their quota", "I need more quota."),
    ("Requested a demo", "I wanted a demo but my boss said no."),
    ("Founded Acme", "I own Acme."),
    ("Did not sign with Acme", "We signed with Acme,not Globex."),
]

# Paraphrases that say the same thing in other words (phrasal verbs, set phrases, light verbs).
FAITHFUL = [
    ("shipping costs rose this year", "Our shipping costs went up this year."),
    ("shipping costs went up", "Shipping costs rose in March."),
    ("The fryer stopped working on Friday", "The fryer broke down on Friday."),
    ("The fax machine is not working", "The fax machine is broken again."),
    ("ordered too little insulation", "The contractor didn't order enough insulation."),
    ("client gave budget approval", "The client approved the budget yesterday."),
    ("broker handles consolidation of the shipments", "The broker will consolidate the shipments."),
    ("Has not gone to the gym since March", "I haven't been to the gym since March."),
    ("cancelled the webinar", "We called off the webinar."),
    ("loves Korean food", "I'm crazy about Korean food."),
    ("The parts did not meet spec", "The parts weren't up to spec."),
    # a dot, comma or colon inside a word ends no clause: ".no" is not a negation
    (
        "send the quote to orders@vesterlund.no",
        "Please send the quote to orders@vesterlund.no by Friday.",
    ),
    ("call at 9:30 on Node.js support", "Call at 9:30 about Node.js support."),
    ("Halcyon stopped using the legacy sync", "Halcyon no longer uses the legacy sync."),
    ("no more paper invoices", "Please don't send paper invoices anymore."),
    ("goes running three times a week", "I run three times a week."),
    ("Uses Slack", "We use Slack,not Teams."),
    ("Does not work with offshore freelancers", "We don't work with offshore freelancers."),
    ("The printer is not working", "The printer doesn't work."),
    ("Prices went down", "Prices decreased this quarter."),
    ("Sales went up in March", "Sales increased in March."),
    ("Prices rose", "Prices increased."),
    (
        "Thursday items include sending the quote",
        "Items for Thursday: 1) call Dunmore 2) send the quote",
    ),
    (
        "donor base consists largely of retired teachers",
        "Our donor base is mostly retired teachers.",
    ),
]


@pytest.fixture(params=["lexicon", "thesaurus"])
def rule(request: pytest.FixtureRequest) -> Iterator[None]:
    grounding.use_thesaurus(open_thesaurus() if request.param == "thesaurus" else None)
    yield
    grounding.use_thesaurus(None)


@pytest.mark.parametrize(("value", "said"), UNFAITHFUL)
def test_an_unfaithful_value_is_refused(rule: None, value: str, said: str) -> None:
    assert grounding.grounding(value, "", said).startswith("UNGROUNDED:"), (value, said)


@pytest.mark.parametrize(("value", "said"), FAITHFUL)
def test_a_faithful_rewording_applies(rule: None, value: str, said: str) -> None:
    assert grounding.grounding(value, "", said) == "", (value, said)


def test_a_name_at_a_sentence_start_is_known_by_the_thesaurus() -> None:
    """ "Sunil" opens its sentence: only a thesaurus tells it from an English word."""
    grounding.use_thesaurus(open_thesaurus())
    try:
        said = "Sunil manages Oak Terrace and Rekha manages Pine Hill."
        assert grounding.grounding("Rekha manages Oak Terrace", "", said).startswith("UNGROUNDED:")
        assert grounding.grounding("Rekha manages Pine Hill", "", said) == ""
    finally:
        grounding.use_thesaurus(None)


def test_a_quote_the_evidence_does_not_hold_supports_nothing() -> None:
    """An archive may claim a quote its message does not hold: the value is not grounded."""
    reason = grounding.grounding(
        "prefers morning meetings", "I prefer morning meetings", "hello there"
    )
    assert reason == "UNGROUNDED: the quote does not occur in its evidence"


BACKTRACKING = [
    ("sizes", "Sizes 1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17-18-19-20-21-22-23-24-x-"),
    ("Sizes 1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17-18-19-20-21-22-23-24-x-", "sizes"),
    ("x", "a-" * 16_000),
    ("x", "a." * 16_000 + "@"),
]


@pytest.mark.parametrize(("value", "said"), BACKTRACKING)
def test_crafted_text_is_answered_at_once(rule: None, value: str, said: str) -> None:
    """Each took seconds to minutes before (6.9 s for the first, doubling with each segment);
    a second is far above what they take now, and far below what a backtracking one takes."""
    started = time.perf_counter()
    grounding.grounding(value, "", said)
    assert time.perf_counter() - started < 1.0
