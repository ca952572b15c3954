"""No process prints a password or a secret. `serve` and `migrate` used to print
MEMORY_DATABASE_URL whole, so `postgresql+psycopg://user:password@…` landed in pod and Job logs.

Every setting that holds a secret is planted with one distinctive marker: the database password
(in the URL, percent-encoded, and as libpq's `?password=`), the JWT key, the shared secret,
Qdrant's API key and a password in QDRANT_URL. Then everything each real process writes, stdout
and stderr, is searched for it: `migrate`, `serve` from start-up to stop with the sidecar it
calls, and the ways start-up fails (nothing listening on the database port, URLs SQLAlchemy
would misread, a short key, a Qdrant server too old or not answering)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import memory_service_pb2
from crmmem.memory.v1.memory_service_pb2_grpc import MemoryServiceStub
from crmmem.retrieval.v1 import retrieval_service_pb2
from sqlalchemy.engine import make_url

from tests.conftest import memory_env, retrieval_env
from tests.e2e.helpers import create_pref
from tests.support.fake_qdrant import fake_qdrant
from tests.support.servers import (
    Client,
    ServerProcess,
    mint_token,
    postgres_database,
    sidecar_stub,
    start_server,
)

MARK = "Zq81xPLANT"
PASSWORD = f"{MARK}-pw@x"  # the @ is written %40 in a URL: both spellings carry the marker
JWT_SECRET = f"{MARK}-jwt-" + "j" * 32
SHARED_SECRET = f"{MARK}-shared-" + "s" * 32
QDRANT_API_KEY = f"{MARK}-qdrant-key"
PLANTED = {
    "MEMORY_JWT_SECRET": JWT_SECRET,
    "RETRIEVAL_SHARED_SECRET": SHARED_SECRET,
    "QDRANT_API_KEY": QDRANT_API_KEY,
    "LOG_FORMAT": "text",
}


def assert_no_secret(output: str) -> None:
    leaked = [line for line in output.splitlines() if MARK in line]
    assert not leaked, f"a secret was printed: {leaked}"


def run(module: str, command: str, env: dict[str, str], workdir: Path) -> str:
    """Runs one command to its end; returns its stdout and stderr, checked for secrets."""
    result = subprocess.run(
        [sys.executable, "-m", module, command],
        env={**os.environ, **env},
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_no_secret(result.stdout + result.stderr)
    return f"exit {result.returncode}\n{result.stdout}{result.stderr}"


def one_line_failure(output: str, code: int) -> str:
    status, *lines = output.splitlines()
    assert status == f"exit {code}", output
    assert "Traceback" not in output
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port bound and never listened on: every connection to it is refused at once."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield int(bound.getsockname()[1])


@pytest.fixture
def planted_postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database, its URL carrying the planted password (the test cluster
    trusts local connections, so any password is accepted and the service starts for real)."""
    admin_url = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    if not admin_url:
        raise RuntimeError(
            "MEMORY_TEST_POSTGRES_URL is not set: run the suite with `make test` "
            "(scripts/with-postgres.sh starts PostgreSQL)"
        )
    with postgres_database(admin_url) as url:
        yield make_url(url).set(password=PASSWORD).render_as_string(hide_password=False)


def test_migrate_and_serve_on_postgresql_print_the_url_without_its_password(
    planted_postgres_url: str, tmp_path: Path
) -> None:
    url = planted_postgres_url
    assert f"{MARK}-pw%40x@" in url  # the password is really there, percent-encoded
    env = memory_env(url, **PLANTED)

    migrated = run("memory_service", "migrate", env, tmp_path)
    assert migrated.startswith("exit 0"), migrated
    assert "schema is current: postgresql+psycopg://postgres:***@127.0.0.1" in migrated

    # libpq's other place for it: the query string.
    in_query = make_url(url).set(password=None).update_query_dict({"password": PASSWORD})
    as_query = run(
        "memory_service",
        "migrate",
        memory_env(in_query.render_as_string(hide_password=False), **PLANTED),
        tmp_path,
    )
    assert as_query.startswith("exit 0"), as_query
    assert "password=***" in as_query

    sidecar = start_server(
        "retrieval_service", retrieval_env(tmp_path / "sidecar", **PLANTED), tmp_path / "sidecar"
    )
    memory: ServerProcess | None = None
    try:
        memory = start_server(
            "memory_service",
            {**env, "MEMORY_AUTO_MIGRATE": "0", "MEMORY_RETRIEVAL_ADDRESS": sidecar.address},
            tmp_path / "memory",
        )
        exercise(memory, sidecar)
    finally:
        if memory is not None:
            assert memory.stop() == 0
        assert sidecar.stop() == 0
    served = memory.log() if memory is not None else ""
    assert "database: postgresql+psycopg://postgres:***@127.0.0.1" in served, served
    assert "memory service stopped" in served
    assert_no_secret(served)
    assert_no_secret(sidecar.log())


def exercise(memory: ServerProcess, sidecar: ServerProcess) -> None:
    """Calls that use each secret, and calls each side refuses (a token signed with another
    key, a sidecar call without the shared secret): the refusals are logged, the secrets not."""
    token = mint_token("t-secrets", "mara", ["admin"], secret=JWT_SECRET)
    mara = Client(memory.channel(token), "t-secrets", "mara")
    create_pref(mara, "meeting_time", "I prefer morning meetings")
    mara.memories.RecallMemories(
        memory_service_pb2.RecallMemoriesRequest(query="meetings"), timeout=30
    )
    forged = mint_token("t-secrets", "mara", secret="another-key-" + "k" * 32)
    with pytest.raises(grpc.RpcError) as refused:
        MemoryServiceStub(memory.channel(forged)).ListMemories(
            memory_service_pb2.ListMemoriesRequest(), timeout=10
        )
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as outsider:
        sidecar_stub(sidecar.address, secret=None).Search(
            retrieval_service_pb2.SearchRequest(tenant_id="t-secrets", query="meetings"),
            timeout=10,
        )
    assert outsider.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("command", ["migrate", "serve"])
def test_a_database_nobody_answers_at_is_one_line_without_the_password(
    command: str, refused_port: int, tmp_path: Path
) -> None:
    url = f"postgresql+psycopg://crm:{MARK}-pw%40x@127.0.0.1:{refused_port}/crm"
    env = memory_env(url, **PLANTED)
    line = one_line_failure(run("memory_service", command, env, tmp_path), 1)
    assert f"postgresql+psycopg://crm:***@127.0.0.1:{refused_port}/crm cannot be used" in line
    assert "Connection refused" in line


@pytest.mark.parametrize("command", ["migrate", "serve"])
@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+psycopg://crm:{MARK}@127.0.0.1:port/crm",  # a port that is not a number
        f"postgresql+psycopg://crm:{MARK}@x@127.0.0.1:5432/crm",  # a raw @ in the password
        # ... after a raw ? or /, which do not end the password for SQLAlchemy: the marker on
        # both sides of the @ (the part after it was printed as the host)
        f"postgresql+psycopg://crm:{MARK}?x@9{MARK}@127.0.0.1:5432/crm",
        f"postgresql+psycopg://crm:{MARK}/x@9{MARK}@127.0.0.1:5432/crm",
        f"postgresql+psycopg://crm:{MARK}@[::1/crm",  # an address left open
    ],
)
def test_a_url_sqlalchemy_would_misread_is_a_configuration_error_without_the_password(
    command: str, url: str, tmp_path: Path
) -> None:
    env = memory_env(url, **PLANTED)
    line = one_line_failure(run("memory_service", command, env, tmp_path), 2)
    assert "configuration error: MEMORY_DATABASE_URL='postgresql+psycopg://***@" in line
    assert "percent-encode" in line


# Connection strings that are not URLs, given by mistake: never quoted, whatever they hold.
NOT_URLS = [
    f"host=127.0.0.1 port=5432 user=app password={MARK}libpq dbname=crm",
    f"Server=127.0.0.1;Port=5432;Database=crm;User Id=app;Password={MARK}NET;",
]


@pytest.mark.parametrize("command", ["migrate", "serve", "memoryctl"])
@pytest.mark.parametrize("value", NOT_URLS)
def test_a_connection_string_that_is_not_a_url_is_refused_without_being_quoted(
    command: str, value: str, tmp_path: Path
) -> None:
    env = memory_env(value, **{**PLANTED, "MEMORY_TOKEN": ""})
    if command == "memoryctl":  # it reads the settings to sign a development token
        result = subprocess.run(
            [sys.executable, "-m", "memory_service.cli", "list"],
            env={**os.environ, **env},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        output = f"exit {result.returncode}\n{result.stdout}{result.stderr}"
        assert_no_secret(output)
        one_line_failure(output, result.returncode)  # which line depends on a service answering
        assert result.returncode != 0
        return
    line = one_line_failure(run("memory_service", command, env, tmp_path), 2)
    assert "configuration error: MEMORY_DATABASE_URL: expected a sqlite:/// or" in line


def test_the_sidecar_quotes_no_qdrant_url_that_is_not_a_url(tmp_path: Path) -> None:
    env = retrieval_env(tmp_path, **{**PLANTED, "QDRANT_URL": f"host=qdrant api_key={MARK}"})
    line = one_line_failure(run("retrieval_service", "serve", env, tmp_path), 2)
    assert (
        line
        == "retrieval service: configuration error: QDRANT_URL: expected http://host:port or https://host:port"
    )


@pytest.mark.parametrize("module", ["memory_service", "retrieval_service"])
@pytest.mark.parametrize("kind", ["missing", "a folder"])
def test_a_secret_put_in_the_file_variable_is_not_echoed_as_a_path(
    module: str, kind: str, tmp_path: Path
) -> None:
    """`RETRIEVAL_SHARED_SECRET_FILE=<the secret>` by mistake: the error names the variable and
    the reason, never the path it could not read."""
    value = f"{MARK}-file-secret-" + "f" * 32
    if kind == "a folder":
        (tmp_path / value).mkdir()
    planted = {**PLANTED, "RETRIEVAL_SHARED_SECRET": "", "RETRIEVAL_SHARED_SECRET_FILE": value}
    if module == "memory_service":
        env = memory_env(f"sqlite:///{tmp_path / 'm.db'}", MEMORY_RETRIEVAL_ADDRESS="127.0.0.1:1")
    else:
        env = retrieval_env(tmp_path)
    line = one_line_failure(run(module, "serve", {**env, **planted}, tmp_path), 2)
    reason = "No such file or directory" if kind == "missing" else "Is a directory"
    assert f"configuration error: RETRIEVAL_SHARED_SECRET_FILE cannot be read: {reason} (" in line


EXPORT_WARNING = r"export(ing)? (traces|metrics) to collector:"


@pytest.mark.parametrize("module", ["memory_service", "retrieval_service"])
def test_opentelemetry_logs_its_headers_and_endpoint_without_their_secrets(
    module: str, refused_port: int, tmp_path: Path
) -> None:
    """The SDK logs a malformed OTEL_EXPORTER_OTLP_HEADERS whole and its endpoint, password
    included, in every export warning: each process's log filter cleans both."""
    otel = {
        **PLANTED,
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization: Bearer {MARK}hdrtoken",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": f"api-key={MARK}%20metrics",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://collector:{MARK}otel@127.0.0.1:{refused_port}",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",  # a failed export a moment after start
    }
    if module == "memory_service":
        env = memory_env(f"sqlite:///{tmp_path / 'm.db'}", **otel)
    else:
        env = retrieval_env(tmp_path, **otel)
    server = start_server(module, env, tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not re.search(EXPORT_WARNING, server.log()) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        server.stop()
    log = server.log()
    assert_no_secret(log)
    assert "Header format invalid!" in log  # the SDK's warning is kept, its secret is not
    assert re.search(EXPORT_WARNING, log), log
    assert f"collector:***@127.0.0.1:{refused_port}" in log, log


def test_a_short_key_is_refused_without_being_quoted(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://crm:{MARK}@127.0.0.1:1/crm"
    env = memory_env(url, **{**PLANTED, "MEMORY_JWT_SECRET": f"{MARK}-short"})
    line = one_line_failure(run("memory_service", "serve", env, tmp_path), 2)
    assert "MEMORY_JWT_SECRET must be at least 32 characters" in line


def test_the_sidecar_refuses_an_old_qdrant_in_one_line_without_its_secrets(
    tmp_path: Path,
) -> None:
    with fake_qdrant("1.15.0") as (url, fake):
        planted = url.replace("http://", f"http://reader:{MARK}-pw@")
        output = run(
            "retrieval_service",
            "serve",
            retrieval_env(tmp_path, **{**PLANTED, "QDRANT_API_KEY": "", "QDRANT_URL": planted}),
            tmp_path,
        )
    line = one_line_failure(output, 1)
    assert line.startswith("retrieval service: Qdrant at http://reader:***@127.0.0.1:")
    assert "is version 1.15.0; the sidecar needs 1.16.0 or later" in line
    assert fake.calls == ["/qdrant.Qdrant/HealthCheck"]


@pytest.mark.parametrize("key", ["wrong", "missing"])
def test_the_sidecar_refuses_a_qdrant_that_refuses_its_key_in_one_line(
    key: str, tmp_path: Path
) -> None:
    """Qdrant answers HealthCheck (the version check) without the API key: the key is first
    used by the next call, whose refusal is one line too, not a traceback."""
    with fake_qdrant("1.18.2", refuse=grpc.StatusCode.UNAUTHENTICATED) as (url, fake):
        planted = url.replace("http://", f"http://reader:{MARK}-pw@")
        api_key = QDRANT_API_KEY if key == "wrong" else ""
        env = {**PLANTED, "QDRANT_API_KEY": api_key, "QDRANT_URL": planted}
        output = run("retrieval_service", "serve", retrieval_env(tmp_path, **env), tmp_path)
    status, *lines, line = output.splitlines()
    assert status == "exit 1", output
    assert "Traceback" not in output
    # Besides the refusal, only the logged warning that the key travels unencrypted.
    assert all(" WARNING " in other and "unencrypted" in other for other in lines), output
    assert len(lines) == (1 if key == "wrong" else 0), output
    assert line.startswith("retrieval service: Qdrant at http://reader:***@127.0.0.1:"), line
    assert (
        "refused the sidecar's API key (UNAUTHENTICATED: Invalid api-key); QDRANT_API_KEY" in line
    )
    assert fake.calls[0] == "/qdrant.Qdrant/HealthCheck"
    assert len(fake.calls) == 2, fake.calls  # the first call that needed the key, then nothing


def test_the_sidecar_with_its_api_key_names_a_qdrant_that_does_not_answer(
    refused_port: int, tmp_path: Path
) -> None:
    planted = f"http://reader:{MARK}-pw@127.0.0.1:{refused_port}"
    env = retrieval_env(tmp_path, **{**PLANTED, "QDRANT_URL": planted})
    output = run("retrieval_service", "serve", env, tmp_path)
    assert output.startswith("exit 1"), output
    assert "Traceback" not in output
    assert (
        f"Qdrant at http://reader:***@127.0.0.1:{refused_port} did not say its version"
        in (output.splitlines()[-1])
    )
