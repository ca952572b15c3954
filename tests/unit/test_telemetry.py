"""Undecodable requests cost one counted log line per interval, not a traceback each."""

from __future__ import annotations

import logging
import sys

from crmmem_runtime.telemetry import UndecodableRequests


def _record(message: str) -> logging.LogRecord:
    try:
        raise ValueError("wire format was corrupt")
    except ValueError:
        exc_info = sys.exc_info()
    return logging.LogRecord("grpc._common", logging.ERROR, "x", 1, message, None, exc_info)


def test_undecodable_request_tracebacks_become_one_counted_line_per_interval() -> None:
    quiet = UndecodableRequests(interval_seconds=3600)
    records = [_record(UndecodableRequests.MESSAGE) for _ in range(50)]
    shown = [r for r in records if quiet.filter(r)]
    assert len(shown) == 1
    assert shown[0].exc_info is None
    assert shown[0].levelno == logging.WARNING
    assert "rejected 1 undecodable" in shown[0].getMessage()
    other = _record("Exception calling application")
    assert quiet.filter(other)
    assert other.exc_info is not None


def test_every_log_line_is_cleaned_of_secrets_and_url_passwords() -> None:
    """The message, its arguments and a traceback, in both formats."""
    from crmmem_runtime.telemetry import JsonFormatter, SecretRedaction

    secret = "Zq81xPLANTED-token"
    redaction = SecretRedaction([secret, "ab"])  # too short to look for: left alone
    try:
        raise RuntimeError(f"cannot reach http://u:{secret}x@collector:4317 with {secret}")
    except RuntimeError:
        exc_info = sys.exc_info()
    record = logging.LogRecord(
        "opentelemetry",
        logging.WARNING,
        "x",
        1,
        "to %s (%s) ab",
        ("u:pw1234@host:1", secret),
        exc_info,
    )
    assert redaction.filter(record)
    for formatter in (JsonFormatter(), logging.Formatter("%(message)s")):
        shown = formatter.format(record)
        assert "PLANTED" not in shown
        assert "pw1234" not in shown
        assert "u:***@host:1 (***) ab" in shown
        assert "RuntimeError: cannot reach http://u:***@collector:4317 with ***" in shown
