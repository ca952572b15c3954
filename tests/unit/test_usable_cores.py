"""`0` threads means the cores this process may use, not the node's: a pod's CPU limit on a large
node would otherwise start a forward pass per node core."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retrieval_service.embedding import usable_cores

AFFINITY = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [
        ("max 100000\n", AFFINITY),  # no quota
        ("50000 100000\n", 1),  # half a core: still one thread
        ("100000 100000\n", 1),
        ("150000 100000\n", min(AFFINITY, 2)),  # a core and a half: two, rounded up
        (f"{100000 * (AFFINITY + 8)} 100000\n", AFFINITY),  # a quota above the affinity
        ("not a quota\n", AFFINITY),
        ("", AFFINITY),
    ],
)
def test_the_cgroup_quota_caps_the_cores(tmp_path: Path, cpu_max: str, expected: int) -> None:
    quota = tmp_path / "cpu.max"
    quota.write_text(cpu_max)
    assert usable_cores(quota) == expected


def test_without_a_cgroup_file_the_affinity_decides(tmp_path: Path) -> None:
    assert usable_cores(tmp_path / "absent") == AFFINITY


def test_the_affinity_counts_not_the_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert usable_cores(tmp_path / "absent") == 1
