"""The embedded index's worker processes under faults: a worker killed while others call, an
optimisation that fails, a second sidecar pointed at the same directory, a sidecar that is
PID 1."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from retrieval_service.index import embedded_process
from retrieval_service.index.embedded_process import CURRENT, EmbeddedProcessIndex
from tests.integration.test_indexes import DIMENSIONS, point, vector


def until(condition: object, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_a_search_made_while_a_dead_worker_is_replaced_waits_for_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacing a dead worker opens the shard again (seconds for a large one); a search that
    arrived meanwhile found the dead worker closed three times and failed.

    The replacement's opening is held until the second search has found the dead worker
    closed: on any machine, that search arrives while the replacement is starting."""
    index = EmbeddedProcessIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=0)
    released = threading.Event()
    opening = embedded_process._Worker.ready

    def held_open(worker: embedded_process._Worker) -> dict[str, object]:
        assert released.wait(60), "the replacement was never released"
        return opening(worker)

    try:
        index.upsert([point(n) for n in range(200)])
        monkeypatch.setattr(embedded_process._Worker, "ready", held_open)  # the replacement's
        dead = index._worker
        os.kill(dead._process.pid, signal.SIGKILL)
        dead._process.wait()
        counts: list[int] = []
        first = threading.Thread(target=lambda: counts.append(index.count()))
        first.start()  # finds it dead and replaces it
        until(lambda: dead.closed)
        assert index._worker is dead  # the replacement is still starting
        tried = threading.Event()
        sending = dead.send

        def send(request: bytes) -> object:
            try:
                return sending(request)
            finally:
                tried.set()

        dead.send = send  # type: ignore[method-assign]
        second = threading.Thread(target=lambda: counts.append(index.count()))
        second.start()
        assert tried.wait(60), "the second search never reached the dead worker"
        released.set()
        first.join(60)
        second.join(60)
        assert counts == [200, 200]
    finally:
        released.set()
        index.close()


def test_a_failed_optimisation_is_not_retried_by_the_next_write(tmp_path: Path) -> None:
    """An optimisation that fails (its worker killed, out of memory or disk) was started again
    by the very next write: another flush and whole-shard copy, writers waiting for it, and
    another failure, for as long as the cause lasts. It waits for as many writes again."""
    index = EmbeddedProcessIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=500)
    try:
        index.upsert([point(n) for n in range(500)])
        until(lambda: index._candidate is not None)
        candidate = index._candidate
        assert candidate is not None
        candidate._process.kill()  # the optimising worker dies (the kernel's OOM killer)
        index.wait_optimized(120)
        assert index.last_optimization == {}  # it failed
        index.upsert([point(500)])
        assert index._optimizer is None
        assert index.count() == 501
        index.upsert([point(n) for n in range(501, 1001)])  # a step's worth: it tries again
        assert index._optimizer is not None
        index.wait_optimized(120)
        assert index.last_optimization["segments"] >= 1
        assert index.count() == 1001
    finally:
        index.close()


def test_a_second_index_on_the_same_directory_is_refused_before_it_touches_it(
    tmp_path: Path,
) -> None:
    """A second sidecar on the same data directory was refused by the engine's log lock, but
    only after it had removed, as a leftover, the copy the first one was optimising (which
    failed; in a narrower window, the generation it had just switched to)."""
    root = tmp_path / "embedded"
    first = EmbeddedProcessIndex(root, DIMENSIONS, optimize_points=0)
    try:
        first.upsert([point(n) for n in range(3000)])
        optimizing = first.optimize_in_background()
        with pytest.raises(RuntimeError, match="another process"):
            EmbeddedProcessIndex(root, DIMENSIONS, optimize_points=0)
        first.delete("t1", ["0" * 31 + "7"])
        optimizing.join(120)
        assert first.last_optimization["replayed"] == 1
        assert first.count() == 2999
    finally:
        first.close()
    assert sorted(p.name for p in root.iterdir()) == [CURRENT, "g-1"]
    reopened = EmbeddedProcessIndex(root, DIMENSIONS, optimize_points=0)
    assert reopened.count() == 2999
    assert reopened.search("t1", vector(7), 1, [])[0].id != "0" * 31 + "7"
    reopened.close()


PID_ONE = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from retrieval_service.index.embedded_process import EmbeddedProcessIndex
    from tests.integration.test_indexes import point

    assert os.getpid() == 1
    index = EmbeddedProcessIndex(Path(sys.argv[1]), 8, optimize_points=0)
    index.upsert([point(n) for n in range(10)])
    print(index.count())
    index.close()
    """
)


def test_the_index_opens_in_a_process_that_is_pid_1(tmp_path: Path) -> None:
    """In a container the sidecar is PID 1 (the Dockerfile's CMD has no init). A worker took
    "my parent is PID 1" for "the sidecar died before I started" and exited at once, so the
    sidecar could not open its index. The process runs as PID 1 of a new PID namespace
    (unshare, as an unprivileged user namespace's root)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    namespace = ["unshare", "--user", "--map-root-user", "--pid", "--fork"]
    result = subprocess.run(
        [*namespace, sys.executable, "-c", PID_ONE, str(tmp_path / "embedded")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["10"]


def test_out_of_memory_the_kernel_kills_the_optimising_copy_first(tmp_path: Path) -> None:
    """During an optimisation two workers hold the shard, and the one optimising is the one
    the index can do without (it gives the optimisation up). The kernel's OOM killer picks
    the largest process unless told otherwise: the serving worker, or the sidecar."""
    index = EmbeddedProcessIndex(tmp_path / "embedded", DIMENSIONS, optimize_points=0)
    try:
        index.upsert([point(n) for n in range(2000)])
        optimizing = index.optimize_in_background()
        until(lambda: index._candidate is not None or not optimizing.is_alive())
        candidate = index._candidate
        assert candidate is not None
        seen = set()
        while optimizing.is_alive() and "1000" not in seen:
            with contextlib.suppress(OSError):
                seen.add(Path(f"/proc/{candidate._process.pid}/oom_score_adj").read_text().strip())
            time.sleep(0.001)
        assert "1000" in seen, seen
        optimizing.join(120)
        serving = index._worker._process.pid  # the optimised copy's worker, serving now
        assert index.last_optimization["segments"] >= 1
        own = Path("/proc/self/oom_score_adj").read_text()
        assert Path(f"/proc/{serving}/oom_score_adj").read_text() == own
    finally:
        index.close()


DISK_FULL = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from retrieval_service.index.embedded_process import EmbeddedProcessIndex
    from tests.integration.test_indexes import point

    root = Path(sys.argv[1]) / "embedded"
    index = EmbeddedProcessIndex(root, 8, optimize_points=0)
    index.upsert([point(n) for n in range(500)])
    index.optimize_in_background().join(120)  # no room for the copy
    names = sorted(p.name for p in root.iterdir())
    index.upsert([point(n) for n in range(500, 600)])
    index.delete("t1", [f"{3:032x}"])
    print(json.dumps([names, index.last_optimization, index.count()]))
    index.close()
    """
)


def test_a_copy_that_fills_the_disk_is_removed_and_the_index_keeps_taking_writes(
    tmp_path: Path,
) -> None:
    """The copy for an optimisation failed half-way on a full disk and was left there (the
    optimiser had no name for it yet), so the disk stayed full: the serving worker's next
    writes failed, it died and could not be reopened, and the index refused every call. The
    shard lives on a 60 MB tmpfs (a user and mount namespace of its own): room for it, not
    for a copy."""
    disk = tmp_path / "disk"
    disk.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    mount = f'mount -t tmpfs -o size=60m tmpfs {disk} && exec {sys.executable} -c "$0" {disk}'
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount, DISK_FULL],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    names, optimization, count = json.loads(result.stdout.splitlines()[-1])
    assert optimization == {}  # it failed: no room
    assert names == [CURRENT, "g-0"]
    assert count == 599
