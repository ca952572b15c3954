"""What the user says applies at once, through both services as separate processes: a client
written from docs/clients.md appends the user's message and creates the memory an extractor
would write (a paraphrase, maybe a short quote). Faithful values are ACTIVE and recalled; a value
that changes a figure, an identifier, an e-mail address, a name, a date or a negation, says the
opposite or adds a fact stays a CANDIDATE whose reason names what the evidence lacks."""

from __future__ import annotations

import pytest
from crmmem.memory.v1 import memory_pb2, memory_service_pb2

from tests.e2e.helpers import ACTIVE, CANDIDATE, create_memory, provenance, say
from tests.e2e.test_recall import until_recalled
from tests.support.servers import Client, ServerProcess

# (what the user said, the quote the extractor kept, the value it wrote, a recall query)
FAITHFUL = [
    (
        "For long flights I prefer aisle seats, please remember that",
        "I prefer aisle seats",
        "prefers aisle seats on long flights",
        "which seat on a long flight?",
    ),
    (
        "This customer wants their orders in the usual packaging",
        "",
        "ship in the usual packaging",
        "how should orders be packed?",
    ),
    ("We pay on net 30 terms", "net 30", "payment terms are net 30", "payment terms"),
    (
        "I'm vegetarian, so no meat at the team dinner",
        "I'm vegetarian",
        "is vegetarian",
        "dietary needs for the dinner",
    ),
    ("Our fiscal year starts in April", "", "fiscal year begins in April", "fiscal year start"),
    ("My manager is Priya Shah", "", "reports to Priya Shah", "who is the manager?"),
    (
        "Please don't schedule anything on Fridays",
        "",
        "no meetings on Fridays",
        "can we meet on Friday?",
    ),
    (  # a synonym the service's thesaurus knows
        "My commute is really long since we moved",
        "",
        "commute has been very lengthy since moving",
        "how long is the commute?",
    ),
    (
        "I went to a support group yesterday",
        "",
        "Caroline attended a support group",
        "support group",
    ),
]

# (class, what the user said, the quote, the unfaithful value, what the reason must name)
UNFAITHFUL = [
    ("figure", "We pay on net 30 terms", "net 30", "payment terms are net 60", "'60'"),
    (
        "identifier",
        "Please resend invoice INV-20417 to their AP team",
        "",
        "resend invoice INV-20471 to AP",
        "'inv-20471'",
    ),
    (
        "amount",
        "The budget for the pilot is $45,000",
        "",
        "pilot budget is $54,000",
        "'54000'",
    ),
    (
        "date",
        "Our fiscal year starts in April",
        "",
        "fiscal year begins in March",
        "'march'",
    ),
    (
        "email",
        "Send the contract to dana.ortiz@acme.com",
        "",
        "send contracts to dana.ortis@acme.com",
        "'dana.ortis@acme.com'",
    ),
    ("name", "My manager is Priya Shah", "", "reports to Priya Patel", "'patel'"),
    (
        "negation",
        "I'm not vegetarian, but the team dinner can be",
        "",
        "is vegetarian",
        "negation",
    ),
    (
        "antonym",
        "For long flights I prefer aisle seats",
        "I prefer aisle seats",
        "prefers window seats on long flights",
        "'window' is the opposite of 'aisle'",
    ),
    (
        "added fact",
        "I love green tea",
        "",
        "loves green tea with oat milk",
        "'oat'",
    ),
    ("unrelated", "What's the weather like today?", "", "prefers morning meetings", "'morning'"),
]


@pytest.fixture
def user(recall_server: ServerProcess, tenant: str) -> Client:
    return recall_server.client(tenant, "caroline")


def write(
    user: Client, said: str, quote: str, value: str
) -> memory_service_pb2.CreateMemoryResponse:
    """As a client would: append what the user said, then create the extractor's memory."""
    message = say(user, None, said)
    return create_memory(
        user,
        "statement",
        value,
        kind=memory_pb2.MEMORY_KIND_FACT,
        evidence=provenance(message, quote=quote),
    )


@pytest.mark.parametrize(("said", "quote", "value", "query"), FAITHFUL)
def test_a_faithful_value_applies_at_once_and_is_recalled(
    user: Client, said: str, quote: str, value: str, query: str
) -> None:
    created = write(user, said, quote, value)
    assert created.revision.state == ACTIVE, created.revision.status_reason
    assert created.revision.status_reason == ""
    assert created.memory.applicable_revision.value == value
    until_recalled(user, query, value)


@pytest.mark.parametrize(("kind", "said", "quote", "value", "named"), UNFAITHFUL)
def test_an_unfaithful_value_is_a_candidate_naming_what_is_missing(
    user: Client, kind: str, said: str, quote: str, value: str, named: str
) -> None:
    created = write(user, said, quote, value)
    assert created.revision.state == CANDIDATE, kind
    assert created.revision.status_reason.startswith("UNGROUNDED:"), kind
    assert named in created.revision.status_reason, (kind, created.revision.status_reason)
    assert not created.memory.HasField("applicable_revision")
