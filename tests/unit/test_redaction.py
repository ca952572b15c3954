"""The one rule for what may be printed about a secret (`crmmem_runtime.redaction`): URLs lose
their password, secret settings are never quoted, error texts are cleaned of secret values, and
neither process's settings show a secret in their repr."""

from __future__ import annotations

from pathlib import Path

import pytest

from crmmem_runtime.redaction import hide_password, redact, shown_setting, url_secrets
from crmmem_runtime.settings import ConfigError
from memory_service.config import Settings
from retrieval_service.config import RetrievalSettings
from scripts.settings_table import variables

PLANTED = "Zq81xPLANTED"

HIDDEN_URLS = [
    (
        f"postgresql+psycopg://crm:{PLANTED}@db.internal:5432/crm",
        "postgresql+psycopg://crm:***@db.internal:5432/crm",
    ),
    # Percent-encoded characters in the password: hidden whole.
    (
        f"postgresql+psycopg://crm:{PLANTED}%40x%2Fy@db:5432/crm",
        "postgresql+psycopg://crm:***@db:5432/crm",
    ),
    # libpq also takes the password as a query parameter.
    (
        f"postgresql+psycopg://crm@db/crm?sslmode=require&password={PLANTED}",
        "postgresql+psycopg://crm@db/crm?password=***&sslmode=require",
    ),
    (f"http://reader:{PLANTED}@qdrant:6334", "http://reader:***@qdrant:6334"),
    # A raw @ in the password: SQLAlchemy would show what follows it as the host.
    (f"postgresql://crm:{PLANTED}@more@db/crm", "postgresql://***@db/crm"),
    # Unparseable (a port that is not a number): scheme and what follows the last @ only.
    (f"postgresql+psycopg://crm:{PLANTED}@db:port/crm", "postgresql+psycopg://***@db:port/crm"),
]

UNCHANGED = [
    "sqlite:////var/lib/crmmem/memory.db",
    "postgresql+psycopg://crm@db:5432/crm",
    "http://qdrant:6334",
]


@pytest.mark.parametrize(("url", "shown"), HIDDEN_URLS)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert hide_password(url) == shown
    assert PLANTED not in hide_password(url)


@pytest.mark.parametrize("url", UNCHANGED)
def test_a_url_without_a_secret_is_shown_as_it_is(url: str) -> None:
    assert hide_password(url) == url


def test_the_secrets_of_a_url_are_found_as_written_and_decoded() -> None:
    assert url_secrets(f"postgresql://crm:{PLANTED}%40x@db/crm") == [
        f"{PLANTED}%40x",
        f"{PLANTED}@x",
    ]
    assert url_secrets(f"postgresql://crm:{PLANTED}@more@db/crm") == [f"{PLANTED}@more"] * 2
    assert url_secrets(f"postgresql://crm@db/crm?password={PLANTED}") == [PLANTED, PLANTED]
    assert url_secrets("postgresql://crm@db/crm") == []


def test_an_error_text_is_cleaned_of_every_secret_value_as_is_or_percent_encoded() -> None:
    text = f"failed for 'crm:{PLANTED}@x' (sent crm%3A{PLANTED}%40x); token tok-{PLANTED}"
    cleaned = redact(text, [f"{PLANTED}@x", f"tok-{PLANTED}", ""])
    assert PLANTED not in cleaned
    assert cleaned == "failed for 'crm:***' (sent crm%3A***); token ***"


def test_a_configuration_error_quotes_no_secret_and_no_password() -> None:
    assert shown_setting("MEMORY_JWT_SECRET", PLANTED) is None
    assert shown_setting("QDRANT_API_KEY", PLANTED) is None
    assert shown_setting("MEMORY_MAX_WORKERS", "abc") == "abc"
    assert shown_setting("QDRANT_URL", f"http://u:{PLANTED}@q:1") == "http://u:***@q:1"


@pytest.mark.parametrize(
    "value",
    [
        f"host=db user=app password={PLANTED} dbname=crm",  # libpq's key=value
        f"host=db user=app password='{PLANTED} x' dbname=crm",
        f"Server=db;Database=crm;User Id=app;Password={PLANTED};",  # .NET's
        f"Server=db;Pwd={PLANTED}",
        "db:5432/crm",
    ],
)
def test_a_url_setting_that_is_not_a_url_is_not_quoted(value: str) -> None:
    for name in ("MEMORY_DATABASE_URL", "QDRANT_URL"):
        assert shown_setting(name, value) is None


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (f"host=db password={PLANTED} dbname=crm", "host=db password=*** dbname=crm"),
        (f"host=db PASSWORD = '{PLANTED} x' dbname=crm", "host=db PASSWORD = *** dbname=crm"),
        (f"Server=db;Password={PLANTED};User=app", "Server=db;Password=***;User=app"),
        (f"Server=db;pwd={PLANTED}", "Server=db;pwd=***"),
        (
            f"postgresql://crm@db/crm?sslpassword={PLANTED}",
            "postgresql://crm@db/crm?sslpassword=***",
        ),
    ],
)
def test_any_other_setting_is_quoted_without_a_password_pair(value: str, shown: str) -> None:
    assert shown_setting("SOME_SETTING", value) == shown


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in [*variables(Settings), *variables(RetrievalSettings)]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_a_bad_database_url_is_named_with_its_password_hidden(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("MEMORY_JWT_SECRET", f"jwt-{PLANTED}-" + "j" * 32)
    for url in (
        f"postgresql+psycopg://crm:{PLANTED}@db:port/crm",
        f"postgresql://crm:{PLANTED}@x@db/crm",
        f"postgresql+psycopg://app:{PLANTED}?x@9{PLANTED}@127.0.0.1:55432/crm",
        f"postgresql+psycopg://app:{PLANTED}/x@9{PLANTED}@127.0.0.1:55432/crm",
    ):
        clean_env.setenv("MEMORY_DATABASE_URL", url)
        with pytest.raises(ConfigError) as refused:
            Settings.from_env()
        assert "MEMORY_DATABASE_URL" in str(refused.value)
        assert "percent-encode" in str(refused.value)
        assert PLANTED not in str(refused.value)


def test_neither_settings_object_shows_a_secret(clean_env: pytest.MonkeyPatch) -> None:
    """A settings object in a log line or a traceback's locals shows none of them."""
    clean_env.setenv("MEMORY_DATABASE_URL", f"postgresql+psycopg://crm:{PLANTED}@db/crm")
    clean_env.setenv("MEMORY_JWT_SECRET", f"jwt-{PLANTED}-" + "j" * 32)
    clean_env.setenv("RETRIEVAL_SHARED_SECRET", f"shared-{PLANTED}-" + "s" * 32)
    clean_env.setenv("QDRANT_URL", f"http://reader:{PLANTED}@qdrant:6334")
    clean_env.setenv("QDRANT_API_KEY", f"key-{PLANTED}")
    memory, sidecar = Settings.from_env(), RetrievalSettings.from_env()
    assert memory.retrieval_secret.startswith("shared-")  # resolved, and held
    for settings in (memory, sidecar):
        assert PLANTED not in repr(settings)
        assert PLANTED not in str(settings)
        assert all(PLANTED in value for value in settings.secret_values() if value)


def test_the_opentelemetry_variables_credentials_are_found() -> None:
    from crmmem_runtime.redaction import otel_secrets

    found = otel_secrets(
        [f"Authorization: Bearer {PLANTED}", f"api-key={PLANTED}%2Fk,x-scope=1", ""],
        ["", "http://collector:4317", f"http://user:{PLANTED}-pw@collector:4317"],
    )
    assert f"Authorization: Bearer {PLANTED}" in found  # what the SDK quotes
    assert {PLANTED, f"{PLANTED}/k", f"{PLANTED}-pw"} <= set(found)
    assert not {"1", "collector", "http://collector:4317"} & set(found)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "exporting to user:pw-Z@127.0.0.1:1, retrying",
            "exporting to user:***@127.0.0.1:1, retrying",
        ),
        ("http://reader:pw@qdrant:6334/x", "http://reader:***@qdrant:6334/x"),
        ("https://TOKEN123@github.com/a", "https://***@github.com/a"),
        ("mail mara@acme.example at 12:30", "mail mara@acme.example at 12:30"),
        ("listening on [::1]:50051", "listening on [::1]:50051"),
    ],
)
def test_url_userinfo_is_hidden_with_or_without_a_scheme(text: str, shown: str) -> None:
    from crmmem_runtime.redaction import hide_userinfo

    assert hide_userinfo(text) == shown
