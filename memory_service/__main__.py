"""`python -m memory_service serve | migrate | token`."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from crmmem_runtime.redaction import hide_password, redact
from memory_service.config import ConfigError, Settings, secure_data_dir


def _database_failure(settings: Settings, error: Exception) -> int:
    """One line instead of a traceback when the database cannot be opened or migrated: the URL
    with its password hidden, and the driver's reason cleaned of every secret."""
    reason = " ".join(str(getattr(error, "orig", None) or error).split())
    print(
        f"memory service: the database {hide_password(settings.database_url)} cannot be used: "
        f"{redact(reason, settings.secret_values())}",
        file=sys.stderr,
        flush=True,
    )
    return 1


def _serve(settings: Settings) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from crmmem_runtime.listen import AddressInUse
    from crmmem_runtime.telemetry import configure_tracing, exporting_traces
    from memory_service.bootstrap import build_server
    from memory_service.kernel.storage.migrate import SchemaUnusable

    provider = configure_tracing(settings, "memory-service")
    try:
        # Server, client and SQL spans only when they go somewhere (docs/operations.md).
        running = build_server(settings, provider if exporting_traces(settings) else None)
    except AddressInUse as error:
        print(f"memory service: {error}", file=sys.stderr, flush=True)
        return 1
    except (SQLAlchemyError, SchemaUnusable) as error:
        return _database_failure(settings, error)
    host = settings.listen.rsplit(":", 1)[0]
    if settings.port_file:
        Path(settings.port_file).write_text(str(running.port))
    print(
        f"memory service listening on {host}:{running.port}\n"
        f"  database: {hide_password(settings.database_url)}\n"
        f"  dev mode: {'on (make token prints a bearer token)' if settings.dev_mode else 'off'}",
        flush=True,
    )
    stopping = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger(__name__).info("signal %d: draining", signum)
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stopping.wait()
    running.stop(settings.shutdown_grace_seconds, settings.shutdown_drain_seconds)
    provider.shutdown()
    print("memory service stopped", flush=True)
    return 0


def _migrate(settings: Settings) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from memory_service.kernel.storage.migrate import SchemaUnusable, upgrade
    from memory_service.unit_of_work import create_database_engine

    try:
        found = upgrade(create_database_engine(settings.database_url))
    except (SQLAlchemyError, SchemaUnusable) as error:
        return _database_failure(settings, error)
    shown = hide_password(settings.database_url)
    if found.ahead:  # a newer release's migrations: never downgraded
        print(f"schema is ahead of this release, left as it is ({found.describe()}): {shown}")
    else:
        print(f"schema is current: {shown}")
    return 0


def _token(settings: Settings, args: argparse.Namespace) -> int:
    """Development only: with a production key, tokens come from the identity provider, and a
    shell on the server must not be able to mint an admin token for any tenant."""
    from memory_service.kernel.transport.auth import TokenAuthenticator

    if not settings.dev_mode:
        print("`token` works in development mode only (MEMORY_DEV_MODE=1)", file=sys.stderr)
        return 2
    authenticator = TokenAuthenticator(
        settings.jwt_secret,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_max_lifetime_seconds,
    )
    roles = [role for role in args.roles.split(",") if role]
    try:
        print(authenticator.mint(args.tenant, args.user, roles, args.ttl))
    except ValueError as error:
        print(f"token: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memory_service")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the gRPC server")
    commands.add_parser("migrate", help="bring the database schema up to date and exit")
    token = commands.add_parser("token", help="print a development bearer token")
    token.add_argument("--tenant", required=True)
    token.add_argument("--user", required=True)
    token.add_argument("--roles", default="", help="comma-separated, e.g. admin")
    token.add_argument("--ttl", type=int, default=86400, help="seconds")
    args = parser.parse_args(argv)
    from crmmem_runtime.telemetry import configure_logging

    os.umask(0o077)  # the database, its WAL, the dev key: nothing we write is for other users
    try:
        settings = Settings.from_env(serving=args.command == "serve")
    except ConfigError as error:
        print(f"memory service: configuration error: {error}", file=sys.stderr)
        return 2
    configure_logging(settings)
    if args.command != "token":
        secure_data_dir(settings)
    if args.command == "serve":
        return _serve(settings)
    if args.command == "migrate":
        return _migrate(settings)
    return _token(settings, args)


if __name__ == "__main__":
    sys.exit(main())
