"""A batch is checked for secrets item by item, and a long message of digit runs costs the
card-number check about a second. Checked inside the write transaction, a batch citing such
messages held SQLite's single writer for as long as all its checks took: every other tenant's
writes in the process queued behind it, and past the writer wait they failed UNAVAILABLE."""

from __future__ import annotations

import threading
import time

import grpc

from tests.e2e.helpers import create_pref
from tests.e2e.test_batch_create import append_batch, batch_request, item
from tests.support.servers import Client

# Runs of 64 ones: no 13-19 digit window passes Luhn, so every window of every run is tried.
SLOW = " ".join(["1" * 64] * 490)
ITEMS = 30


def test_another_tenants_write_does_not_wait_for_a_batchs_secret_checks(
    alice: Client, carol: Client
) -> None:
    texts = [f"note {n} {SLOW}" for n in range(ITEMS)]
    said = [
        m for start in range(0, ITEMS, 10) for m in append_batch(alice, texts[start : start + 10])
    ]
    items = [item(f"slow_{n}", f"note {n}", said[n].name) for n in range(ITEMS)]
    outcome: list[object] = []

    def attack() -> None:
        try:
            outcome.append(alice.memories.BatchCreateMemories(batch_request(items), timeout=300))
        except grpc.RpcError as error:
            outcome.append(error.code())

    attacker = threading.Thread(target=attack)
    attacker.start()
    try:
        time.sleep(1.0)  # the batch is checking its items now
        started = time.monotonic()
        create_pref(carol, "meeting_time", "I prefer morning meetings")
        waited = time.monotonic() - started
    finally:
        attacker.join(300)
    assert outcome, "the batch never answered"
    assert not isinstance(outcome[0], grpc.StatusCode), outcome
    assert waited < 8.0, f"another tenant's write waited {waited:.1f}s for the batch"
