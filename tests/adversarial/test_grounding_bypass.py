"""Values that share most words with their evidence but say something else are not grounded:
a dropped or added negation, one word swapped for its opposite, a number spelled differently, a
meaning-changing ending, or the evidence's words repeated to outvote a word of the value's own."""

from __future__ import annotations

import grpc
import pytest

from tests.e2e.helpers import (
    ACTIVE,
    CANDIDATE,
    correct,
    create_memory,
    expect_error,
    get,
    provenance,
    say,
)
from tests.support.servers import Client

# (what the user said, the value an assistant stores as the user's own statement)
TWISTED = [
    ("Don't call me on Mondays", "call me on Mondays"),
    ("Please call me on Mondays", "do not call me on Mondays"),
    ("Call me on Mondays", "never call call call call me on Mondays"),
    ("I hate Monday calls", "I love Monday calls"),
    ("Give them a discount of fifty percent", "a discount of fifteen percent"),
    ("Send paper invoices", "send paperless invoices"),
    ("Stop sending invoices by email", "send invoices by email"),
    ("I can\u2019t do calls before nine", "can do calls before nine"),
]


@pytest.mark.parametrize(("said", "value"), TWISTED)
def test_a_twisted_value_is_a_candidate(alice: Client, said: str, value: str) -> None:
    message = say(alice, None, said)
    created = create_memory(alice, "call_policy", value, evidence=message)
    assert created.revision.state == CANDIDATE, (said, value)
    assert created.revision.status_reason.startswith("UNGROUNDED:")
    quoted = create_memory(
        alice, "call_policy_quoted", value, evidence=provenance(message, quote=said)
    )
    assert quoted.revision.state == CANDIDATE, (said, value)


def test_a_twisted_correction_does_not_replace_the_value(alice: Client) -> None:
    said = say(alice, None, "Please call me on Mondays")
    created = create_memory(alice, "call_policy", "call me on Mondays", evidence=said)
    assert created.revision.state == ACTIVE
    later = say(alice, None, "Don't call me on Mondays, I said")
    twisted = correct(alice, created.memory, "call me on Mondays and Tuesdays", evidence=later)
    assert twisted.revision.state == CANDIDATE
    honest = correct(alice, twisted.memory, "don't call me on Mondays", evidence=later)
    assert honest.revision.state == ACTIVE
    assert get(alice, created.memory.name).applicable_revision.value == "don't call me on Mondays"


def test_a_quote_that_leaves_out_the_negation_still_reads_negated(alice: Client) -> None:
    message = say(alice, None, "Thanks! Don't call me on Mondays.")
    cut = create_memory(
        alice,
        "call_policy",
        "call me on Mondays",
        evidence=provenance(message, quote="call me on Mondays"),
    )
    assert cut.revision.state == CANDIDATE
    assert cut.revision.status_reason.startswith("UNGROUNDED:")


def test_a_quote_is_whole_words_of_its_evidence(alice: Client) -> None:
    message = say(alice, None, "Please wire 15000 euros to the supplier")
    expect_error(
        lambda: create_memory(
            alice, "wire_amount", "wire 1500", evidence=provenance(message, quote="wire 1500")
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "QUOTE_NOT_IN_EVIDENCE",
    )
    whole = create_memory(
        alice, "wire_amount", "wire 15000", evidence=provenance(message, quote="wire 15000")
    )
    assert whole.revision.state == ACTIVE
