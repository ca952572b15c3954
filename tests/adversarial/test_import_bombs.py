"""One request must not take the service down: hostile archives against a memory service held to
the pod's 512 MiB (docs/limits.md). Each archive ends in a clear error or a FAILED batch, the
service keeps serving, and a restart comes up clean without parsing anything again."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import memory_service_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy import create_engine, text

from tests.adversarial.memory import POD_LIMIT, MemoryWatch, mib
from tests.conftest import BACKENDS, memory_env
from tests.e2e.helpers import error_info
from tests.support import exports
from tests.support.exports import settled
from tests.support.servers import Client, ServerProcess, database_url, start_server

MiB = 1024 * 1024
CHATGPT = imp_pb.ARCHIVE_FORMAT_CHATGPT_CONVERSATIONS
SUMMARY = imp_pb.ARCHIVE_FORMAT_MEMORY_SUMMARY
EXPORT = imp_pb.ARCHIVE_FORMAT_CRMMEM_EXPORT


@dataclass
class Bounded:
    """A memory service under the pod's memory limit, restartable on the same database."""

    url: str
    workdir: Path
    server: ServerProcess = field(init=False)
    watch: MemoryWatch = field(init=False)

    def start(self, **env: str) -> None:
        self.server = start_server("memory_service", memory_env(self.url, **env), self.workdir)
        self.watch = MemoryWatch(self.server.process.pid, POD_LIMIT)

    def stop(self) -> None:
        self.server.stop()
        self.watch.stop()

    def restart(self, **env: str) -> None:
        self.stop()
        self.start(**env)

    def assert_alive_and_bounded(self, what: str) -> None:
        assert not self.watch.breached, (
            f"{what}: the service passed the pod limit ({mib(self.watch.breached)}) and was killed"
        )
        assert self.server.process.poll() is None, f"{what}: the service died:\n{self.server.log()}"
        peak = self.watch.peak
        print(f"peak RSS {mib(peak)} {what}")  # shown with -s: the figures in docs/limits.md
        assert peak < POD_LIMIT, f"{what}: peak RSS {mib(peak)}"
        with grpc.insecure_channel(self.server.address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


@pytest.fixture(scope="module", params=BACKENDS)
def bounded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Bounded]:
    workdir = tmp_path_factory.mktemp(f"bounded-{request.param}")
    with database_url(request.param, workdir)() as url:
        service = Bounded(url, workdir)
        service.start()
        yield service
        service.stop()


def mallory(bounded: Bounded, roles: tuple[str, ...] = ()) -> Client:
    """Any signed-in user, in a tenant of their own."""
    return bounded.server.client(f"t-{uuid.uuid4().hex[:10]}", "mallory", roles)


def submit(client: Client, fmt: int, archive: bytes) -> imp_pb.ImportBatch:
    reply = client.imports.CreateImportBatch(
        imp_pb.CreateImportBatchRequest(format=fmt, archive=archive),
        compression=grpc.Compression.Gzip,
        timeout=300,
    )
    return reply.batch


def attempt(client: Client, fmt: int, archive: bytes) -> imp_pb.ImportBatch | grpc.RpcError:
    try:
        return submit(client, fmt, archive)
    except grpc.RpcError as error:
        return error


def summary_bomb(size: int) -> bytes:
    return b"- a\n" * (size // 4)


def empty_mappings(count: int) -> bytes:
    return b"[" + b",".join([b'{"mapping":{}}'] * count) + b"]"


def deep_nesting(depth: int) -> bytes:
    return b'[{"mapping":' + b"[" * depth + b"]" * depth + b"}]"


def wide_conversation(nodes: int) -> bytes:
    mapping = b",".join(b'"n%d":{}' % n for n in range(nodes))
    return b'[{"current_node":"n0","mapping":{' + mapping + b"}}]"


def huge_line(size: int) -> bytes:
    return b"a" * size


def export_lines(count: int, value_chars: int) -> bytes:
    """Valid lines of this service's export, each a distinct memory at the value limit."""
    records = [
        exports.memory(
            key=f"k{n}",
            user="mallory",
            kind="FACT",
            revisions=[
                exports.revision(
                    f"value {n} " + "v" * value_chars,
                    author_user_id="mallory",
                    confirmation=exports.confirmed_by("mallory"),
                )
            ],
        )
        for n in range(count)
    ]
    return exports.archive(*records)


REFUSED = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT)

# (id, format, archive builder, what the outcome says: refused on receipt or FAILED with it)
HOSTILE: list[tuple[str, int, Callable[[], bytes], str]] = [
    ("gzip-summary-bomb-60MiB", SUMMARY, lambda: summary_bomb(60 * MiB), "refused: larger than"),
    ("summary-15MiB-of-bullets", SUMMARY, lambda: summary_bomb(15 * MiB), "more than 200000"),
    ("1e6-empty-mappings", CHATGPT, lambda: empty_mappings(1_000_000), "more than 50000"),
    ("deep-nesting", CHATGPT, lambda: deep_nesting(7 * MiB), "nested more than 64"),
    ("one-huge-line", SUMMARY, lambda: huge_line(15 * MiB), "more than 32000 characters"),
    ("one-huge-json-string", CHATGPT, lambda: b'["' + huge_line(15 * MiB) + b'"]', "expected dict"),
    ("a-million-nodes", CHATGPT, lambda: wide_conversation(1_000_000), "JSON values"),
]


@pytest.mark.parametrize(
    ("fmt", "build", "outcome"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_a_hostile_archive_fails_cleanly_under_the_pod_limit(
    bounded: Bounded, fmt: int, build: Callable[[], bytes], outcome: str
) -> None:
    client = mallory(bounded)
    archive = build()
    bounded.watch.reset_peak()
    answer = attempt(client, fmt, archive)
    if isinstance(answer, grpc.RpcError):
        assert outcome.startswith("refused"), f"unexpected refusal: {answer.details()}"
        assert answer.code() in REFUSED
        assert outcome.removeprefix("refused: ") in (answer.details() or "")
    else:
        assert not outcome.startswith("refused"), "an oversized archive was accepted"
        batch = settled(client, answer, timeout=300)
        assert batch.state == imp_pb.IMPORT_STATE_FAILED
        assert outcome in batch.error
        assert batch.accepted_count == batch.skipped_count == 0  # nothing kept from it
    bounded.assert_alive_and_bounded(f"after {len(archive)} bytes ({outcome})")
    # and it still serves: a small import of the same user goes through at once
    small = submit(client, SUMMARY, b"- prefers morning meetings\n")
    assert small.state == imp_pb.IMPORT_STATE_SUCCEEDED


@pytest.mark.timeout(900)  # every restored value passes the secret detector: minutes here
def test_a_large_valid_restore_stays_under_the_pod_limit(bounded: Bounded) -> None:
    admin = mallory(bounded, ("admin",))
    archive = export_lines(3_100, 3_980)  # about 15 MiB: values at the 4,000-character limit
    assert len(archive) > 14 * MiB
    bounded.watch.reset_peak()
    batch = settled(admin, submit(admin, EXPORT, archive), timeout=900)
    assert batch.state == imp_pb.IMPORT_STATE_SUCCEEDED, batch.error
    assert batch.accepted_count == 3_100
    bounded.assert_alive_and_bounded("after restoring 3,100 memories")
    bounded.watch.reset_peak()
    memories = 0
    for chunk in admin.memories.ExportMemories(
        memory_service_pb2.ExportMemoriesRequest(parent="users/mallory"), timeout=600
    ):
        memories += sum('"record": "memory"' in line for line in chunk.lines)
    assert memories == 3_100
    bounded.assert_alive_and_bounded("after exporting 3,100 memories")


def test_a_restart_is_clean_and_failed_batches_are_not_parsed_again(bounded: Bounded) -> None:
    client = mallory(bounded)
    batch = settled(client, submit(client, SUMMARY, summary_bomb(15 * MiB)), timeout=300)
    assert batch.state == imp_pb.IMPORT_STATE_FAILED
    bounded.restart()
    bounded.assert_alive_and_bounded("after a restart")
    client = bounded.server.client(client.tenant, client.user)
    again = client.imports.GetImportBatch(imp_pb.GetImportBatchRequest(name=batch.name)).batch
    assert again.state == imp_pb.IMPORT_STATE_FAILED
    assert again.complete_time == batch.complete_time  # not touched since
    assert "import batch" not in bounded.server.log()


def test_a_batch_whose_parse_kept_dying_is_given_up_and_its_archive_dropped(
    bounded: Bounded,
) -> None:
    """Three processes died parsing it (simulated: the attempts are recorded, the lease is
    free): the next replica to see it ends it FAILED instead of dying a fourth time."""
    client = mallory(bounded)
    batch = settled(client, submit(client, SUMMARY, summary_bomb(2 * MiB)), timeout=300)
    batch_id = batch.name.rsplit("/", 1)[1]
    bounded.stop()
    engine = create_engine(bounded.url)
    with engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE import_batches SET state = 'PENDING', error = '', attempts = 3, "
                "archive = :archive, lease_owner = 'dead', lease_until = NULL WHERE id = :id"
            ),
            {"archive": summary_bomb(2 * MiB), "id": batch_id},
        )
    bounded.start()
    client_again = bounded.server.client(client.tenant, client.user)
    pending = client_again.imports.GetImportBatch(imp_pb.GetImportBatchRequest(name=batch.name))
    batch = settled(client_again, pending.batch, timeout=300)
    assert batch.state == imp_pb.IMPORT_STATE_FAILED
    assert "gave up after 3 attempts" in batch.error
    with engine.begin() as connection:
        archive, attempts = connection.execute(
            text("SELECT archive, attempts FROM import_batches WHERE id = :id"), {"id": batch_id}
        ).one()
    engine.dispose()
    assert archive is None
    assert attempts == 4
    assert (
        client_again.imports.GetImportBatch(
            imp_pb.GetImportBatchRequest(name=batch.name)
        ).batch.state
        == imp_pb.IMPORT_STATE_FAILED
    )


def test_pending_archives_per_user_are_capped(bounded: Bounded) -> None:
    bounded.restart(MEMORY_IMPORT_WORKER="0")  # nothing drains, so batches stay pending
    try:
        client = mallory(bounded)
        for n in range(2):
            batch = submit(client, SUMMARY, f"- item {n}\n".encode() * 100_000)
            assert batch.state == imp_pb.IMPORT_STATE_PENDING
        with pytest.raises(grpc.RpcError) as refused:
            submit(client, SUMMARY, b"- one more\n" * 100_000)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_info(refused.value).reason == "TOO_MANY_PENDING_IMPORTS"
        other = bounded.server.client(client.tenant, "someone-else")
        assert submit(other, SUMMARY, b"- mine\n" * 100_000).state == imp_pb.IMPORT_STATE_PENDING
        small = submit(client, SUMMARY, b"- small ones are parsed at once\n")
        assert small.state == imp_pb.IMPORT_STATE_SUCCEEDED
    finally:
        bounded.restart()
