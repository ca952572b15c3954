"""The caller's gRPC deadline, as the application layer's recall takes it."""

from __future__ import annotations

import math
import time

import grpc

NO_DEADLINE_SECONDS = 24 * 3600  # longer than this is a caller that set no deadline


def caller_deadline(context: grpc.ServicerContext) -> float | None:
    """The caller's deadline as a `time.monotonic()` instant, taken when the call starts, so
    work done before recall (the context build, scope lookups) counts against it."""
    remaining = context.time_remaining()
    # gRPC reports a call without a deadline as an infinite (or absurdly long) time remaining.
    if remaining is None or not math.isfinite(remaining) or remaining > NO_DEADLINE_SECONDS:
        return None
    return time.monotonic() + remaining
