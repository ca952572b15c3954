"""Fusing the dense and the sparse result lists into one ranking, in the sidecar, so both engines
(embedded and server) rank alike and the weighted sum, which needs both raw scores, is possible.

Scores stay in [0, 1], higher is closer, like the cosine similarity of dense-only search.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_service.index import Hit

RRF_K = 60  # the constant of the original reciprocal rank fusion paper; damps the top ranks


def rrf(lists: Sequence[Sequence[Hit]], limit: int, k: int = RRF_K) -> list[Hit]:
    """Reciprocal rank fusion: each list adds 1/(k + rank); scaled so that first in every
    list is 1. Ranks only, so BM25's unbounded scores and cosines need no common scale."""
    best = len(lists) / (k + 1)
    scores: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    for found in lists:
        for rank, one in enumerate(found, start=1):
            scores[one.id] = scores.get(one.id, 0.0) + 1 / (k + rank)
            hits.setdefault(one.id, one)
    return _ranked(hits, {i: s / best for i, s in scores.items()}, limit)


def weighted(
    dense: Sequence[Hit], sparse: Sequence[Hit], limit: int, sparse_weight: float
) -> list[Hit]:
    """(1 - w) * cosine + w * BM25 / the best BM25 score. A candidate missing from one list
    scored below that list's last entry: it gets the last entry's score, not zero."""
    top = max((h.score for h in sparse), default=0.0) or 1.0
    dense_score = {h.id: h.score for h in dense}
    sparse_score = {h.id: h.score / top for h in sparse}
    dense_floor = min(dense_score.values(), default=0.0)
    sparse_floor = min(sparse_score.values(), default=0.0)
    hits = {h.id: h for h in sparse}
    hits.update({h.id: h for h in dense})
    scores = {
        i: (1 - sparse_weight) * dense_score.get(i, dense_floor)
        + sparse_weight * sparse_score.get(i, sparse_floor)
        for i in hits
    }
    return _ranked(hits, scores, limit)


def _ranked(hits: dict[str, Hit], scores: dict[str, float], limit: int) -> list[Hit]:
    order = sorted(hits, key=lambda i: (-scores[i], i))[:limit]
    return [Hit(i, scores[i], hits[i].version, hits[i].revision_number) for i in order]
