"""Reaching the memory service: the connected channel, the token memoryctl sends and where it
came from, and the one line a failure prints. The examples (`make quickstart`, `make demo`)
use the same channel and lines.

Talks gRPC to a running service (MEMORY_ADDRESS, default 127.0.0.1:50051) with MEMORY_TOKEN,
or with a development token signed with the key the development service keeps in its data
folder (`find_credentials`). Every failure is one line on stderr and exit status 1."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
# The file in its data folder where a dev-mode service keeps its key (config.dev_secret).
DEV_SECRET_FILE = "dev-jwt-secret"
# How long to wait for a connection before saying that no service answers.
CONNECT_SECONDS = 5.0


class Refused(Exception):
    """A failure memoryctl explains itself: printed as one line, exit status 1."""


def unreachable(address: str) -> str:
    """The line for a service that does not answer: the address tried and the two ways on."""
    return (
        f"no memory service answers at {address}: start one with `make run` in the checkout "
        "(another terminal), or set MEMORY_ADDRESS=host:port to where it runs"
    )


def connect(address: str) -> grpc.Channel:
    """A channel that has connected, or `Refused` with `unreachable`'s line. A refused
    connection says so at once (its first TRANSIENT_FAILURE), instead of a call's raw
    UNAVAILABLE; an address that never answers takes CONNECT_SECONDS."""
    channel = grpc.insecure_channel(address)
    settled = threading.Event()
    first: list[grpc.ChannelConnectivity] = []

    def watch(state: grpc.ChannelConnectivity) -> None:
        if state in (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            first.append(state)
            settled.set()

    channel.subscribe(watch, try_to_connect=True)
    settled.wait(CONNECT_SECONDS)
    channel.unsubscribe(watch)
    if not first or first[0] != grpc.ChannelConnectivity.READY:
        channel.close()
        raise Refused(unreachable(address))
    return channel


@dataclass(frozen=True)
class Credentials:
    """The token memoryctl sends, and where it came from: a refusal is only actionable when the
    line says which key signed the token and what to set instead."""

    token: str
    origin: str  # where the token came from, for the line that explains a refusal
    advice: str = ""  # what to set when the service refuses it


# What to set when the service refuses a development token.
DEV_KEY_ADVICE = (
    f"set MEMORY_DATA_DIR to the folder holding its {DEV_SECRET_FILE}, or MEMORY_TOKEN to a "
    "token it issued"
)


def checkout_data_dir() -> Path | None:
    """`make run`'s data folder when memoryctl runs from a source checkout (the editable install
    `make` sets up), wherever the shell is: the service there keeps its dev key in it."""
    root = Path(__file__).resolve().parents[2]
    return root / "data" if (root / "pyproject.toml").is_file() else None


def dev_key_file() -> Path | None:
    """The development key the running service uses: in MEMORY_DATA_DIR when set (the service's
    own setting, so the same value names the same file), else in ./data, else in the checkout's
    data folder. Never created here: a key memoryctl made up signs tokens no service accepts."""
    named = os.environ.get("MEMORY_DATA_DIR")
    places = [Path(named)] if named else [Path("data"), checkout_data_dir()]
    for place in places:
        if place is not None and (place / DEV_SECRET_FILE).is_file():
            return (place / DEV_SECRET_FILE).resolve()
    return None


def find_credentials() -> Credentials:
    """MEMORY_TOKEN as given; else a development token for MEMORY_TENANT / MEMORY_USER /
    MEMORY_ROLES (acme / mara / none) signed with MEMORY_JWT_SECRET or the dev key file."""
    if token := os.environ.get("MEMORY_TOKEN"):
        return Credentials(token, "MEMORY_TOKEN")
    from crmmem_runtime.settings import ConfigError, load
    from memory_service.config import Settings
    from memory_service.kernel.transport.auth import TokenAuthenticator

    try:
        settings = load(Settings)
    except ConfigError as error:
        raise Refused(f"configuration error: {error}") from None
    key_file = None if settings.jwt_secret else dev_key_file()
    advice = ""
    if settings.jwt_secret:
        secret, origin = settings.jwt_secret, "MEMORY_JWT_SECRET"
    elif key_file is not None:
        secret, origin = key_file.read_text().strip(), f"the development key {key_file}"
        advice = DEV_KEY_ADVICE
    else:
        raise Refused(
            "no token: set MEMORY_TOKEN to a bearer token (`make -s token` in the checkout "
            "prints one), or MEMORY_DATA_DIR to the data folder of the development service "
            f"(the folder holding its {DEV_SECRET_FILE})"
        )
    authenticator = TokenAuthenticator(
        secret,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.jwt_max_lifetime_seconds,
    )
    roles = [r for r in os.environ.get("MEMORY_ROLES", "").split(",") if r]
    try:
        token = authenticator.mint(
            os.environ.get("MEMORY_TENANT", "acme"), os.environ.get("MEMORY_USER", "mara"), roles
        )
    except ValueError as error:
        raise Refused(f"cannot make a development token: {error}") from None
    return Credentials(token, origin, advice)


def explain(error: grpc.RpcError, address: str, credentials: Credentials) -> str:
    """One line for a failed call; a refused token says where it came from and what to set."""
    if not isinstance(error, grpc.Call):
        return f"ERROR: {error}"
    line = f"{error.code().name}: {error.details()}"
    if error.code() == grpc.StatusCode.UNAUTHENTICATED:
        line += f"; the service at {address} does not accept the token from {credentials.origin}"
        line += f": {credentials.advice}" if credentials.advice else ""
    return line


def example_channel(address: str, program: str) -> grpc.Channel:
    """For the examples (`make quickstart`, `make demo`): a connected channel, or exit 1 with
    memoryctl's line for a service that does not answer, instead of a traceback."""
    try:
        return connect(address)
    except Refused as error:
        raise SystemExit(f"{program}: {error}") from None


def run_example(
    main: Callable[[], None], program: str, address: str, *, sends_memory_token: bool = False
) -> int:
    """Runs an example's steps; a failed call is one line on stderr and exit status 1. Its
    tokens come from `python -m memory_service token`, which signs with MEMORY_JWT_SECRET or
    the development key in MEMORY_DATA_DIR (./data), unless it sends MEMORY_TOKEN as it is."""
    if sends_memory_token and os.environ.get("MEMORY_TOKEN"):
        credentials = Credentials("", "MEMORY_TOKEN")
    elif os.environ.get("MEMORY_JWT_SECRET"):
        credentials = Credentials("", "MEMORY_JWT_SECRET")
    else:
        folder = Path(os.environ.get("MEMORY_DATA_DIR") or "data").resolve()
        credentials = Credentials(
            "",
            f"the development key {folder / DEV_SECRET_FILE}",
            "set MEMORY_DATA_DIR to that service's data folder, or MEMORY_JWT_SECRET to its key",
        )
    try:
        main()
    except grpc.RpcError as error:
        print(f"{program}: {explain(error, address, credentials)}", file=sys.stderr)
        return 1
    return 0
