"""The sidecar's BM25 tokenizer and term weights, and how hybrid search fuses two rankings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from retrieval_service import fusion
from retrieval_service.index import Hit
from retrieval_service.lexical import NO_TERMS, Bm25Encoder, term_index, tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which account placed ORD-48213?", ["account", "placed", "ord-48213", "ord", "48213"]),
        ("They pay NET-30.", ["pay", "net-30", "net", "30"]),
        ("$12,500 list, 12.5% off", ["12500", "list", "12.5", "off"]),
        ("a $120k upsell", ["120k", "120000", "upsell"]),
        ("What are Acme's payment terms?", ["acme", "payment", "term"]),
        ("Acme\u2019s meetings", ["acme", "meeting"]),
        ("renews 2026-09-30", ["renew", "2026-09-30", "2026", "09", "30"]),
        (
            "mail dana.okafor@contoso.com",
            ["mail", "dana.okafor@contoso.com", "dana", "okafor", "contoso", "com"],
        ),
        ("net-30,net-45", ["net-30", "net", "30", "net-45", "net", "45"]),
        ("the, of, and: who is it?", []),
        ("Jürgen MÜLLER, Straße 5", ["jürgen", "müller", "strasse", "5"]),
        ("\uff2f\uff32\uff24\uff0d\uff14\uff18", ["ord-48", "ord", "48"]),  # full-width ORD-48
        ("", []),
    ],
)
def test_tokens_keep_codes_whole_and_their_parts(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_a_token_longer_than_the_cap_is_dropped_not_truncated() -> None:
    assert tokens("x" * 65 + " kept") == ["kept"]


@pytest.mark.parametrize("amount", ["1" * 400 + "k", "9" * 309 + "m"])
def test_a_shorthand_amount_beyond_a_float_is_dropped_like_any_long_token(amount: str) -> None:
    """Scaled, it was infinity, which has no integer: the query (or document) failed."""
    assert tokens(f"budget {amount}") == ["budget"]
    assert Bm25Encoder().query(amount) == NO_TERMS
    assert Bm25Encoder().document(f"budget {amount}") == Bm25Encoder().document("budget")
    assert tokens(f"net 1,{amount}") == ["net", "1"]  # a list's items meet the same rule


def test_term_indices_do_not_depend_on_the_process() -> None:
    """Python's own hash() is salted per process: a query would miss every stored term."""
    script = "from retrieval_service.lexical import term_index; print(term_index('net-30'))"
    other = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == str(term_index("net-30"))
    assert 0 <= term_index("net-30") < 2**32  # Qdrant's sparse indices are 32-bit


def test_document_weights_saturate_with_repeats_and_shrink_with_length() -> None:
    encoder = Bm25Encoder(k1=1.2, b=0.75, average_length=4)
    once = dict(zip(*_terms(encoder, "net-30 invoices"), strict=True))
    three = dict(zip(*_terms(encoder, "invoices invoices invoices"), strict=True))
    long = dict(zip(*_terms(encoder, "invoices " + "other words here " * 4), strict=True))
    invoice = term_index("invoice")
    # tf=1, 4 terms of 4: (k1 + 1) / (1 + k1) = 1
    assert once[invoice] == pytest.approx(1.0)
    # tf=3, 3 terms: 3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 3 / 4)) -- more, but far less than 3x
    assert three[invoice] == pytest.approx(3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 0.75)))
    assert once[invoice] < three[invoice] < 2.2
    assert long[invoice] < once[invoice]


def test_query_weights_are_one_per_distinct_term_in_index_order() -> None:
    indices, values = _terms(Bm25Encoder(), "ORD-48213 ord-48213 status")
    assert list(indices) == sorted({term_index(t) for t in ("ord-48213", "ord", "48213", "status")})
    assert set(values) == {1.0}


def _terms(encoder: Bm25Encoder, text: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
    terms = encoder.query(text) if "status" in text else encoder.document(text)
    assert list(terms.indices) == sorted(set(terms.indices))
    return terms.indices, terms.values


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(i, score, 1, 1) for i, score in pairs]


def test_rrf_puts_a_document_both_lists_rank_well_first_and_scores_stay_in_0_1() -> None:
    dense = hits(("a", 0.9), ("b", 0.8), ("c", 0.7))
    sparse = hits(("b", 14.0), ("c", 9.0))
    fused = fusion.rrf([dense, sparse], limit=10)
    assert [h.id for h in fused] == ["b", "c", "a"]
    assert fusion.rrf([dense, dense], limit=1)[0].score == pytest.approx(1.0)
    assert all(0 < h.score <= 1 for h in fused)
    assert len(fusion.rrf([dense, sparse], limit=2)) == 2


def test_weighted_sum_mixes_cosine_with_normalised_bm25() -> None:
    dense = hits(("a", 0.80), ("b", 0.60))
    sparse = hits(("b", 20.0), ("c", 10.0))
    fused = {h.id: h.score for h in fusion.weighted(dense, sparse, 10, sparse_weight=0.5)}
    assert fused["b"] == pytest.approx(0.5 * 0.60 + 0.5 * 1.0)
    assert fused["a"] == pytest.approx(0.5 * 0.80 + 0.5 * 0.5)  # missing: the list's floor
    assert fused["c"] == pytest.approx(0.5 * 0.60 + 0.5 * 0.5)
    assert fusion.weighted(dense, [], 10, 0.3)[0].id == "a"  # no lexical match: dense order
