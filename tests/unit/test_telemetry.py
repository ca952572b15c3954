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
