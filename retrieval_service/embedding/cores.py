"""How many cores `0` threads means: the ones this process may run on, capped by the CPU quota of
its cgroup. `os.cpu_count()` counts the node's: a pod limited to two cores on a 64-core node would
start 64 forward passes side by side, each getting a thirty-second of a core."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath

CGROUP_ROOT = Path("/sys/fs/cgroup")
MEMBERSHIP = Path("/proc/self/cgroup")


def usable_cores(root: Path = CGROUP_ROOT, membership: Path = MEMBERSHIP) -> int:
    """The CPU affinity (the machine's count where there is none, as on macOS), capped by the
    smallest quota on the way from this process's cgroup up to the root (whole cores, rounded
    up)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    quota = cpu_quota(root, membership)
    return max(1, cores if quota is None else min(cores, quota))


def cpu_quota(root: Path = CGROUP_ROOT, membership: Path = MEMBERSHIP) -> int | None:
    """The smallest CPU quota over this process's cgroup and its ancestors, cgroup v2 (`cpu.max`)
    or v1 (`cpu.cfs_quota_us`), in whole cores; None without one. A parent's quota binds the
    children too, and a container that shares the host's cgroup namespace sees a path that does
    not exist under its own mount, whose root is then its cgroup: every existing level counts."""
    try:
        lines = membership.read_text().splitlines()
    except (OSError, ValueError):  # a cgroup name that is not UTF-8: no quota found, no crash
        return None
    quotas: list[int] = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        number, controllers, path = fields
        if number == "0" and not controllers:
            quotas += _along(path, [root], _v2)
        elif "cpu" in controllers.split(","):
            quotas += _along(path, [root / controllers, root / "cpu"], _v1)
    return min(quotas) if quotas else None


def _along(path: str, mounts: list[Path], read: Callable[[Path], int | None]) -> list[int]:
    """Every quota from the cgroup's folder up to the mount's root, under each mount."""
    parts = [p for p in PurePosixPath(path).parts if p not in ("/", "..", ".")]
    found: list[int] = []
    for mount in dict.fromkeys(mounts):
        for depth in range(len(parts), -1, -1):
            cores = read(mount.joinpath(*parts[:depth]))
            if cores is not None:
                found.append(cores)
    return found


def _v2(folder: Path) -> int | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()
    except (OSError, ValueError):
        return None
    return _whole_cores(quota, period)


def _v1(folder: Path) -> int | None:
    try:
        quota = (folder / "cpu.cfs_quota_us").read_text()
        period = (folder / "cpu.cfs_period_us").read_text()
    except (OSError, ValueError):
        return None
    return _whole_cores(quota, period)


def _whole_cores(quota: str, period: str) -> int | None:
    """`max` (v2) or -1 (v1) is no quota; so is anything a kernel would not write."""
    try:
        microseconds, every = int(quota), int(period)
    except ValueError:
        return None
    if microseconds <= 0 or every <= 0:
        return None
    return -(-microseconds // every)  # rounded up: at least one
