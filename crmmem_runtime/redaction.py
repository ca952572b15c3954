"""What either process may print about a secret: nothing. The one home of that rule.

A database or Qdrant URL is shown with its password (and any secret-named query parameter, such
as libpq's `?password=`) replaced by `***`; a setting whose name says it is a secret is never
shown; an error text from a driver is cleaned of every secret value the process holds before it
is printed, whatever the driver chose to quote. Start-up lines, configuration errors and the
one-line start-up failures all go through here, so a password in `MEMORY_DATABASE_URL` never
lands in a pod's or a Job's log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

HIDDEN = "***"
# Words that mark a setting or URL parameter as a secret: *_SECRET, *_API_KEY, *_TOKEN, PASSWORD,
# PASSWD, sslpassword...
_SECRET_WORDS = ("SECRET", "KEY", "TOKEN", "PASS")
_QUERY_VALUE = re.compile(r"(?P<name>[?&][^=&#]*)=(?P<value>[^&#]*)")


def secret_name(name: str) -> bool:
    """Whether a variable or parameter called `name` holds a secret, by its name alone."""
    upper = name.upper()
    return any(word in upper for word in _SECRET_WORDS)


def hide_password(url: str) -> str:
    """`url` fit to print: SQLAlchemy's rendering with the password hidden, and secret query
    parameters hidden too. A URL SQLAlchemy cannot parse, or one whose password holds a raw `@`
    (SQLAlchemy would cut the password there and show the rest as the host), keeps only its
    scheme and what follows its last `@`."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if url.count("@") > 1:
        return _cut(url)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return _cut(url)
    query = {name: HIDDEN if secret_name(name) else value for name, value in parsed.query.items()}
    rendered = parsed.set(query=query).render_as_string(hide_password=True)
    return rendered.replace(quote(HIDDEN, safe=""), HIDDEN)  # the query's, percent-encoded


def _cut(url: str) -> str:
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    _userinfo, at, after = rest.rpartition("@")
    shown = f"{HIDDEN}@{after}" if at else rest
    return f"{scheme}{separator}{_hide_query(shown)}"


def _hide_query(text: str) -> str:
    return _QUERY_VALUE.sub(
        lambda m: f"{m['name']}={HIDDEN}" if secret_name(m["name"]) else m[0], text
    )


def url_secrets(url: str) -> list[str]:
    """The secret values written in `url`: its password (up to the last `@`, so a raw `@` in it
    does not cut it short) and secret query parameters, each as written and decoded."""
    _scheme, separator, rest = url.partition("://")
    userinfo, at, after = (rest if separator else url).rpartition("@")
    written = []
    if at and ":" in userinfo:
        written.append(userinfo.split(":", 1)[1])
    written += [m["value"] for m in _QUERY_VALUE.finditer(after) if secret_name(m["name"])]
    return [value for raw in written for value in (raw, unquote(raw)) if value]


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value in it, as is or percent-encoded, replaced by `***`."""
    values = {v for secret in secrets if secret for v in (secret, quote(secret, safe=""))}
    for value in sorted(values, key=len, reverse=True):  # a longer one may contain a shorter
        text = text.replace(value, HIDDEN)
    return text


# `password=…` or `pwd=…` in a libpq key=value string (`host=db password=x`), a .NET connection
# string (`Server=db;Password=x;`) or a query: the value up to the next separator, or a quoted one.
_PASSWORD_PAIR = re.compile(
    r"(?P<name>\b(?:[\w-]*pass(?:word|wd)?|pwd))(?P<eq>\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s;&#]*)",
    re.IGNORECASE,
)


def hide_password_pairs(text: str) -> str:
    """`text` with the value of every `password=` / `pwd=` pair (any case, libpq's or .NET's
    spelling, quoted or not) replaced by `***`."""
    return _PASSWORD_PAIR.sub(lambda m: f"{m['name']}{m['eq']}{HIDDEN}", text)


def shown_setting(name: str, value: str) -> str | None:
    """How a configuration error may quote the value of variable `name`: not at all when the
    name says it is a secret; a URL setting (`*_URL`: a database's or Qdrant's) only when it is
    a URL (`scheme://…`), with its password hidden, never when it is something else (a libpq
    `host=… password=…` string, a .NET `Server=…;Password=…;` one); any other value with its
    password hidden when it may carry one (a URL, a `password=` or `pwd=` pair)."""
    if secret_name(name):
        return None
    url_like = re.match(r"^[A-Za-z][\w+.-]*://", value.strip()) is not None
    if name.upper().endswith("_URL") and not url_like:
        return None
    if url_like or "@" in value:
        value = hide_password(value)
    return hide_password_pairs(value)


# A value shorter than this is not looked for in log lines: hiding every `1` or `acme` a line
# holds would garble the logs and protect nothing worth the name.
MIN_LOGGED_SECRET = 4


def otel_secrets(headers: Iterable[str], endpoints: Iterable[str]) -> list[str]:
    """The credentials in the OpenTelemetry SDK's header and endpoint variables, which it quotes
    in its warnings ("Header format invalid! …", "exporting traces to user:password@host"):
    each header variable as written, each header (also one written `Name: value`, which the SDK
    refuses and quotes whole), its value as written and decoded and that value's longer words
    (the token after `Bearer`); the password and secret query parameters of each endpoint."""
    found: list[str] = []
    for raw in (value.strip() for value in headers):
        if not raw:
            continue
        found.append(raw)
        for part in raw.split(","):
            header = part.strip()
            separator = "=" if "=" in header else ":"
            value = header.partition(separator)[2].strip()
            found.append(header)
            for written in (value, unquote(value)):
                found.append(written)
                found += [word for word in written.split() if len(word) >= 8]
    for endpoint in endpoints:
        found += url_secrets(endpoint.strip())
    return [value for value in found if len(value) >= MIN_LOGGED_SECRET]


# user:password@host, with or without a scheme before it; or a scheme URL's userinfo without a
# password (a token: https://TOKEN@host).
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][\w+.-]*://)?"
    r"(?P<user>[^\s/@:'\"<>()\[\]]*)(?::(?P<password>[^\s/@'\"<>]+))?@(?=[\w\[])"
)


def hide_userinfo(text: str) -> str:
    """Every URL in `text` with its password (or a scheme URL's bare token) replaced by `***`,
    also where the scheme was dropped (`user:password@host:4317`, as the OTLP exporter shows its
    endpoint)."""

    def hidden(match: re.Match[str]) -> str:
        scheme, user, password = match["scheme"] or "", match["user"], match["password"]
        if password is not None and (scheme or user):
            return f"{scheme}{user}:{HIDDEN}@"
        if scheme and user:  # https://TOKEN@host
            return f"{scheme}{HIDDEN}@"
        return match[0]  # an address like mara@acme.example: no secret in it

    return _USERINFO.sub(hidden, text)
