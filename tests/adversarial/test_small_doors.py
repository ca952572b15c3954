"""Smaller doors: whole-string ids, canonical request ids, private files, dev-only tokens, short
token lifetimes, one authorization header, quiet undecodable requests, and no silently ignored
scope on an import confirmation."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import grpc
import jwt
import pytest
from crmmem.memory.v1 import access_service_pb2 as access_pb
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_pb2
from crmmem.memory.v1 import memory_service_pb2 as svc
from crmmem.memory.v1 import transcript_service_pb2 as tr

from tests.conftest import memory_env
from tests.e2e.helpers import (
    PREFERENCE,
    SCOPE_USER,
    USER,
    append,
    create_pref,
    expect_error,
    expect_invalid,
    messages,
    new_conversation,
)
from tests.support.servers import (
    JWT_AUDIENCE,
    JWT_ISSUER,
    TEST_JWT_SECRET,
    Client,
    ServerProcess,
    mint_token,
    start_server,
)

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED


def _as(server: ServerProcess, token: str) -> Client:
    return Client(server.channel(token), "", "")


def _caller(client: Client, metadata: list[tuple[str, str]] | None = None) -> str:
    reply = client.access.GetCaller(access_pb.GetCallerRequest(), metadata=metadata, timeout=10)
    return f"{reply.tenant_id}/{reply.user_id}"


# --------------------------------------------------------------------------- whole-string ids


def test_a_trailing_newline_makes_no_new_tenant_user_or_name(
    memory_server: ServerProcess, tenant: str
) -> None:
    for token in (mint_token(f"{tenant}\n", "mara"), mint_token(tenant, "mara\n")):
        expect_error(lambda t=token: _caller(_as(memory_server, t)), UNAUTHENTICATED)  # type: ignore[misc]
    mara = memory_server.client(tenant, "mara")
    memory = create_pref(mara, "meeting_time", "prefers mornings")
    expect_invalid(
        lambda: mara.memories.GetMemory(svc.GetMemoryRequest(name=f"{memory.name}\n"), timeout=10),
        "name",
    )
    expect_invalid(lambda: append(mara, f"{new_conversation()}\n", "hello"), "parent")
    expect_invalid(lambda: create_pref(mara, "meeting_time\n", "prefers evenings"), "memory.key")
    admin = memory_server.client(tenant, "ada", ["admin"])
    expect_invalid(
        lambda: admin.access.GrantCustomerAccess(
            access_pb.GrantCustomerAccessRequest(user_id="mara\n", customer_id="acme"),
            timeout=10,
        ),
        "user_id",
    )


# --------------------------------------------------------------------------- request ids


def test_five_spellings_of_one_request_id_make_one_write(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    conversation = new_conversation()
    request_id = uuid.uuid4()
    spellings = [
        str(request_id),
        str(request_id).upper(),
        request_id.hex,
        f"{{{request_id}}}",
        f"urn:uuid:{request_id}",
    ]
    names = {
        mara.transcript.AppendMessage(
            tr.AppendMessageRequest(
                parent=conversation,
                message=tr.Message(speaker=USER, text="I prefer mornings"),
                request_id=spelling,
            ),
            timeout=10,
        ).message.name
        for spelling in spellings
    }
    assert len(names) == 1
    assert [m.text for m in messages(mara, conversation)] == ["I prefer mornings"]


# --------------------------------------------------------------------------- authentication


def _token(lifetime: int | None, **drop: bool) -> str:
    now = int(time.time())
    claims = {
        "iss": JWT_ISSUER,
        "aud": JWT_AUDIENCE,
        "sub": "mara",
        "tenant": "t-lifetime",
        "iat": now,
        "exp": now + (lifetime or 60),
    }
    for name in drop:
        claims.pop(name)
    return jwt.encode(claims, TEST_JWT_SECRET, algorithm="HS256")


def test_tokens_live_at_most_a_day_and_carry_iat_and_exp(memory_server: ServerProcess) -> None:
    assert _caller(_as(memory_server, _token(24 * 3600))) == "t-lifetime/mara"
    for token in (
        _token(24 * 3600 + 1),
        _token(365 * 24 * 3600),
        _token(60, iat=True),
        _token(60, exp=True),
    ):
        expect_error(lambda t=token: _caller(_as(memory_server, t)), UNAUTHENTICATED)  # type: ignore[misc]


def test_two_authorization_headers_are_refused(memory_server: ServerProcess, tenant: str) -> None:
    mine = f"Bearer {mint_token(tenant, 'mara')}"
    admins = f"Bearer {mint_token(tenant, 'ada', ['admin'])}"
    bare = Client(memory_server.channel(), tenant, "")
    assert _caller(bare, [("authorization", mine)]) == f"{tenant}/mara"
    for pair in ([mine, admins], [mine, mine]):
        expect_error(
            lambda p=pair: _caller(bare, [("authorization", v) for v in p]),  # type: ignore[misc]
            UNAUTHENTICATED,
        )


def test_the_token_command_works_in_dev_mode_only(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MEMORY_JWT_SECRET": TEST_JWT_SECRET,
        "MEMORY_DATA_DIR": str(tmp_path / "data"),
        "MEMORY_DEV_MODE": "0",
    }
    command = [sys.executable, "-m", "memory_service", "token", "--tenant", "acme", "--user", "x"]
    production = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert production.returncode != 0
    assert production.stdout.strip() == ""
    assert "development mode" in production.stderr
    env["MEMORY_DEV_MODE"] = "1"
    development = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert development.returncode == 0, development.stderr
    assert development.stdout.count(".") == 2  # a JWT


# --------------------------------------------------------------------------- files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_database_and_data_folder_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    database = data / "memory.db"
    env = memory_env(f"sqlite:///{database}", MEMORY_DATA_DIR=str(data))
    server = start_server("memory_service", env, tmp_path / "run")
    try:
        create_pref(server.client("t-files", "mara"), "meeting_time", "prefers mornings")
    finally:
        server.stop()
    assert _mode(data) == 0o700
    written = [p for p in data.iterdir() if p.name.startswith("memory.db")]
    assert database in written
    assert {p.name: _mode(p) for p in written} == {p.name: 0o600 for p in written}
    # A database left readable by an older version is tightened at the next start.
    database.chmod(0o644)
    server = start_server("memory_service", env, tmp_path / "run")
    server.stop()
    assert _mode(database) == 0o600


def test_the_dev_key_is_private_from_its_first_byte(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "MEMORY_DATA_DIR": str(data), "MEMORY_DEV_MODE": "1"}
    env.pop("MEMORY_JWT_SECRET", None)
    command = [sys.executable, "-m", "memory_service", "token", "--tenant", "acme", "--user", "x"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    key = data / "dev-jwt-secret"
    assert _mode(key) == 0o600
    assert _mode(data) == 0o700
    assert [p.name for p in data.iterdir()] == ["dev-jwt-secret"]  # no temp file left behind
    secret = key.read_text()
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0
    assert key.read_text() == secret


# --------------------------------------------------------------------------- noise


def test_undecodable_requests_cost_no_traceback_each(fresh_memory_server: ServerProcess) -> None:
    channel = fresh_memory_server.channel()
    call = channel.unary_unary(
        "/crmmem.memory.v1.MemoryService/GetMemory",
        request_serializer=lambda body: body,
        response_deserializer=lambda body: body,
    )
    for _ in range(50):
        with pytest.raises(grpc.RpcError):
            call(b"\xff\xff\xff\xff", timeout=5)
    log = fresh_memory_server.log()
    assert "Traceback" not in log
    assert log.count("undecodable request bodies") <= 1


# --------------------------------------------------------------------------- imports


def test_confirming_an_import_into_another_users_scope_is_invalid(
    memory_server: ServerProcess, tenant: str
) -> None:
    mara = memory_server.client(tenant, "mara")
    batch = mara.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(
            format=imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY, archive=b"- I prefer window seats\n"
        ),
        timeout=60,
    ).batch
    item = mara.imports.ListImportItems(
        imp_pb.ListImportItemsRequest(parent=batch.name), timeout=10
    ).items[0]

    def confirm(scope_id: str) -> imp_pb.ConfirmImportItemResponse:
        return mara.imports.ConfirmImportItem(
            imp_pb.ConfirmImportItemRequest(
                name=item.name,
                memory=memory_pb2.Memory(
                    scope=memory_pb2.Scope(type=SCOPE_USER, id=scope_id),
                    key="seat",
                    kind=PREFERENCE,
                ),
            ),
            timeout=10,
        )

    expect_invalid(lambda: confirm("sam"), "memory.scope.id")
    assert confirm("mara").memory.scope.id == "mara"
