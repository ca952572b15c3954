"""The protos work outside Python: the Node.js client (@grpc/grpc-js) against the service."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.servers import ServerProcess, mint_token

CLIENT = Path(__file__).parents[2] / "clients" / "node" / "client.js"


def test_node_client_creates_corrects_reads_and_builds_a_context(
    memory_server: ServerProcess, tenant: str
) -> None:
    result = subprocess.run(
        ["node", str(CLIENT)],
        env={
            **os.environ,
            "MEMORY_ADDRESS": memory_server.address,
            "MEMORY_TOKEN": mint_token(tenant, "mara"),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["revisions"] == "2"
    assert summary["context_memories"] == ["prefers afternoon meetings"]
    assert summary["stale_etag"] == "ABORTED"
    # google.rpc.Status details decode from the vendored google/rpc protos, nothing hand-declared.
    assert summary["stale_reason"] == "ETAG_MISMATCH"
    assert summary["current_etag"]
    assert summary["current_memory"] == summary["current_etag"]
