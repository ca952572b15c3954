"""The first hour, as a newcomer meets it (issue 38, item 5): the README's steps in order, run
against real services. No service up, a token signed with another key, or a conversation that
is not the caller's: each is one line on stderr naming what was tried and what to set, never a
traceback. `memoryctl about` shows what is known, labelled, without scores or a score floor."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crmmem.memory.v1 import memory_service_pb2 as svc

from tests.conftest import memory_env
from tests.e2e.helpers import ASSISTANT, ASSISTANT_INFERENCE, correct, create_memory, next_monday
from tests.support.servers import TEST_JWT_SECRET, ServerProcess, database_url, start_server

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
EXAMPLES = {"quickstart": ROOT / "examples/quickstart.py", "demo": ROOT / "examples/mara_demo.py"}


def closed_address() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`command` as a newcomer's shell runs it: none of the test run's MEMORY_* settings, only
    those given, and MEMORY_DEV_MODE=1 as `make quickstart` / `make demo` set it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    return subprocess.run(
        command,
        cwd=cwd,
        env={**clean, "MEMORY_DEV_MODE": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def memoryctl(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "memory_service.cli", *args], cwd, **env)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The failure a person sees: exit status 1 and exactly one line on stderr."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def readme_command(program: str) -> list[str]:
    """The arguments of the README's first `memoryctl <program> …` example."""
    found = re.search(rf"memoryctl ({program} [^#\n]*)", README.read_text())
    assert found, f"the README shows no `memoryctl {program}` example"
    return shlex.split(found.group(1))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_an_example_without_a_service_says_so_in_one_line(name: str, tmp_path: Path) -> None:
    address = closed_address()
    line = one_line(run([sys.executable, str(EXAMPLES[name])], tmp_path, MEMORY_ADDRESS=address))
    assert line.startswith(f"{name}: no memory service answers at {address}")
    assert "make run" in line
    assert "MEMORY_ADDRESS=" in line
    assert not (tmp_path / "data").exists()  # no development key made for nothing


def test_memoryctl_without_a_service_says_so_in_one_line(tmp_path: Path) -> None:
    address = closed_address()
    line = one_line(memoryctl("list", cwd=tmp_path, MEMORY_ADDRESS=address))
    assert line.startswith(f"memoryctl: no memory service answers at {address}")
    assert "make run" in line
    assert "MEMORY_ADDRESS=" in line


def test_the_readme_in_order_quickstart_then_its_memoryctl_examples(
    fresh_memory_server: ServerProcess, tmp_path: Path
) -> None:
    """`make quickstart`, then the README's `memoryctl context` line as written, then `about`:
    each answers with what the quickstart said and stored."""
    env = {"MEMORY_ADDRESS": fresh_memory_server.address, "MEMORY_JWT_SECRET": TEST_JWT_SECRET}
    quick = run([sys.executable, str(EXAMPLES["quickstart"])], tmp_path, **env)
    assert quick.returncode == 0, quick.stderr
    assert "conversations/quickstart/messages/" in quick.stdout

    context = memoryctl(*readme_command("context"), cwd=tmp_path, **env)
    assert context.returncode == 0, context.stderr
    assert "I prefer morning meetings for work" in context.stdout  # the conversation's window
    assert "prefers morning meetings" in context.stdout  # what applies
    assert "score" not in context.stdout

    about = memoryctl("about", "meetings", cwd=tmp_path, **env)
    assert about.returncode == 0, about.stderr
    assert "Remembered about 'meetings'" in about.stdout
    assert re.search(r"^  now +prefers morning meetings$", about.stdout, re.MULTILINE)
    assert re.search(
        r"^  from \d{4}-\d\d-\d\d 00:00 +prefers afternoon meetings$", about.stdout, re.M
    )
    afternoon = memoryctl("about", "afternoon", cwd=tmp_path, **env).stdout
    assert re.search(r"^  to confirm +keep Friday afternoons free of calls$", afternoon, re.M)
    assert "said " in afternoon
    assert "assistant (assistant_inference)" in afternoon


def test_context_of_a_conversation_that_is_not_yours_says_what_to_name(
    memory_server: ServerProcess, tenant: str, tmp_path: Path
) -> None:
    env = {
        "MEMORY_ADDRESS": memory_server.address,
        "MEMORY_JWT_SECRET": TEST_JWT_SECRET,
        "MEMORY_TENANT": tenant,
    }
    line = one_line(memoryctl("context", "--conversation", "conversations/c1", cwd=tmp_path, **env))
    assert line.startswith("memoryctl: NOT_FOUND: conversations/c1 is not one of your")
    assert "conversations/quickstart" in line
    assert "leave --conversation out" in line


def test_memoryctl_signs_with_the_key_the_running_development_service_keeps(
    tmp_path: Path,
) -> None:
    """A development service makes its key in its data folder; memoryctl, run from anywhere,
    signs with that key when MEMORY_DATA_DIR names the folder (or from the folder the service
    runs in), and never makes a key of its own."""
    service_dir = tmp_path / "service"
    data = service_dir / "data"
    with database_url("sqlite", tmp_path)() as url:
        env = memory_env(url, MEMORY_DEV_MODE="1", MEMORY_JWT_SECRET="", MEMORY_DATA_DIR=str(data))
        server = start_server("memory_service", env, service_dir)
    try:
        address = {"MEMORY_ADDRESS": server.address}
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        named = memoryctl("list", cwd=elsewhere, MEMORY_DATA_DIR=str(data), **address)
        assert named.returncode == 0, named.stderr
        beside = memoryctl("list", cwd=service_dir, **address)
        assert beside.returncode == 0, beside.stderr

        other = tmp_path / "other"
        other.mkdir()
        (other / "dev-jwt-secret").write_text("z" * 64)
        refused = one_line(memoryctl("list", cwd=elsewhere, MEMORY_DATA_DIR=str(other), **address))
        assert refused.startswith("memoryctl: UNAUTHENTICATED: ")
        assert str(other / "dev-jwt-secret") in refused
        assert "set MEMORY_DATA_DIR to the folder holding its dev-jwt-secret" in refused
        demo = run(
            [sys.executable, str(EXAMPLES["demo"])],
            elsewhere,
            MEMORY_DATA_DIR=str(other),
            **address,
        )
        line = one_line(demo)
        assert line.startswith("demo: UNAUTHENTICATED: ")
        assert "MEMORY_DATA_DIR" in line
        assert "MEMORY_JWT_SECRET" in line

        empty = tmp_path / "empty"
        missing = one_line(memoryctl("list", cwd=elsewhere, MEMORY_DATA_DIR=str(empty), **address))
        assert missing.startswith("memoryctl: no token: set MEMORY_TOKEN")
        assert "MEMORY_DATA_DIR" in missing
        assert not empty.exists()
        assert not (elsewhere / "data").exists()
    finally:
        server.stop()


def test_about_shows_what_names_the_subject_then_what_recall_relates_without_scores(
    recall_server: ServerProcess, tenant: str, tmp_path: Path
) -> None:
    """No score floor: a question sharing no word with any memory still gets the closest
    memories, labelled as related by meaning; memories naming the subject come first."""
    mara = recall_server.client(tenant, "mara")
    meetings = create_memory(mara, "meeting_time", "I prefer morning meetings").memory
    monday = next_monday()
    correct(mara, meetings, "I prefer afternoon meetings", valid_from=monday)
    create_memory(
        mara,
        "call_free_time",
        "keep Friday afternoons free of calls",
        method=ASSISTANT_INFERENCE,
        speaker=ASSISTANT,
    )
    question = "when do I like to get together with people"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the outbox has indexed the memory
        hits = mara.memories.RecallMemories(svc.RecallMemoriesRequest(query=question, limit=5))
        if any(h.memory.name == meetings.name for h in hits.memories):
            break
        time.sleep(0.2)
    env = {
        "MEMORY_ADDRESS": recall_server.address,
        "MEMORY_JWT_SECRET": TEST_JWT_SECRET,
        "MEMORY_TENANT": tenant,
    }

    related = memoryctl("about", question, cwd=tmp_path, **env)
    assert related.returncode == 0, related.stderr
    shown = related.stdout
    assert f"Nothing remembered names {question!r}." in shown
    assert "Related by meaning, closest first:" in shown
    assert "meeting_time" in shown
    assert f"from {monday:%Y-%m-%d} 00:00" in shown
    assert not re.search(r"\b0\.\d\d\b", shown), shown  # no similarity scores

    named = memoryctl("about", "afternoon", cwd=tmp_path, **env).stdout
    mine, _, _ = named.partition("Related by meaning")
    assert "meeting_time" in mine  # its value from Monday names it
    assert "call_free_time" in mine
    assert "to confirm" in mine
