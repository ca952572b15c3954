"""`0` threads means the cores this process may use, not the node's: a pod's CPU limit on a large
node would otherwise start a forward pass per node core. The cgroup files are laid out under a
temporary root as the kernel lays them out; the affinity is fixed at eight cores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retrieval_service.embedding.cores import cpu_quota, usable_cores

EIGHT = set(range(8))


@pytest.fixture(autouse=True)
def eight_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: EIGHT, raising=False)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def membership(tmp_path: Path, text: str) -> Path:
    write(tmp_path / "proc-cgroup", text)
    return tmp_path / "proc-cgroup"


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [
        ("max 100000\n", 8),  # no quota
        ("50000 100000\n", 1),  # half a core: still one thread
        ("100000 100000\n", 1),
        ("150000 100000\n", 2),  # a core and a half: two, rounded up
        ("300000 100000\n", 3),
        ("1600000 100000\n", 8),  # a quota above the affinity
        ("100000 0\n", 8),  # nothing a kernel writes: no quota
        ("-5 100000\n", 8),
        (f"{'9' * 400} 100000\n", 8),  # far above the affinity, no overflow
        ("not a quota\n", 8),
        ("", 8),
    ],
)
def test_a_v2_quota_caps_the_cores(tmp_path: Path, cpu_max: str, expected: int) -> None:
    root = tmp_path / "cgroup"
    write(root / "cpu.max", cpu_max)  # a container with its own cgroup namespace sees "0::/"
    assert usable_cores(root, membership(tmp_path, "0::/\n")) == expected


def test_a_parents_quota_binds_a_child_without_one(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "kubepods" / "cpu.max", "200000 100000\n")
    write(root / "kubepods" / "pod1" / "app" / "cpu.max", "max 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/kubepods/pod1/app\n")) == 2


def test_the_smallest_quota_on_the_way_up_wins(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "a" / "cpu.max", "400000 100000\n")
    write(root / "a" / "b" / "cpu.max", "300000 100000\n")
    write(root / "cpu.max", "max 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/a/b\n")) == 3


def test_a_host_path_missing_under_the_containers_mount_reads_the_mount_root(
    tmp_path: Path,
) -> None:
    """Sharing the host's cgroup namespace, the process sees the host's path, while the mount
    shows its own cgroup at the root."""
    root = tmp_path / "cgroup"
    write(root / "cpu.max", "100000 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/system.slice/docker-abc.scope\n")) == 1


@pytest.mark.parametrize("controllers", ["cpu,cpuacct", "cpu"])
def test_a_v1_quota_caps_the_cores(tmp_path: Path, controllers: str) -> None:
    root = tmp_path / "cgroup"
    write(root / controllers / "docker" / "x" / "cpu.cfs_quota_us", "250000\n")
    write(root / controllers / "docker" / "x" / "cpu.cfs_period_us", "100000\n")
    lines = f"12:memory:/docker/x\n4:{controllers}:/docker/x\n0::/\n"
    assert usable_cores(root, membership(tmp_path, lines)) == 3


def test_v1_minus_one_is_no_quota(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "cpu" / "cpu.cfs_quota_us", "-1\n")
    write(root / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cpu_quota(root, membership(tmp_path, "1:cpu:/\n0::/\n")) is None
    assert usable_cores(root, membership(tmp_path, "1:cpu:/\n0::/\n")) == 8


def test_without_cgroup_files_the_affinity_decides(tmp_path: Path) -> None:
    assert usable_cores(tmp_path / "absent", tmp_path / "absent-membership") == 8
    assert usable_cores(tmp_path / "absent", membership(tmp_path, "garbage\n\n0::/x\n")) == 8


def test_the_affinity_counts_not_the_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert usable_cores(tmp_path, tmp_path / "absent") == 1


def test_without_an_affinity_call_the_machines_count_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """macOS and Windows have no `sched_getaffinity`: `0` threads still resolves."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert usable_cores(tmp_path, tmp_path / "absent") == 6


def test_a_smaller_quota_on_a_parent_beats_the_childs(tmp_path: Path) -> None:
    """Stopping at the first quota found on the way up would read 4 here."""
    root = tmp_path / "cgroup"
    write(root / "a" / "b" / "cpu.max", "400000 100000\n")
    write(root / "a" / "cpu.max", "100000 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/a/b\n")) == 1


def test_a_v1_pair_of_controllers_mounted_as_cpu_alone_is_found(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "cpu" / "cpu.cfs_quota_us", "200000\n")
    write(root / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert usable_cores(root, membership(tmp_path, "3:cpuacct,cpu:/\n")) == 2


def test_a_path_climbing_out_stays_under_the_mount(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(tmp_path / "cpu.max", "100000 100000\n")  # above the mount: never read
    write(root / "cpu.max", "max 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/../..\n")) == 8


def test_only_the_v2_line_reads_cpu_max(tmp_path: Path) -> None:
    """A v1 hierarchy with no controllers named (`1::/x`) is not the unified one."""
    root = tmp_path / "cgroup"
    write(root / "cpu.max", "100000 100000\n")
    assert usable_cores(root, membership(tmp_path, "1::/\n")) == 8


def test_a_zero_quota_is_no_quota(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "cpu.max", "0 100000\n")
    assert usable_cores(root, membership(tmp_path, "0::/\n")) == 8


def test_at_least_one_core(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set())
    assert usable_cores(tmp_path, tmp_path / "absent") == 1
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cores(tmp_path, tmp_path / "absent") == 1


def test_a_cgroup_name_that_is_not_utf8_finds_no_quota(tmp_path: Path) -> None:
    (tmp_path / "proc-cgroup").write_bytes(b"0::/caf\xe9\n")
    assert usable_cores(tmp_path / "cgroup", tmp_path / "proc-cgroup") == 8
