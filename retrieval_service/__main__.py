"""`python -m retrieval_service serve`."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from crmmem_runtime.redaction import redact
from crmmem_runtime.settings import ConfigError
from retrieval_service.config import RetrievalSettings


async def _serve(settings: RetrievalSettings) -> int:
    from crmmem_runtime.listen import AddressInUse
    from crmmem_runtime.telemetry import configure_tracing
    from retrieval_service.embedding.onnx_runtime import ExportMissing
    from retrieval_service.index.qdrant_server import QdrantUnusable
    from retrieval_service.server import start_sidecar

    provider = configure_tracing(settings, "retrieval-service")
    try:
        running = await start_sidecar(settings, provider)
    except (AddressInUse, ExportMissing, QdrantUnusable) as error:
        reason = redact(str(error), settings.secret_values())
        print(f"retrieval service: {reason}", file=sys.stderr, flush=True)
        return 1
    if settings.port_file:
        Path(settings.port_file).write_text(str(running.port))
    print(
        f"retrieval service listening on {settings.listen.rsplit(':', 1)[0]}:{running.port}\n"
        f"  index: {running.index.backend} ({running.index.count()} points)",
        flush=True,
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    await stopping.wait()
    await running.stop(settings.shutdown_grace_seconds, settings.shutdown_drain_seconds)
    provider.shutdown()
    print("retrieval service stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval_service")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the gRPC sidecar")
    parser.parse_args(argv)
    from crmmem_runtime.telemetry import configure_logging

    try:
        settings = RetrievalSettings.from_env()
    except ConfigError as error:
        print(f"retrieval service: configuration error: {error}", file=sys.stderr)
        return 2
    configure_logging(settings)
    return asyncio.run(_serve(settings))


if __name__ == "__main__":
    sys.exit(main())
