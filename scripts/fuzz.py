"""`make fuzz`: hostile requests against real servers; prints counts by status code per service.

Starts the memory service on SQLite (and on PostgreSQL when MEMORY_TEST_POSTGRES_URL is set, as
`scripts/with-postgres.sh` does) and the retrieval sidecar, then sends `--count` requests to each
memory service and `--sidecar-count` to the sidecar: structured messages built field by field
from the proto descriptors, and raw bytes (random, truncated or bit-flipped encodings) sent as the
serialized request through a generic channel. Exits 1 on any INTERNAL or UNKNOWN status, or if a
server died. Only loopback addresses are used; every loop is bounded in count.

    scripts/with-postgres.sh python -m scripts.fuzz --count 50000 --seed 1   # = make fuzz
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

import grpc
from google.protobuf import message_factory

from tests.conftest import memory_env, start_retrieval
from tests.support.fuzzing import (
    MEMORY_MODULES,
    RETRIEVAL_MODULES,
    Builder,
    Pool,
    RandomSource,
    Rpc,
    call,
    mutations,
    request_for,
    rpcs,
    seed_pool,
    sidecar_callers,
)
from tests.support.servers import ServerProcess, database_url, mint_token, start_server

FATAL = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


def rss_kib(server: ServerProcess) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@dataclass
class Tally:
    target: str
    codes: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    lock: Lock = field(default_factory=Lock)

    def record(self, kind: str, rpc: Rpc, code: grpc.StatusCode, payload: bytes) -> None:
        with self.lock:
            self.codes[code.name] += 1
            self.by_kind[kind] += 1
            if code in FATAL and sum(kind in f for f in self.failures) < 10:
                self.failures.append(f"{code.name} {rpc.path} {kind} {payload[:300]!r}")


def identities(tenant: str, sidecar_secret: str) -> list[Sequence[tuple[str, str]]]:
    """A user, an admin, nobody, a forged token; and for the sidecar its secret or not."""
    alice = (("authorization", f"Bearer {mint_token(tenant, 'alice')}"),)
    out: list[Sequence[tuple[str, str]]] = [
        alice,
        alice,
        alice,
        (("authorization", f"Bearer {mint_token(tenant, 'ada', ['admin'])}"),),
        (("authorization", f"Bearer {mint_token(tenant, 'ada', ['admin'])}"),),
        (),
        (("authorization", "Bearer x.y.z"),),
        (("authorization", f"Bearer {mint_token(tenant, 'alice', secret='wrong' * 8)}"),),
    ]
    if sidecar_secret:
        return [*out[5:], *sidecar_callers(sidecar_secret)]
    return out


def run_target(
    server: ServerProcess,
    target: str,
    methods: list[Rpc],
    count: int,
    seed: int,
    workers: int,
    pool: Pool,
    metadata_options: list[Sequence[tuple[str, str]]],
    deadline: float,
) -> dict[str, Any]:
    tally = Tally(target)
    rss_before = rss_kib(server)
    started = time.perf_counter()
    channel = grpc.insecure_channel(
        server.address,
        options=[
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ],
    )
    per_worker = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]

    def worker(index: int, n: int) -> None:
        rng = random.Random(seed * 1000 + index)
        source = RandomSource(rng)
        builder = Builder(source, pool)
        sent = 0
        while sent < n and time.monotonic() < deadline:
            rpc = rng.choice(methods)
            metadata = rng.choice(metadata_options)
            payload = request_for(builder, rpc).SerializeToString()
            batch = [("structured", payload)]
            if rng.random() < 0.25:
                batch = [("raw", rng.choice(list(mutations(source, payload))))]
            for kind, body in batch[: n - sent]:
                code, reply = call(channel, rpc, body, metadata)
                sent += 1
                tally.record(kind, rpc, code, body)
                if code is grpc.StatusCode.OK and reply is not None and kind == "structured":
                    response = message_factory.GetMessageClass(rpc.response).FromString(reply)
                    pool.harvest(response)
            if server.process.poll() is not None:
                return

    with ThreadPoolExecutor(max_workers=workers) as executor:
        for future in [executor.submit(worker, i, n) for i, n in enumerate(per_worker)]:
            future.result()
    channel.close()
    elapsed = time.perf_counter() - started
    alive = server.process.poll() is None
    return {
        "target": target,
        "requests": sum(tally.codes.values()),
        "structured": tally.by_kind["structured"],
        "raw_bytes": tally.by_kind["raw"],
        "seconds": round(elapsed, 1),
        "codes": dict(tally.codes.most_common()),
        "internal_or_unknown": sum(tally.codes[c.name] for c in FATAL),
        "alive": alive,
        "rss_mib_before": round(rss_before / 1024, 1),
        "rss_mib_after": round(rss_kib(server) / 1024, 1) if alive else None,
        "first_failures": tally.failures,
    }


def table(results: list[dict[str, Any]]) -> str:
    codes = sorted({code for r in results for code in r["codes"]})
    header = ["target", "requests", "raw", *codes, "RSS MiB before→after", "alive"]
    rows = [header]
    for r in results:
        rss = f"{r['rss_mib_before']}→{r['rss_mib_after']}"
        rows.append(
            [r["target"], str(r["requests"]), str(r["raw_bytes"])]
            + [str(r["codes"].get(c, 0)) for c in codes]
            + [rss, "yes" if r["alive"] else "NO"]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=50_000, help="requests per memory service")
    parser.add_argument("--sidecar-count", type=int, default=None, help="default: --count / 5")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=120, help="stop sending after this")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--no-sidecar", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.minutes * 60
    sidecar_count = args.count // 5 if args.sidecar_count is None else args.sidecar_count
    results: list[dict[str, Any]] = []
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="crmmem-fuzz-") as tmp:
        workdir = Path(tmp)
        for backend in [b for b in args.backends.split(",") if b]:
            if backend == "postgres" and not _postgres_reachable():
                print("fuzz: MEMORY_TEST_POSTGRES_URL is not set; no PostgreSQL", file=sys.stderr)
                continue
            url = stack.enter_context(database_url(backend, workdir)())
            server = start_server("memory_service", memory_env(url), workdir / backend)
            stack.callback(server.stop)
            tenant = f"fuzz-{uuid.uuid4().hex[:8]}"
            pool = Pool()
            seed_pool(server.channel(), tenant, pool)
            results.append(
                run_target(
                    server, f"memory/{backend}", rpcs(MEMORY_MODULES), args.count, args.seed,
                    args.workers, pool, identities(tenant, ""), deadline,
                )
            )  # fmt: skip
            _progress(results[-1], args.json)
        if not args.no_sidecar and sidecar_count:
            secret = _sidecar_secret()
            env = {"RETRIEVAL_SHARED_SECRET": secret} if secret else {}
            sidecar = start_retrieval(workdir / "sidecar", **env)
            stack.callback(sidecar.stop)
            results.append(
                run_target(
                    sidecar, "retrieval", rpcs(RETRIEVAL_MODULES), sidecar_count, args.seed,
                    args.workers, Pool(), identities("acme", secret), deadline,
                )
            )  # fmt: skip
            _progress(results[-1], args.json)
    print(table(results))
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    bad = [r for r in results if r["internal_or_unknown"] or not r["alive"]]
    return 1 if bad or not results else 0


def _progress(result: dict[str, Any], path: Path | None) -> None:
    """Each target's line as soon as it is done, so a long run that is stopped still reports."""
    print(json.dumps({k: v for k, v in result.items() if k != "first_failures"}), file=sys.stderr)
    if path is not None:
        with path.with_suffix(".partial.jsonl").open("a") as out:
            out.write(json.dumps(result) + "\n")


def _postgres_reachable() -> bool:
    import os

    return bool(os.environ.get("MEMORY_TEST_POSTGRES_URL"))


def _sidecar_secret() -> str:
    """The sidecar's shared secret, when this version of it has one."""
    return "fuzz-secret-" + "s" * 32


if __name__ == "__main__":
    sys.exit(main())
