"""Page tokens: signed for one caller and one query, and checked for shape on the way back."""

from __future__ import annotations

import base64
import json

import pytest
from crmmem.memory.v1 import memory_service_pb2 as svc

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Identity
from memory_service.kernel.transport.paging import ID, ORDINAL, PageTokens

ALICE = Identity("acme", "alice", frozenset())
TOKENS = PageTokens("k" * 64)


def token_for(request: svc.ListMemoriesRequest, identity: Identity = ALICE) -> str:
    return TOKENS.page(request, identity, [ID]).next_token("abc")


def refused(request: svc.ListMemoriesRequest, identity: Identity = ALICE) -> str:
    with pytest.raises(InvalidArgument) as error:
        TOKENS.page(request, identity, [ID])
    return error.value.violations[0].field


def test_a_token_continues_its_own_query_at_any_page_size() -> None:
    token = token_for(svc.ListMemoriesRequest(key="meeting_time", page_size=5))
    page = TOKENS.page(svc.ListMemoriesRequest(key="meeting_time", page_token=token), ALICE, [ID])
    assert page.after == ("abc",)
    assert page.size == 50


def test_a_token_is_refused_for_another_query_caller_tenant_or_key() -> None:
    token = token_for(svc.ListMemoriesRequest(key="meeting_time"))
    assert refused(svc.ListMemoriesRequest(key="other", page_token=token)) == "page_token"
    same = svc.ListMemoriesRequest(key="meeting_time", page_token=token)
    assert refused(same, Identity("acme", "bob", frozenset())) == "page_token"
    assert refused(same, Identity("other", "alice", frozenset())) == "page_token"
    with pytest.raises(InvalidArgument):
        PageTokens("z" * 64).page(same, ALICE, [ID])


@pytest.mark.parametrize("payload", [["zzz"], [None], [2**70], [-1], [[]], {"a": 1}, "x", []])
def test_forged_unsigned_tokens_are_invalid_argument(payload: object) -> None:
    """Unsigned base64 JSON was accepted as a cursor and reached SQL as any type."""
    raw = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
    for token in (raw, raw.rstrip("="), raw + ".AAAA", f"{raw}.{raw}", "!!!", "a.b.c"):
        assert refused(svc.ListMemoriesRequest(page_token=token)) == "page_token"


def test_a_signed_cursor_of_the_wrong_shape_is_refused() -> None:
    """Even a validly signed token must carry the cursor types the RPC declared."""
    request = svc.ListMemoriesRequest()
    for position in (["x" * 200], [7], [True], ["a", "b"], ["a\x00"]):
        token = TOKENS.encode(request, ALICE, list(position))
        with pytest.raises(InvalidArgument):
            TOKENS.page(svc.ListMemoriesRequest(page_token=token), ALICE, [ID])
    for position in ([2**31], [-1], ["1"], [1.5]):
        token = TOKENS.encode(request, ALICE, list(position))
        with pytest.raises(InvalidArgument):
            TOKENS.page(svc.ListMemoriesRequest(page_token=token), ALICE, [ORDINAL])


def test_negative_page_size_is_refused_and_large_is_capped() -> None:
    assert refused(svc.ListMemoriesRequest(page_size=-1)) == "page_size"
    assert TOKENS.page(svc.ListMemoriesRequest(page_size=10**9), ALICE, [ID]).size == 1000


def test_every_list_pages_alike_fetch_one_more_cut_and_issue_the_next_token() -> None:
    request = svc.ListMemoriesRequest(page_size=2)
    page = TOKENS.page(request, ALICE, [ORDINAL])
    assert (page.size, page.fetch, page.cursor(0)) == (2, 3, 0)
    shown, token = page.respond([1, 2, 3], lambda n: (n,))
    assert shown == [1, 2]
    following = TOKENS.page(
        svc.ListMemoriesRequest(page_size=2, page_token=token), ALICE, [ORDINAL]
    )
    assert following.cursor(0) == 2
    assert following.respond([3], lambda n: (n,)) == ([3], "")
    assert page.respond([1, 2], lambda n: (n,)) == ([1, 2], "")  # exactly a page: no empty next
    assert page.respond([], lambda n: (n,)) == ([], "")


def test_page_size_defaults_and_is_capped() -> None:
    assert TOKENS.page(svc.ListMemoriesRequest(), ALICE, [ID]).size == 50
    assert TOKENS.page(svc.ListMemoriesRequest(page_size=10**6), ALICE, [ID]).size == 1000
    with pytest.raises(InvalidArgument):
        TOKENS.page(svc.ListMemoriesRequest(page_size=-1), ALICE, [ID])
