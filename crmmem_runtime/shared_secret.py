"""The secret the memory service and its retrieval sidecar share, and how it travels.

Only the memory service of the same pod may call the sidecar: whoever else can reach the port
could otherwise read any tenant's ids, rewrite or wipe its index. Both processes read the same
secret, from `RETRIEVAL_SHARED_SECRET` or from the file named by `RETRIEVAL_SHARED_SECRET_FILE`
(a mounted Kubernetes Secret); the memory service sends it as call metadata under
`METADATA_KEY` and the sidecar compares it in constant time (`retrieval_service.auth`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from pydantic import Field

from crmmem_runtime.settings import ConfigError, EnvSettings

MIN_SHARED_SECRET = 32
METADATA_KEY = "x-crmmem-retrieval-secret"


def call_metadata(secret: str) -> tuple[tuple[str, str], ...]:
    """The metadata every call to the sidecar carries."""
    return ((METADATA_KEY, secret),)


class SharedSecretSettings(EnvSettings):
    """Read by both processes."""

    retrieval_shared_secret: str = Field("", validation_alias="RETRIEVAL_SHARED_SECRET", repr=False)
    """The secret the memory service and its sidecar share (32+ characters); required unless
    dev mode (either this or the file)."""

    retrieval_shared_secret_file: str = Field(
        "",
        validation_alias="RETRIEVAL_SHARED_SECRET_FILE",
        repr=False,  # a secret put here by mistake is not shown either
    )
    """A file holding that secret (a mounted Kubernetes Secret); dev mode creates it (0600) when
    missing, so two processes pointed at one file agree whichever starts first."""

    def resolve_shared_secret(self, dev_mode: bool, dev_path: Path) -> str:
        """The secret from the variable, else the file; in dev mode one created on first use
        (at the `_FILE` path when one is given, else at `dev_path`)."""
        value = self.retrieval_shared_secret.strip()
        path_name = self.retrieval_shared_secret_file.strip()
        if not value and path_name:
            path = Path(path_name)
            try:
                if dev_mode and not path.exists():
                    create_secret_file(path)
                value = path.read_text().strip()
            except (OSError, UnicodeDecodeError) as error:
                # The reason alone: the path is the variable's value, which may be the secret
                # itself, put there by mistake.
                reason = getattr(error, "strerror", None) or type(error).__name__
                raise ConfigError(
                    f"RETRIEVAL_SHARED_SECRET_FILE cannot be read: {reason} (the variable names a "
                    "file holding the secret; RETRIEVAL_SHARED_SECRET takes the secret itself)"
                ) from None
        if not value:
            if not dev_mode:
                raise ConfigError(
                    "RETRIEVAL_SHARED_SECRET (or RETRIEVAL_SHARED_SECRET_FILE) is not set: the "
                    "retrieval sidecar only answers callers holding it. Set it to 32+ random "
                    "characters, or use dev mode for a generated one."
                )
            if not dev_path.exists():
                create_secret_file(dev_path)
            value = dev_path.read_text().strip()
        if len(value) < MIN_SHARED_SECRET:
            raise ConfigError(
                f"RETRIEVAL_SHARED_SECRET (or the content of RETRIEVAL_SHARED_SECRET_FILE) must "
                f"be at least {MIN_SHARED_SECRET} characters"
            )
        return value


def secure_dir(path: Path) -> None:
    """A process's own folder (SQLite file, dev keys): owner-only, whatever it was before."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)


def create_secret_file(path: Path) -> None:
    """A fresh random secret, written whole or not at all: a temp file created with O_EXCL and
    mode 0600 (never readable by others, not even for a moment), then linked into place, which
    fails rather than replace a secret that a second process starting at the same moment put
    there first."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.{secrets.token_hex(8)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process won: use its secret
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)
