"""False secret refusals: the share of generated CRM texts with identifiers that the secret rule
refuses (budget <= 0.1 %), and the share of card numbers in real layouts it refuses (100 %).

    .venv/bin/python -m bench.secret_refusals.run
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from bench.common import emit
from bench.secret_refusals.corpus import card_texts, crm_texts
from memory_service.kernel.adapters.secret_scanning import DetectSecretsScanner
from memory_service.kernel.domain.secrets import SecretDetector


def secret_refusal_figures(crm: int = 10_000, cards: int = 2_000) -> dict[str, Any]:
    detector = SecretDetector(DetectSecretsScanner())
    texts = crm_texts(crm)
    refused = [(text, detector.kind(text)) for text in texts]
    false = [(text, kind) for text, kind in refused if kind]
    card_corpus = card_texts(cards)
    missed = [text for text in card_corpus if not detector.kind(text)]
    return {
        "benchmark": "secret_refusals",
        "crm_texts": len(texts),
        "false_refusals": len(false),
        "false_refusal_rate": len(false) / len(texts),
        "false_refusals_by_kind": dict(Counter(kind for _, kind in false)),
        "false_refusal_examples": [text for text, _ in false[:5]],
        "card_texts": len(card_corpus),
        "cards_refused_rate": (len(card_corpus) - len(missed)) / len(card_corpus),
        "cards_missed_examples": missed[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crm", type=int, default=10_000)
    parser.add_argument("--cards", type=int, default=2_000)
    args = parser.parse_args()
    emit(secret_refusal_figures(args.crm, args.cards))


if __name__ == "__main__":
    main()
