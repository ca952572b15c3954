"""Start the real services as subprocesses on port 0 and talk to them over gRPC."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import jwt
import psycopg
from crmmem.memory.v1 import (
    access_service_pb2_grpc,
    context_service_pb2_grpc,
    import_service_pb2_grpc,
    memory_service_pb2_grpc,
    task_service_pb2_grpc,
    transcript_service_pb2_grpc,
)
from crmmem.retrieval.v1 import retrieval_service_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from crmmem_runtime.shared_secret import METADATA_KEY

TEST_JWT_SECRET = "test-secret-" + "x" * 32
# What the test sidecars and the memory services wired to them share (retrieval_service.auth).
TEST_RETRIEVAL_SECRET = "test-retrieval-secret-" + "y" * 32
SCOPE_VIOLATION = "TenantScopeViolation"  # kernel/storage/scoped.py, logged by any failed call
JWT_ISSUER = "crmmem"
JWT_AUDIENCE = "crmmem.memory"


def mint_token(
    tenant: str,
    user: str,
    roles: Sequence[str] = (),
    *,
    secret: str = TEST_JWT_SECRET,
    ttl_seconds: int = 3600,
    **extra: Any,
) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        "sub": user,
        "tenant": tenant,
        "roles": list(roles),
        "iat": now,
        "exp": now + ttl_seconds,
    }
    claims.update(extra)
    return jwt.encode(claims, secret, algorithm="HS256")


class RenewingToken:
    """A development token minted again when less than a tenth of its life is left."""

    def __init__(self, tenant: str, user: str, roles: Sequence[str] = (), ttl: int = 3600) -> None:
        self._args = (tenant, user, tuple(roles))
        self._ttl = ttl
        self._lock = threading.Lock()
        self._token = ""
        self._renew_at = 0.0

    def __call__(self) -> str:
        with self._lock:
            if time.time() >= self._renew_at:
                self._token = mint_token(*self._args, ttl_seconds=self._ttl)
                self._renew_at = time.time() + self._ttl * 0.9
            return self._token


class _MetadataInterceptor(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[type-arg]
):
    """Adds one metadata entry to every call; a callable value is asked again on each call."""

    def __init__(self, key: str, value: str | Callable[[], str]) -> None:
        self._key = key
        self._value = value

    def _with_token(self, details: Any) -> Any:
        value = self._value() if callable(self._value) else self._value
        metadata = [*(details.metadata or []), (self._key, value)]
        return details._replace(metadata=metadata)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)


def sidecar_stub(
    address: str, secret: str | None = TEST_RETRIEVAL_SECRET
) -> retrieval_service_pb2_grpc.RetrievalServiceStub:
    """A direct client of a sidecar, holding the shared secret (or none, for refusal tests)."""
    channel: grpc.Channel = grpc.insecure_channel(address)
    if secret is not None:
        channel = grpc.intercept_channel(channel, _MetadataInterceptor(METADATA_KEY, secret))
    return retrieval_service_pb2_grpc.RetrievalServiceStub(channel)


@dataclass
class Client:
    """Stubs of every memory-service API, authenticated as one caller."""

    channel: grpc.Channel
    tenant: str
    user: str
    memories: memory_service_pb2_grpc.MemoryServiceStub = field(init=False)
    transcript: transcript_service_pb2_grpc.TranscriptServiceStub = field(init=False)
    access: access_service_pb2_grpc.AccessServiceStub = field(init=False)
    context: context_service_pb2_grpc.ContextServiceStub = field(init=False)
    imports: import_service_pb2_grpc.ImportServiceStub = field(init=False)
    tasks: task_service_pb2_grpc.TaskServiceStub = field(init=False)

    def __post_init__(self) -> None:
        self.memories = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        self.transcript = transcript_service_pb2_grpc.TranscriptServiceStub(self.channel)
        self.access = access_service_pb2_grpc.AccessServiceStub(self.channel)
        self.context = context_service_pb2_grpc.ContextServiceStub(self.channel)
        self.imports = import_service_pb2_grpc.ImportServiceStub(self.channel)
        self.tasks = task_service_pb2_grpc.TaskServiceStub(self.channel)


@dataclass
class ServerProcess:
    """A service running as a child process, reachable on `address`."""

    process: subprocess.Popen[bytes]
    address: str
    log_path: Path
    channels: list[grpc.Channel] = field(default_factory=list)
    database_url: str = ""  # MEMORY_DATABASE_URL, for tests that inspect what was stored

    def channel(self, token: str | Callable[[], str] | None = None) -> grpc.Channel:
        channel = grpc.insecure_channel(self.address)
        self.channels.append(channel)
        if token is None:
            return channel
        bearer: str | Callable[[], str]
        if callable(token):
            source = token
            bearer = lambda: f"Bearer {source()}"  # noqa: E731
        else:
            bearer = f"Bearer {token}"
        return grpc.intercept_channel(channel, _MetadataInterceptor("authorization", bearer))

    def client(
        self, tenant: str, user: str, roles: Sequence[str] = (), *, renewing: bool = False
    ) -> Client:
        """A caller; `renewing` mints a fresh token before the old one expires (long runs)."""
        token: str | Callable[[], str] = (
            RenewingToken(tenant, user, roles) if renewing else mint_token(tenant, user, roles)
        )
        return Client(self.channel(token), tenant, user)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        """Stops the process; fails if it ever sent a statement outside its tenant, even from a
        background worker whose failure no call saw."""
        for channel in self.channels:
            channel.close()
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log_path.exists() and SCOPE_VIOLATION in (log := self.log()):
            start = log.index(SCOPE_VIOLATION)
            raise AssertionError(f"a statement left its tenant:\n{log[start - 2000 : start + 500]}")
        return self.process.returncode


def start_server(
    module: str,
    env: dict[str, str],
    workdir: Path,
    *,
    health_service: str = "",
    startup_timeout: float = 180,
) -> ServerProcess:
    """Start `python -m <module> serve` on port 0 and wait until its health check says SERVING."""
    workdir.mkdir(parents=True, exist_ok=True)
    port_file = workdir / f"port-{uuid.uuid4().hex}"
    log_path = workdir / f"{module}-{uuid.uuid4().hex[:6]}.log"
    # Every statement of every unit of work is checked against its tenant
    # (kernel/storage/scoped.py), unless the caller's environment says otherwise (the benchmarks
    # measure the defaults).
    full_env = {"MEMORY_CHECK_TENANT_SCOPE": "1", **os.environ, **env, "PORT_FILE": str(port_file)}
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", module, "serve"],
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    deadline = time.monotonic() + startup_timeout
    while not port_file.exists() or not port_file.read_text().strip():
        if process.poll() is not None:
            raise RuntimeError(f"{module} exited early:\n{log_path.read_text()}")
        if time.monotonic() > deadline:
            _end(process)
            raise RuntimeError(f"{module} did not start:\n{log_path.read_text()}")
        time.sleep(0.05)
    server = ServerProcess(
        process,
        f"127.0.0.1:{port_file.read_text().strip()}",
        log_path,
        database_url=env.get("MEMORY_DATABASE_URL", ""),
    )
    try:
        wait_serving(server.address, health_service, deadline - time.monotonic())
    except BaseException:
        _end(process)  # listening but never SERVING: no process outlives the failed start
        raise
    return server


def _end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(timeout=30)


def wait_serving(address: str, service: str = "", timeout: float = 30) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + max(timeout, 1)
        while True:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{address} never became SERVING")
            time.sleep(0.05)


@contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one server; dropped afterwards."""
    name = f"crmmem_{uuid.uuid4().hex[:12]}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin_url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_url(backend: str, workdir: Path) -> Callable[[], Any]:
    """A context-manager factory yielding a database URL for `backend`."""
    if backend == "sqlite":

        @contextmanager
        def sqlite() -> Iterator[str]:
            yield f"sqlite:///{workdir / f'memory-{uuid.uuid4().hex[:8]}.db'}"

        return sqlite
    admin_url = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    if not admin_url:
        raise RuntimeError(
            "MEMORY_TEST_POSTGRES_URL is not set: run the suite with `make test` "
            "(scripts/with-postgres.sh starts PostgreSQL)"
        )
    return lambda: postgres_database(admin_url)
