"""BuildContext latency through gRPC with both services running (SPEC §7: without a query,
p95 <= 5 ms). Each caller has user memories, a granted customer and organization memory.

    .venv/bin/python -m bench.context_bench --users 20 --memories-per-user 20
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2 as pb
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr

from bench.common import emit, start_memory_service, summary_ms
from bench.corpus import QUERIES, memory_text
from bench.recall_bench import start_sidecar
from tests.support.servers import TEST_JWT_SECRET, Client

TENANT = "bench"


def remember(client: Client, scope: pb.Scope, key: str, text: str) -> None:
    evidence = client.transcript.AppendMessage(
        tr.AppendMessageRequest(
            parent=f"conversations/setup-{client.user}",
            message=tr.Message(speaker=pb.SPEAKER_USER, text=text),
        )
    ).message.name
    client.memories.CreateMemory(
        svc.CreateMemoryRequest(
            memory=pb.Memory(scope=scope, key=key, kind=pb.MEMORY_KIND_PREFERENCE),
            revision=pb.RevisionDraft(
                value=text,
                provenance=pb.Provenance(
                    method=pb.PROVENANCE_METHOD_USER_STATEMENT, transcript_message=evidence
                ),
            ),
        )
    )


def measure(clients: list[Client], calls: int, query: bool, rng: random.Random) -> list[float]:
    samples = []
    for n in range(calls + 20):
        client = rng.choice(clients)
        request = ctx_pb.BuildContextRequest(
            conversation=f"conversations/setup-{client.user}",
            customers=[ctx_pb.CustomerReference(customer_id=f"cust-{client.user}")],
            query=rng.choice(QUERIES) if query else "",
        )
        started = time.perf_counter()
        reply = client.context.BuildContext(request, timeout=5)
        if n >= 20:
            samples.append(time.perf_counter() - started)
        if query and reply.recall_degraded:
            raise RuntimeError("recall degraded during the benchmark")
    return samples


def run(
    users: int = 20, memories_per_user: int = 20, calls: int = 500, seed: int = 5
) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sidecar = start_sidecar(workdir)
        memory = start_memory_service(
            workdir, TEST_JWT_SECRET, MEMORY_RETRIEVAL_ADDRESS=sidecar.address
        )
        try:
            admin = memory.client(TENANT, "admin", ["admin"])
            clients = [memory.client(TENANT, f"user-{u}") for u in range(users)]
            for n in range(10):
                key, text = memory_text(rng)
                remember(admin, pb.Scope(type=pb.SCOPE_TYPE_ORGANIZATION), f"org_{key}_{n}", text)
            for client in clients:
                customer = f"cust-{client.user}"
                admin.access.GrantCustomerAccess(
                    access_pb.GrantCustomerAccessRequest(user_id=client.user, customer_id=customer)
                )
                for n in range(memories_per_user):
                    key, text = memory_text(rng)
                    remember(client, pb.Scope(type=pb.SCOPE_TYPE_USER), f"{key}_{n}", text)
                for n in range(5):
                    key, text = memory_text(rng)
                    remember(
                        client,
                        pb.Scope(type=pb.SCOPE_TYPE_CUSTOMER, id=customer),
                        f"{key}_{n}",
                        text,
                    )
            time.sleep(5)  # let the outbox index everything before measuring recall
            without = measure(clients, calls, False, rng)
            with_query = measure(clients, min(calls, 300), True, rng)
        finally:
            memory.stop()
            sidecar.stop()
    return {
        "benchmark": "build_context",
        "database": "sqlite",
        "memories_per_context": memories_per_user + 5 + 10,
        "without_query": summary_ms(without),
        "with_query": summary_ms(with_query),
        "budget_without_query_p95_ms": 5,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--memories-per-user", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    emit(run(args.users, args.memories_per_user, args.calls, args.seed))


if __name__ == "__main__":
    main()
