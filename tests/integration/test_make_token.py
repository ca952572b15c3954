"""`TOKEN=$(make -s token)` (README) and `export MEMORY_TOKEN="$(make -s token …)"`
(docs/deployment.md) keep make's stdout: on a fresh checkout `token` first generates the stubs,
and every step of that must stay off stdout, or the captured "token" holds their messages too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jwt

from tests.integration.test_manifests import ROOT


def make_token(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`make -s token` as on a fresh checkout: the stubs are generated again, into `tmp_path`
    (with the import path file there too, so the shared venv is left as it is)."""
    installed = tmp_path / ".installed"
    installed.touch()  # the venv is there: nothing to install
    return subprocess.run(
        [
            "make",
            "-s",
            "token",
            f"GEN={tmp_path / 'gen'}",
            f"GOOGLE={tmp_path / 'protos'}",
            f"GEN_PTH={tmp_path / 'crmmem_gen.pth'}",
            f"INSTALLED={installed}",
            *args,
        ],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "MAKE"))},
            "MEMORY_DATA_DIR": str(tmp_path / "data"),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_make_s_token_prints_only_the_token_on_a_fresh_checkout(tmp_path: Path) -> None:
    result = make_token(tmp_path, "TENANT=acme", "USER_ID=mara")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gen" / ".stamp").exists()  # the stubs were generated in this run
    [token] = result.stdout.splitlines()
    assert result.stdout == token + "\n"
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (claims["tenant"], claims["sub"]) == ("acme", "mara")


def test_the_token_command_refuses_an_id_the_service_would_refuse_in_one_line(
    tmp_path: Path,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "memory_service", "token", "--tenant", "acme", "--user", "bad user"],
        cwd=tmp_path,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")},
            "MEMORY_DEV_MODE": "1",
            "MEMORY_DATA_DIR": str(tmp_path / "data"),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "token: the service refuses the user id 'bad user': ids are 1 to 128 of "
        "A-Z a-z 0-9 . _ @ : -"
    ]
