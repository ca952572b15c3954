"""Settings from the environment, read once at start-up. Every variable is listed in the README."""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

MIN_SHARED_SECRET = 32


class ConfigError(Exception):
    pass


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    listen: str
    port_file: str
    jwt_secret: str
    jwt_issuer: str
    jwt_audience: str
    jwt_max_lifetime_seconds: int
    dev_mode: bool
    auto_migrate: bool
    idempotency_ttl_hours: int
    max_workers: int
    shutdown_grace_seconds: float
    shutdown_drain_seconds: float
    database_probe_seconds: float
    retrieval_address: str
    retrieval_secret: str
    recall_timeout_seconds: float
    recall_margin_seconds: float
    breaker_min_calls: int
    breaker_failure_rate: float
    breaker_window_seconds: float
    breaker_reset_seconds: float
    outbox_worker: bool
    outbox_poll_seconds: float
    index_check_seconds: float
    apply_user_corrections: bool
    backup_retention_days: int
    marker_retention_days: int
    import_worker: bool = True
    import_poll_seconds: float = 2.0
    import_lease_seconds: float = 600.0
    usage_tracking: bool = True
    usage_flush_seconds: float = 2.0

    @classmethod
    def from_env(cls, serving: bool = True) -> Settings:
        """`serving=False` for one-shot commands (migrate, token) that never call the sidecar."""
        data_dir = Path(os.environ.get("MEMORY_DATA_DIR", "data")).resolve()
        dev_mode = _flag("MEMORY_DEV_MODE", False)
        secret = os.environ.get("MEMORY_JWT_SECRET", "")
        if not secret:
            if not dev_mode:
                raise ConfigError(
                    "MEMORY_JWT_SECRET is not set. Set it (32+ random characters), or set "
                    "MEMORY_DEV_MODE=1 to use a generated development key."
                )
            secret = dev_secret(data_dir)
        if len(secret) < 32:
            raise ConfigError("MEMORY_JWT_SECRET must be at least 32 characters")
        max_lifetime = int(os.environ.get("MEMORY_JWT_MAX_LIFETIME_SECONDS", "86400"))
        if max_lifetime < 60:
            raise ConfigError("MEMORY_JWT_MAX_LIFETIME_SECONDS must be at least 60")
        ttl = int(os.environ.get("MEMORY_IDEMPOTENCY_TTL_HOURS", "48"))
        if ttl < 24:
            raise ConfigError("MEMORY_IDEMPOTENCY_TTL_HOURS must be at least 24")
        retrieval_address = _optional_address(
            os.environ.get("MEMORY_RETRIEVAL_ADDRESS", "127.0.0.1:50052")
        )
        retrieval_secret = ""
        if retrieval_address and serving:
            retrieval_secret = shared_secret(dev_mode, data_dir / "retrieval-secret")
        return cls(
            data_dir=data_dir,
            database_url=os.environ.get(
                "MEMORY_DATABASE_URL", f"sqlite:///{data_dir / 'memory.db'}"
            ),
            listen=os.environ.get("MEMORY_LISTEN", "127.0.0.1:50051"),
            port_file=os.environ.get("PORT_FILE", ""),
            jwt_secret=secret,
            jwt_issuer=os.environ.get("MEMORY_JWT_ISSUER", "crmmem"),
            jwt_audience=os.environ.get("MEMORY_JWT_AUDIENCE", "crmmem.memory"),
            jwt_max_lifetime_seconds=max_lifetime,
            dev_mode=dev_mode,
            auto_migrate=_flag("MEMORY_AUTO_MIGRATE", True),
            idempotency_ttl_hours=ttl,
            max_workers=int(os.environ.get("MEMORY_MAX_WORKERS", "16")),
            shutdown_grace_seconds=float(os.environ.get("MEMORY_SHUTDOWN_GRACE_SECONDS", "10")),
            shutdown_drain_seconds=float(os.environ.get("MEMORY_SHUTDOWN_DRAIN_SECONDS", "5")),
            database_probe_seconds=float(os.environ.get("MEMORY_DATABASE_PROBE_SECONDS", "1")),
            retrieval_address=retrieval_address,
            retrieval_secret=retrieval_secret,
            recall_timeout_seconds=float(os.environ.get("MEMORY_RECALL_TIMEOUT_MS", "5000")) / 1000,
            recall_margin_seconds=float(os.environ.get("MEMORY_RECALL_MARGIN_MS", "50")) / 1000,
            breaker_min_calls=int(os.environ.get("MEMORY_BREAKER_MIN_CALLS", "5")),
            breaker_failure_rate=float(os.environ.get("MEMORY_BREAKER_FAILURE_RATE", "0.5")),
            breaker_window_seconds=float(os.environ.get("MEMORY_BREAKER_WINDOW_SECONDS", "10")),
            breaker_reset_seconds=float(os.environ.get("MEMORY_BREAKER_RESET_SECONDS", "2")),
            outbox_worker=_flag("MEMORY_OUTBOX_WORKER", True),
            outbox_poll_seconds=float(os.environ.get("MEMORY_OUTBOX_POLL_SECONDS", "0.1")),
            index_check_seconds=float(os.environ.get("MEMORY_INDEX_CHECK_SECONDS", "10")),
            apply_user_corrections=_flag("MEMORY_APPLY_USER_CORRECTIONS", False),
            backup_retention_days=int(os.environ.get("MEMORY_BACKUP_RETENTION_DAYS", "30")),
            marker_retention_days=int(os.environ.get("MEMORY_DELETION_MARKER_DAYS", "365")),
            import_worker=_flag("MEMORY_IMPORT_WORKER", True),
            import_poll_seconds=float(os.environ.get("MEMORY_IMPORT_POLL_SECONDS", "2")),
            import_lease_seconds=float(os.environ.get("MEMORY_IMPORT_LEASE_SECONDS", "600")),
            usage_tracking=_flag("MEMORY_USAGE_TRACKING", True),
            usage_flush_seconds=_positive("MEMORY_USAGE_FLUSH_SECONDS", "2"),
        )


def _positive(name: str, default: str) -> float:
    value = float(os.environ.get(name, default))
    if not value > 0:
        raise ConfigError(f"{name} must be a positive number of seconds")
    return value


def _optional_address(value: str) -> str:
    """An empty value or `none` turns search off: recall then always answers degraded."""
    return "" if value.strip().lower() in ("", "none", "off") else value.strip()


def secure_dir(path: Path) -> None:
    """The service's own folder (SQLite file, dev key): owner-only, whatever it was before."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)


def secure_data_dir(settings: Settings) -> None:
    """Tightens the data folder when the service keeps anything there (SQLite, the dev key);
    a PostgreSQL deployment without dev mode may have no writable data folder at all."""
    sqlite_inside = settings.database_url.startswith("sqlite") and str(settings.data_dir) in (
        settings.database_url
    )
    if settings.data_dir.exists() or sqlite_inside:
        secure_dir(settings.data_dir)


def dev_secret(data_dir: Path) -> str:
    """A per-checkout development key, created on first use and kept in the data folder."""
    path = data_dir / "dev-jwt-secret"
    if not path.exists():
        secure_dir(data_dir)
        create_secret_file(path)
    path.chmod(0o600)
    return path.read_text().strip()


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


def shared_secret(dev_mode: bool, dev_path: Path) -> str:
    """The secret the memory service and its retrieval sidecar share (see retrieval_service.auth),
    read by both from `RETRIEVAL_SHARED_SECRET` or the file in `RETRIEVAL_SHARED_SECRET_FILE`.

    Dev mode creates it on first use: at the `_FILE` path when one is given (so two processes
    pointed at one file, as `make run` does, agree whichever starts first), else at `dev_path`.
    """
    value = os.environ.get("RETRIEVAL_SHARED_SECRET", "").strip()
    path_name = os.environ.get("RETRIEVAL_SHARED_SECRET_FILE", "").strip()
    if not value and path_name:
        path = Path(path_name)
        if dev_mode and not path.exists():
            create_secret_file(path)
        try:
            value = path.read_text().strip()
        except OSError as error:
            raise ConfigError(f"RETRIEVAL_SHARED_SECRET_FILE cannot be read: {error}") from error
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
            f"the retrieval shared secret must be at least {MIN_SHARED_SECRET} characters"
        )
    return value
