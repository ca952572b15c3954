"""The memory service's settings, read once at start-up from the environment.

Each field is one variable (its alias) with its type, default and bounds; its docstring is the
description in docs/settings.md (whose table is generated from here: `make settings-table`). A bad
value stops the process with one line naming the variable (`crmmem_runtime.settings.load`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, PrivateAttr, field_validator

from crmmem_runtime.process import ProcessSettings
from crmmem_runtime.redaction import url_secrets
from crmmem_runtime.settings import AbsolutePath, ConfigError, HostPort, host_port, load
from crmmem_runtime.shared_secret import create_secret_file, secure_dir

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

__all__ = ["ConfigError", "Settings", "dev_secret", "secure_data_dir"]

MIN_JWT_SECRET = 32
DATABASE_SCHEMES = ("sqlite", "postgresql")


def _default_database_url(data: dict[str, Any]) -> str:
    return f"sqlite:///{Path(data.get('data_dir', 'data')).resolve() / 'memory.db'}"


class Settings(ProcessSettings):
    """Everything `python -m memory_service` reads. `from_env` adds the secrets it resolves."""

    data_dir: AbsolutePath = Field(
        Path("data"), validate_default=True, validation_alias="MEMORY_DATA_DIR"
    )
    """Where the SQLite file and the dev keys live."""

    database_url: str = Field(
        default_factory=_default_database_url,
        validation_alias="MEMORY_DATABASE_URL",
        json_schema_extra={"shown_default": "`sqlite:///data/memory.db` (in `MEMORY_DATA_DIR`)"},
        repr=False,  # it may carry the password
    )
    """SQLAlchemy URL; `postgresql+psycopg://…` in production."""

    listen: HostPort = Field("127.0.0.1:50051", validation_alias="MEMORY_LISTEN")
    """Address to listen on (`0.0.0.0:50051` in a container; port 0 takes any free port)."""

    jwt_secret: str = Field("", validation_alias="MEMORY_JWT_SECRET", repr=False)
    """HS256 key (32+ characters); required unless dev mode, which generates and keeps one in
    `MEMORY_DATA_DIR/dev-jwt-secret` (its text is the key as-is)."""

    jwt_issuer: str = Field("crmmem", min_length=1, validation_alias="MEMORY_JWT_ISSUER")
    """Expected `iss` claim."""

    jwt_audience: str = Field("crmmem.memory", min_length=1, validation_alias="MEMORY_JWT_AUDIENCE")
    """Expected `aud` claim."""

    jwt_max_lifetime_seconds: int = Field(
        86400, ge=60, validation_alias="MEMORY_JWT_MAX_LIFETIME_SECONDS"
    )
    """Longest accepted token (`exp - iat`); longer ones are `UNAUTHENTICATED`."""

    dev_mode: bool = Field(
        False,
        validation_alias="MEMORY_DEV_MODE",
        json_schema_extra={"shown_default": "`0` (`1` under `make run`)"},
    )
    """Generate and keep a dev key; enables `make token` (the `token` command refuses to run
    otherwise)."""

    auto_migrate: bool = Field(True, validation_alias="MEMORY_AUTO_MIGRATE")
    """Run Alembic migrations at start; set `0` and run `python -m memory_service migrate` as a
    separate step with several replicas."""

    idempotency_ttl_hours: int = Field(48, ge=24, validation_alias="MEMORY_IDEMPOTENCY_TTL_HOURS")
    """How long request ids are honoured."""

    max_workers: int = Field(16, ge=1, le=1024, validation_alias="MEMORY_MAX_WORKERS")
    """gRPC worker threads."""

    shutdown_drain_seconds: float = Field(5, ge=0, validation_alias="MEMORY_SHUTDOWN_DRAIN_SECONDS")
    """On SIGTERM: health NOT_SERVING while calls are still served for this long, so balancers
    move traffic away."""

    shutdown_grace_seconds: float = Field(
        10, ge=0, validation_alias="MEMORY_SHUTDOWN_GRACE_SECONDS"
    )
    """Then new calls are refused and in-flight calls get this long."""

    database_probe_seconds: float = Field(1, gt=0, validation_alias="MEMORY_DATABASE_PROBE_SECONDS")
    """How often health checks the database; NOT_SERVING while it does not answer."""

    retrieval_address: str = Field("127.0.0.1:50052", validation_alias="MEMORY_RETRIEVAL_ADDRESS")
    """The sidecar; `none` (or empty) turns search off (recall always degraded)."""

    recall_timeout_ms: float = Field(5000, gt=0, validation_alias="MEMORY_RECALL_TIMEOUT_MS")
    """A recall's deadline when the caller sets none, from the start of the recall (the search
    gives up early enough to reply by then), and the longest any search waits."""

    recall_margin_ms: float = Field(50, ge=0, validation_alias="MEMORY_RECALL_MARGIN_MS")
    """Least time kept before a recall's deadline (the caller's, or the timeout for a caller
    without one) for validation and the reply."""

    breaker_min_calls: int = Field(5, ge=1, validation_alias="MEMORY_BREAKER_MIN_CALLS")
    """The breaker judges the window only once it holds at least this many calls."""

    breaker_failure_rate: float = Field(
        0.5, gt=0, le=1, validation_alias="MEMORY_BREAKER_FAILURE_RATE"
    )
    """The breaker opens when failures (1 each) and counted misses (0.5 each: searches that had
    at least half of `MEMORY_RECALL_TIMEOUT_MS`) over the window's calls reach this rate."""

    breaker_window_seconds: float = Field(
        10, gt=0, validation_alias="MEMORY_BREAKER_WINDOW_SECONDS"
    )
    """The breaker's sliding window."""

    breaker_misses_in_a_row: int = Field(2, ge=0, validation_alias="MEMORY_BREAKER_MISSES_IN_A_ROW")
    """The breaker also opens once this many searches that each had at least half of
    `MEMORY_RECALL_TIMEOUT_MS` missed it, with no search sent after the first of them answered,
    however few calls the window holds (0: only the window decides)."""

    breaker_reset_seconds: float = Field(2, ge=0, validation_alias="MEMORY_BREAKER_RESET_SECONDS")
    """How long the breaker stays open before its trial, a probe search of the service's own
    (the sidecar reporting SERVING allows it at once)."""

    outbox_worker: bool = Field(True, validation_alias="MEMORY_OUTBOX_WORKER")
    """Run the outbox drain (index updates) in this process."""

    outbox_poll_seconds: float = Field(1.0, gt=0, validation_alias="MEMORY_OUTBOX_POLL_SECONDS")
    """The outbox drain's idle poll: how late work not committed by this process (another
    replica's, a crashed drain's, a retry or change coming due) is noticed; this process's
    commits wake the drain at once."""

    index_check_seconds: float = Field(10, gt=0, validation_alias="MEMORY_INDEX_CHECK_SECONDS")
    """How often, per tenant, recall checks that the index holds every searchable memory (every
    second while it does not)."""

    apply_user_corrections: bool = Field(False, validation_alias="MEMORY_APPLY_USER_CORRECTIONS")
    """Proposals that are explicit user corrections apply directly instead of waiting for
    review."""

    backup_retention_days: int = Field(30, ge=0, validation_alias="MEMORY_BACKUP_RETENTION_DAYS")
    """Stated in deletion receipts: how long deleted data may remain in backups."""

    marker_retention_days: int = Field(365, ge=1, validation_alias="MEMORY_DELETION_MARKER_DAYS")
    """How long deletion markers are kept."""

    import_worker: bool = Field(True, validation_alias="MEMORY_IMPORT_WORKER")
    """Parse queued archives in this process."""

    import_poll_seconds: float = Field(2, gt=0, validation_alias="MEMORY_IMPORT_POLL_SECONDS")
    """The import worker's idle poll."""

    import_lease_seconds: float = Field(600, gt=0, validation_alias="MEMORY_IMPORT_LEASE_SECONDS")
    """How long a replica holds a batch before another may take it over."""

    usage_tracking: bool = Field(True, validation_alias="MEMORY_USAGE_TRACKING")
    """Note when recall and `BuildContext` used each memory (see **Usage** under the API
    rules)."""

    usage_flush_seconds: float = Field(2, gt=0, validation_alias="MEMORY_USAGE_FLUSH_SECONDS")
    """How often the usage notes are written (and once more on a graceful stop)."""

    task_history_days: float = Field(30, gt=0, validation_alias="MEMORY_TASK_HISTORY_DAYS")
    """How long an ended task and its checkpoints are kept (fractions allowed)."""

    task_purge_seconds: float = Field(600, gt=0, validation_alias="MEMORY_TASK_PURGE_SECONDS")
    """How often the purge of ended tasks runs."""

    check_tenant_scope: bool = Field(False, validation_alias="MEMORY_CHECK_TENANT_SCOPE")
    """Check every statement a unit of work sends against its tenant and fail the call on one
    that is not limited to it (`memory_service/kernel/storage/scoped.py`); on in the tests."""

    _retrieval_secret: str = PrivateAttr("")

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        scheme = value.split("://", 1)[0].split("+", 1)[0]
        if "://" not in value or scheme not in DATABASE_SCHEMES:
            raise ValueError("expected a sqlite:/// or postgresql+psycopg:// URL")
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        parsed: URL | None
        try:
            parsed = make_url(value)
        except (ArgumentError, ValueError):  # its message may quote a piece of the password
            parsed = None
        # A raw @ in a password: SQLAlchemy cuts the password at the first and takes the rest
        # for the host, which a connection error would then print. A raw `?` or `/` before it
        # does not stop that, so every @ of the URL counts: more than one is refused.
        if parsed is None or (scheme != "sqlite" and value.count("@") > 1):
            raise ValueError(
                "not a URL SQLAlchemy reads as meant: check the host and port, and "
                "percent-encode special characters in the user name, password and database "
                "name (@ is %40)"
            )
        _usable_driver(parsed)
        return value

    @field_validator("retrieval_address")
    @classmethod
    def _optional_address(cls, value: str) -> str:
        """An empty value, `none` or `off` turns search off: recall then answers degraded."""
        if value.strip().lower() in ("", "none", "off"):
            return ""
        return host_port(value)

    @property
    def retrieval_secret(self) -> str:
        """The shared secret `from_env` resolved ("" with search off or for one-shot commands)."""
        return self._retrieval_secret

    def secret_values(self) -> list[str]:
        """Every secret this process holds, for `crmmem_runtime.redaction.redact` to clean an
        error text of before it is printed."""
        return [
            *url_secrets(self.database_url),
            self.jwt_secret,
            self.retrieval_shared_secret,
            self._retrieval_secret,
        ]

    @property
    def recall_timeout_seconds(self) -> float:
        return self.recall_timeout_ms / 1000

    @property
    def recall_margin_seconds(self) -> float:
        return self.recall_margin_ms / 1000

    @classmethod
    def from_env(cls, serving: bool = True) -> Settings:
        """The settings with their secrets resolved (dev mode may create the key files).
        `serving=False` for one-shot commands (migrate, token) that never call the sidecar."""
        settings = load(cls)
        secret = settings.jwt_secret
        if not secret:
            if not settings.dev_mode:
                raise ConfigError(
                    "MEMORY_JWT_SECRET is not set. Set it (32+ random characters), or set "
                    "MEMORY_DEV_MODE=1 to use a generated development key."
                )
            secret = dev_secret(settings.data_dir)
        if len(secret) < MIN_JWT_SECRET:
            raise ConfigError(f"MEMORY_JWT_SECRET must be at least {MIN_JWT_SECRET} characters")
        if settings.recall_timeout_ms < 4 * settings.recall_margin_ms:
            # A caller without a deadline searches the timeout less the margin, and its miss
            # counts against the sidecar only when the search had at least half the timeout.
            raise ConfigError(
                f"MEMORY_RECALL_TIMEOUT_MS={settings.recall_timeout_ms:g} must be at least four "
                f"times MEMORY_RECALL_MARGIN_MS={settings.recall_margin_ms:g}"
            )
        retrieval_secret = ""
        if settings.retrieval_address and serving:
            retrieval_secret = settings.resolve_shared_secret(
                settings.dev_mode, settings.data_dir / "retrieval-secret"
            )
        resolved = settings.model_copy(update={"jwt_secret": secret})
        resolved._retrieval_secret = retrieval_secret
        return resolved


def _usable_driver(url: URL) -> None:
    """The URL's driver is installed and synchronous (`postgresql+psycopg2://` without psycopg2,
    or `+asyncpg`, would otherwise fail at start-up with a traceback)."""
    from sqlalchemy.exc import ArgumentError

    try:
        dialect = url.get_dialect()
    except ArgumentError:
        raise ValueError(f"unknown database driver {url.drivername!r}") from None
    if dialect.is_async:
        raise ValueError(
            f"{url.drivername} is an asyncio driver; the service needs postgresql+psycopg://"
        )
    try:
        dialect.import_dbapi()
    except ImportError:
        raise ValueError(
            f"the driver of {url.drivername} ({dialect.driver}) is not installed; use "
            "postgresql+psycopg:// or sqlite:///"
        ) from None


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
