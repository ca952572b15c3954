"""A memory limit for a service under test: a watchdog samples the process's resident memory and
kills it the moment it passes the limit (as the kernel would kill the pod), and the kernel's
own high-water mark gives the peak. RLIMIT_AS is no use here: gRPC's thread stacks and malloc
arenas reserve gigabytes of address space that is never touched."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path

POD_LIMIT = 512 * 1024 * 1024


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


class MemoryWatch:
    """Kills `pid` with SIGKILL if its RSS passes `limit` bytes; `peak` is the high-water mark."""

    def __init__(self, pid: int, limit: int = POD_LIMIT, interval: float = 0.005) -> None:
        self.pid = pid
        self.limit = limit
        self.breached = 0
        self._peak_kib = 0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            rss = _status_kib(self.pid, "VmRSS") * 1024
            self._peak_kib = max(self._peak_kib, _status_kib(self.pid, "VmHWM"))
            if rss > self.limit:
                self.breached = rss
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                return

    def reset_peak(self) -> None:
        """Starts a new high-water mark (Linux: writing 5 to clear_refs)."""
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        self._peak_kib = 0

    @property
    def peak(self) -> int:
        """Peak resident memory in bytes since the process started."""
        self._peak_kib = max(self._peak_kib, _status_kib(self.pid, "VmHWM"))
        return self._peak_kib * 1024

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def mib(value: int) -> str:
    return f"{value / (1024 * 1024):.0f} MiB"
