"""A batch is checked for secrets item by item, and a long message of digit runs costs the
card-number check about half a second of CPU. Checked inside the write transaction, a batch
citing such messages held SQLite's single writer for as long as all its checks took: every
other tenant's writes in the process queued behind it, and past the writer wait they failed
UNAVAILABLE.

The batch is sized to the machine (its checks cost some seconds of CPU however fast the cores
are), the other tenant writes once the server is seen spending CPU on the checks (not after a
fixed sleep), and its wait is compared with what was left of the batch then: held behind the
checks, it would have waited all of it."""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

import grpc

from memory_service.kernel.adapters.secret_scanning import DetectSecretsScanner
from memory_service.kernel.domain.rules import MAX_BATCH_ITEMS
from memory_service.kernel.domain.secrets import SecretDetector
from tests.e2e.helpers import create_pref
from tests.e2e.test_batch_create import append_batch, batch_request, item
from tests.support.polling import eventually
from tests.support.servers import Client, ServerProcess

# Runs of 64 ones: no 13-19 digit window passes Luhn, so every window of every run is tried.
SLOW = " ".join(["1" * 64] * 490)
CHECKS_CPU = 5.0  # seconds of CPU the batch's checks cost in all, whatever the machine


def check_cpu() -> float:
    """The CPU one item's check costs on this machine (the server runs the same check)."""
    detector = SecretDetector(DetectSecretsScanner())
    started = time.process_time()
    detector.kind(f"note 0 {SLOW}")
    return time.process_time() - started


def cpu_seconds(pid: int) -> float:
    """The CPU a process has used so far (Linux: /proc/PID/stat, utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_another_tenants_write_does_not_wait_for_a_batchs_secret_checks(
    memory_server: ServerProcess, alice: Client, carol: Client
) -> None:
    per_check = check_cpu()
    count = min(MAX_BATCH_ITEMS, max(8, math.ceil(CHECKS_CPU / per_check)))
    texts = [f"note {n} {SLOW}" for n in range(count)]
    said = [
        m for start in range(0, count, 10) for m in append_batch(alice, texts[start : start + 10])
    ]
    items = [item(f"slow_{n}", f"note {n}", said[n].name) for n in range(count)]
    outcome: list[object] = []
    answered: list[float] = []

    def attack() -> None:
        try:
            outcome.append(alice.memories.BatchCreateMemories(batch_request(items), timeout=600))
        except grpc.RpcError as error:
            outcome.append(error.code())
        answered.append(time.monotonic())

    pid = memory_server.process.pid
    before = cpu_seconds(pid)
    attacker = threading.Thread(target=attack)
    attacker.start()
    try:
        eventually(  # the batch is checking its items now
            lambda: cpu_seconds(pid) - before >= 2 * per_check,
            300,
            "the server never spent CPU on the batch's checks",
            interval=0.02,
        )
        started = time.monotonic()
        create_pref(carol, "meeting_time", "I prefer morning meetings")
        waited = time.monotonic() - started
    finally:
        attacker.join(600)
    assert outcome, "the batch never answered"
    assert not isinstance(outcome[0], grpc.StatusCode), outcome
    left = answered[0] - started
    print(
        f"\n{count} items at {per_check:.2f} s of CPU each: the other tenant waited "
        f"{waited:.2f} s of the {left:.2f} s the batch still took"
    )
    assert waited < left / 3, f"another tenant's write waited {waited:.1f}s for the batch"
