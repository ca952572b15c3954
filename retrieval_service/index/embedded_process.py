"""The embedded engine in a process of its own, optimised by a second process in the background.

Every call into qdrant-edge holds the Python interpreter until it returns: a search, but also
`optimize` (about a second per 10,000 points) and opening a stored shard (seconds for a large
one). In the sidecar's own process that would freeze every thread, health checks included.
Here the shard lives in a worker process and the sidecar talks to it over a socket, waiting
with the interpreter released, so nothing the engine does can pause the sidecar.

Searches read plain (unindexed) segments point by point: about 7 ms for a tenant of 10,000
points, mostly the tenant filter walking its points. Indexed segments (int8 codes in RAM, an
immutable tenant index) answer in a fraction of that, so once enough points were written the
index optimises in the background: it copies the flushed shard into the next generation
directory, a second worker opens the copy and optimises it (merging it into MERGED_SEGMENTS
segments) while the first keeps serving and taking writes, every write made meanwhile is also
kept in a journal, and when the copy is ready the journal is replayed into it (updates are
version-guarded and deletions idempotent, so replaying is safe), the generation is switched
under the write lock and the first worker is closed. Searches go on throughout.

On disk: `CURRENT` names the serving generation (`g-N`); it is replaced atomically only after
the new generation holds every write, so a crash at any point reopens either the old
generation (whose log holds every write) or the complete new one, and the other is removed
on open: no copy outlives a crash, so a deletion cannot come back from one. A shard written
before generations existed (its files directly in the directory) is served where it is until
its first optimisation moves it to `g-1`.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from retrieval_service.index import Hit, IndexPoint, ScopeSelector
from retrieval_service.lexical import SparseTerms

# What crosses the socket is built of tuples, strings, numbers and bytes (no dataclass, whose
# pickling goes through copyreg for every object), dense vectors packed as float32 (what the
# engine stores: the same vector, in 1.5 KiB instead of 3.4 and without 384 float objects to
# unpickle), and replies pickled directly: a Search sends two calls and unpickles two replies.

log = logging.getLogger(__name__)

CURRENT = "CURRENT"
MERGED_SEGMENTS = 4
# A background optimisation starts once this many points were written since the last one and
# they are at least a quarter of the optimised points: each one rewrites the whole shard, so
# the shard must grow by a fraction of itself between two.
OPTIMIZE_POINTS = 20_000
GROWTH = 4
# The journal is replayed outside the write lock until this little remains, which is then
# replayed under it, so writers wait for a call or two at most.
LAST_REPLAY = 1
MARKER = "optimized_points"  # in a generation: how many points its last optimisation held


class EngineError(RuntimeError):
    """The worker's engine refused a call (its message is the engine's)."""


class _Worker:
    """One engine process serving one shard directory; calls are answered in order."""

    def __init__(
        self,
        spawner: ThreadPoolExecutor,
        path: Path,
        dimensions: int,
        sparse_idf: bool,
        optimize: bool,
    ) -> None:
        ours, theirs = socket.socketpair()
        # Started from the index's own long-lived thread: a worker dies with the thread that
        # started it (so that it never outlives the sidecar), not with the process.
        self._process = spawner.submit(
            subprocess.Popen,
            [sys.executable, "-m", __name__, str(theirs.fileno()), str(os.getpid())],
            pass_fds=[theirs.fileno()],
        ).result()
        theirs.close()
        self._conn = Connection(ours.detach())
        self._lock = threading.Lock()
        self.closed = False
        self._conn.send((str(path), dimensions, sparse_idf, optimize))

    def ready(self) -> dict[str, Any]:
        """Waits (interpreter released) until the shard is open, optimised if asked."""
        return dict(self._answer())

    def call(self, op: str, *args: Any) -> Any:
        return self.send(_request(op, *args))

    def send(self, request: bytes) -> Any:
        """A call already pickled: how the journal keeps writes (a third of the objects' RAM)."""
        with self._lock:
            if self.closed:
                raise _Closed
            self._conn.send_bytes(request)
            return self._answer()

    def _answer(self) -> Any:
        status, value = self._conn.recv()
        if status == "error":
            raise EngineError(value)
        return value

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                try:
                    self._conn.send(("close", ()))
                    self._conn.recv()
                except (EOFError, OSError):
                    pass
                self._conn.close()
        self._process.wait()

    def kill(self) -> None:
        self.closed = True
        self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):
            self._conn.close()


def _written_by(answer: Any) -> int:
    """Points a replayed journal entry wrote: an upsert answers (written, stale)."""
    return int(answer[0]) if isinstance(answer, tuple) else 0


class _Closed(Exception):
    """The worker was retired by a generation switch while a call was on its way."""


def lock_directory(root: Path) -> int:
    """One index per directory, for as long as its process lives: a second one would remove,
    as leftovers of a crash, the copy the first is optimising or the generation it has just
    switched to. The lock (on the directory itself, so no file to clean) dies with the process."""
    root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise RuntimeError(f"another process serves the index in {root}") from None
    return descriptor


def open_generation(root: Path) -> Path:
    """The serving shard directory, after removing whatever an interrupted optimisation left."""
    root.mkdir(parents=True, exist_ok=True)
    current = root / CURRENT
    if current.exists():
        serving = root / current.read_text().strip()
        for entry in root.iterdir():
            if entry not in (current, serving):
                _remove(entry)  # a copy never switched to, or the generation it replaced
        return serving
    legacy = (root / "edge_config.json").exists() or any(root.glob("segments*"))
    for entry in root.glob("g-*"):
        _remove(entry)
    if legacy:
        return root
    serving = root / "g-0"
    serving.mkdir()
    _switch(root, serving)
    return serving


def _switch(root: Path, serving: Path) -> None:
    """Names the serving generation: written aside, synced, then renamed over (atomic)."""
    staged = root / f"{CURRENT}.next"
    with open(staged, "w") as out:
        out.write(serving.name)
        out.flush()
        os.fsync(out.fileno())
    os.replace(staged, root / CURRENT)
    directory = os.open(root, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


class EmbeddedProcessIndex:
    """The sidecar's default index: `EmbeddedIndex` run by a worker process (see the module)."""

    backend = "qdrant-edge"

    def __init__(
        self,
        root: Path,
        dimensions: int,
        sparse_idf: bool = False,
        optimize_points: int = OPTIMIZE_POINTS,
    ) -> None:
        self._root = root
        self._dimensions = dimensions
        self._sparse_idf = sparse_idf
        self._optimize_points = optimize_points
        self._write = threading.RLock()  # writes, the journal's cut-over, reviving a worker
        self._directory_lock = lock_directory(root)
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="embedded-workers")
        try:
            self._path = open_generation(root)
            self._worker = _Worker(self._spawner, self._path, dimensions, sparse_idf, False)
            self._worker.ready()
        except BaseException:
            self._spawner.shutdown()
            os.close(self._directory_lock)
            raise
        marker = self._path / MARKER
        self._optimized = int(marker.read_text()) if marker.exists() else 0
        self._written = max(0, self.count() - self._optimized)
        self._journal: list[bytes] | None = None
        self._optimizer: threading.Thread | None = None
        self._copied = threading.Event()
        self._candidate: _Worker | None = None
        self._closing = False
        self.last_optimization: dict[str, float] = {}
        with self._write:
            self._maybe_optimize()

    # writes: to the serving worker, and to the journal while an optimisation runs

    def upsert(self, points: Sequence[IndexPoint]) -> tuple[int, int]:
        wired = [_wire_point(point) for point in points]  # before the lock: writers wait less
        with self._write:
            written, stale = self._write_call("upsert", wired)
            self._written += int(written)
            self._maybe_optimize()
            return int(written), int(stale)

    def delete(self, tenant_id: str, ids: Sequence[str], versions: Sequence[int] = ()) -> None:
        with self._write:
            self._write_call("delete", tenant_id, list(ids), list(versions))

    def delete_tenant(self, tenant_id: str) -> None:
        with self._write:
            self._write_call("delete_tenant", tenant_id)

    def _write_call(self, op: str, *args: Any) -> Any:
        """With the write lock held: to the serving worker, and to the journal while an
        optimisation runs."""
        request = _request(op, *args)
        result = self._call(request)
        if self._journal is not None:
            self._journal.append(request)
        return result

    # reads: whichever worker serves when the call starts

    def _read(self, op: str, *args: Any) -> Any:
        return self._call(_request(op, *args))

    def _call(self, request: bytes) -> Any:
        """On the serving worker; once more on a new one if it died (every call is safe to
        repeat: upserts are version-guarded, deletions idempotent)."""
        for attempt in range(3):
            worker = self._worker
            try:
                return worker.send(request)
            except _Closed:
                if self._worker is worker and not self._closing:
                    with self._write:  # being replaced (`_revive` holds the lock): wait for it
                        pass
                continue  # switched meanwhile: the new worker holds everything the old one did
            except (EOFError, OSError):
                if attempt or self._closing:
                    raise
                self._revive(worker)
        raise EngineError("the index worker keeps being replaced")

    def _revive(self, dead: _Worker) -> None:
        """A worker that died (killed, out of memory) is replaced by one on the same
        generation: its log holds every write it acknowledged."""
        with self._write:
            if self._worker is not dead:
                return  # another thread did it, or a switch did
            log.error("the index worker died; reopening %s", self._path)
            dead.kill()
            worker = _Worker(self._spawner, self._path, self._dimensions, self._sparse_idf, False)
            worker.ready()
            self._worker = worker

    def search(
        self, tenant_id: str, vector: list[float], limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return _hits(self._read("search", tenant_id, _packed(vector), limit, _wire_scopes(scopes)))

    def search_sparse(
        self, tenant_id: str, terms: SparseTerms, limit: int, scopes: Sequence[ScopeSelector]
    ) -> list[Hit]:
        return _hits(
            self._read("search_sparse", tenant_id, _wire_terms(terms), limit, _wire_scopes(scopes))
        )

    def search_both(
        self,
        tenant_id: str,
        vector: list[float],
        terms: SparseTerms,
        limit: int,
        scopes: Sequence[ScopeSelector],
    ) -> tuple[list[Hit], list[Hit]]:
        dense, sparse = self._read(
            "search_both",
            tenant_id,
            _packed(vector),
            _wire_terms(terms),
            limit,
            _wire_scopes(scopes),
        )
        return _hits(dense), _hits(sparse)

    def count(self, tenant_id: str = "") -> int:
        return int(self._read("count", tenant_id))

    def segments(self) -> int:
        return int(self._read("segments"))

    # background optimisation

    def _maybe_optimize(self) -> None:
        """Called with the write lock held."""
        due = max(self._optimize_points, self._optimized // GROWTH)
        if self._optimize_points and self._written >= due and self._optimizer is None:
            self._start_optimization()

    def optimize_in_background(self) -> threading.Thread:
        """Starts an optimisation now (unless one runs) and returns its thread once the copy
        is made: writes made after this returns are in the journal replayed into the copy."""
        with self._write:
            if self._optimizer is None:
                self._start_optimization()
            assert self._optimizer is not None
            thread, copied = self._optimizer, self._copied
        copied.wait()
        return thread

    def wait_optimized(self, timeout: float | None = None) -> None:
        """Until no optimisation runs: also the one that the writes made during the last one
        start when they are enough for one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (thread := self._optimizer) is not None:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if deadline is not None and time.monotonic() >= deadline:
                return

    def _start_optimization(self) -> None:
        """Called with the write lock held: the thread copies the shard once it may take it."""
        self._copied = threading.Event()
        self._optimizer = threading.Thread(
            target=self._optimize, name="embedded-optimize", daemon=True
        )
        self._optimizer.start()

    def _copy(self) -> Path:
        """Flush, copy, start journalling: under the write lock, so writers wait for the copy
        (file reads and writes, interpreter released) while searches go on."""
        with self._write:
            self._worker.call("flush")
            generation = int(self._path.name[2:]) + 1 if self._path.name.startswith("g-") else 1
            target = self._root / f"g-{generation}"
            _remove(target)
            try:
                shutil.copytree(
                    self._path, target, ignore=shutil.ignore_patterns("g-*", CURRENT + "*")
                )
            except BaseException:
                _remove(target)  # a partial copy on a full disk would keep it full
                raise
            self._journal = []
            self._copied.set()
            return target

    def _optimize(self) -> None:
        started = time.perf_counter()
        candidate: _Worker | None = None
        target: Path | None = None
        switched = False
        try:
            target = self._copy()
            copy_s = time.perf_counter() - started
            candidate = self._candidate = _Worker(
                self._spawner, target, self._dimensions, self._sparse_idf, optimize=True
            )
            if self._closing:
                raise _Closed
            optimized = candidate.ready()
            indexed = int(candidate.call("points"))  # the replayed writes land unindexed
            replayed = tail = 0
            while True:
                with self._write:
                    if self._closing:
                        raise _Closed
                    assert self._journal is not None
                    pending = self._journal[replayed:]
                    if len(pending) <= LAST_REPLAY:
                        switch_started = time.perf_counter()
                        for request in pending:
                            tail += _written_by(candidate.send(request))
                        # No flush here: the copy's log holds the replayed writes, as the old
                        # generation's log held them (the engine flushes every FLUSH_SECONDS).
                        (target / MARKER).write_text(str(indexed))
                        _switch(self._root, target)
                        retired, retired_path = self._worker, self._path
                        self._worker, self._path = candidate, target
                        self._candidate = candidate = None
                        self._journal = None
                        # What was written during the optimisation is in a plain segment,
                        # searched point by point: it counts towards the next one.
                        self._optimized, self._written = indexed, tail
                        switched = True
                        switch_s = time.perf_counter() - switch_started
                        replayed += len(pending)
                        break
                for request in pending:
                    tail += _written_by(candidate.send(request))
                replayed += len(pending)
            retired.close()
            if retired_path == self._root:  # a shard from before generations: its files
                for entry in self._root.iterdir():
                    if entry.name != CURRENT and not entry.name.startswith("g-"):
                        _remove(entry)
            else:
                _remove(retired_path)
            self.last_optimization = {
                "copy_s": round(copy_s, 3),
                "optimize_s": round(float(optimized["optimize_s"]), 3),
                "segments": float(optimized["segments"]),
                "replayed": float(replayed),
                "unindexed": float(tail),
                "switch_s": round(switch_s, 4),
                "total_s": round(time.perf_counter() - started, 3),
            }
            log.info("index optimised in the background: %s", self.last_optimization)
        except _Closed:
            pass
        except Exception:
            if self._closing:
                return  # close() stopped the worker mid-optimisation (finally cleans up)
            log.exception("background optimisation failed; the index keeps its segments")
            # Tried again after as many writes again, not at the next one: whatever made it
            # fail (memory, disk) would make every write wait for another copy that fails.
            with self._write:
                self._written = 0
        finally:
            if candidate is not None:
                candidate.kill()
                self._candidate = None
            if target is not None and target != self._path:
                _remove(target)
            self._copied.set()
            with self._write:
                self._journal = None
                self._optimizer = None
                if switched and not self._closing:
                    self._maybe_optimize()  # writes that outran this one: index them too

    def close(self) -> None:
        with self._write:
            self._closing = True
        while (thread := self._optimizer) is not None and thread.is_alive():
            candidate = self._candidate
            if candidate is not None:
                candidate.kill()  # its copy is removed by the optimiser thread, or on next open
            thread.join(0.1)
        self._worker.close()
        self._spawner.shutdown()
        os.close(self._directory_lock)


# The wire format between the index and its workers


def _request(op: str, *args: Any) -> bytes:
    return pickle.dumps((op, args), pickle.HIGHEST_PROTOCOL)


def _packed(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def _unpacked(data: bytes) -> list[float]:
    vector = array("f")
    vector.frombytes(data)
    return vector.tolist()


def _wire_terms(terms: SparseTerms) -> tuple[tuple[int, ...], tuple[float, ...]]:
    return tuple(terms.indices), tuple(terms.values)


def _wire_scopes(scopes: Sequence[ScopeSelector]) -> list[tuple[str, str]]:
    return [(scope.scope_type, scope.scope_id) for scope in scopes]


def _wire_point(point: IndexPoint) -> tuple[Any, ...]:
    return (
        point.id,
        point.tenant_id,
        point.version,
        point.revision_number,
        point.scope_type,
        point.scope_id,
        _packed(point.vector),
        *_wire_terms(point.sparse),
    )


def _hits(wired: Sequence[tuple[str, float, int, int]]) -> list[Hit]:
    return [Hit._make(one) for one in wired]


def _decoded(op: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A request's arguments as the index's methods take them."""
    if op == "upsert":
        return (
            [
                IndexPoint(
                    memory_id,
                    tenant,
                    version,
                    revision,
                    scope_type,
                    scope_id,
                    _unpacked(vector),
                    SparseTerms(indices, values),
                )
                for (
                    memory_id,
                    tenant,
                    version,
                    revision,
                    scope_type,
                    scope_id,
                    vector,
                    indices,
                    values,
                ) in args[0]
            ],
        )
    if op == "search":
        tenant, vector, limit, scopes = args
        return tenant, _unpacked(vector), limit, [ScopeSelector(*s) for s in scopes]
    if op == "search_sparse":
        tenant, terms, limit, scopes = args
        return tenant, SparseTerms(*terms), limit, [ScopeSelector(*s) for s in scopes]
    if op == "search_both":
        tenant, vector, terms, limit, scopes = args
        return (
            tenant,
            _unpacked(vector),
            SparseTerms(*terms),
            limit,
            [ScopeSelector(*s) for s in scopes],
        )
    return args


def _encoded(op: str, result: Any) -> Any:
    """Hits as plain tuples."""
    if op in ("search", "search_sparse"):
        return [tuple(one) for one in result]
    if op == "search_both":
        return tuple([tuple(one) for one in hits] for hits in result)
    return result


# The worker process


def _die_with_parent() -> None:
    """A worker never outlives the sidecar (Linux): an orphan would keep writing a copy. The
    signal comes when the thread that started the worker ends, hence the spawner thread."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _serve(conn: Connection) -> None:
    import qdrant_edge as qe

    from retrieval_service.index.embedded import EmbeddedIndex, shard_config

    path, dimensions, sparse_idf, optimize = conn.recv()
    started = time.perf_counter()
    if optimize:
        # Out of memory, the kernel kills this copy's optimisation (which the index gives up)
        # rather than the worker serving, or the sidecar: about as large, and not optional.
        adjustment, inherited = Path("/proc/self/oom_score_adj"), ""
        with contextlib.suppress(OSError):
            inherited = adjustment.read_text()
            adjustment.write_text("1000")
        base = shard_config(dimensions, sparse_idf, OPTIMIZE_POINTS)
        merging = qe.EdgeConfig(
            payload_memory=base.payload_memory,
            vectors=base.vectors,
            sparse_vectors=base.sparse_vectors,
            hnsw_config=base.hnsw_config,
            quantization_config=base.quantization_config,
            optimizers=qe.EdgeOptimizersConfig(
                default_segment_number=MERGED_SEGMENTS, indexing_threshold=1
            ),
        )
        shard = qe.EdgeShard.load(path, merging)
        shard.optimize()
        shard.flush()
        shard.close()
        if inherited:  # it serves next: back to the sidecar's own
            with contextlib.suppress(OSError):
                adjustment.write_text(inherited)
    optimize_s = time.perf_counter() - started
    index = EmbeddedIndex(Path(path), dimensions, sparse_idf)
    conn.send(("ok", {"optimize_s": optimize_s, "segments": index._shard.info().segments_count}))
    while True:
        try:
            op, args = conn.recv()
        except EOFError:
            op, args = "close", ()
        try:
            if op == "close":
                index.close()
                conn.send(("ok", None))
                return
            if op == "flush":
                with index._lock:
                    index._shard.flush()
                result: Any = None
            elif op == "segments":
                result = index._shard.info().segments_count
            elif op == "points":
                result = index._shard.info().points_count
            else:
                result = _encoded(op, getattr(index, op)(*_decoded(op, args)))
            conn.send_bytes(pickle.dumps(("ok", result), pickle.HIGHEST_PROTOCOL))
        except (EOFError, OSError):
            return
        except Exception as error:  # the engine's own errors are not all picklable
            conn.send(("error", f"{type(error).__name__}: {error}"))


def main() -> None:
    _die_with_parent()
    if os.getppid() != int(sys.argv[2]):
        return  # the sidecar died before the signal was set up (not "is the parent PID 1":
        # in a container the sidecar itself is PID 1, the Dockerfile's CMD)
    _serve(Connection(int(sys.argv[1])))


if __name__ == "__main__":
    main()
