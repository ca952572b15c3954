"""`TOKEN=$(make -s token)` (README) and `export MEMORY_TOKEN="$(make -s token …)"`
(docs/deployment.md) keep make's stdout: on a fresh checkout `token` first generates the stubs,
and every step of that must stay off stdout, or the captured "token" holds their messages too."""

from __future__ import annotations

import os
import subprocess
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
