"""What a background worker logs while the database is away: one line when it stops answering
and one when it answers again, instead of a traceback on every poll of the outage (health and
the RPCs already say UNAVAILABLE, so the traceback told an operator nothing new).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from memory_service.kernel.domain.errors import DatabaseUnavailable, OutcomeUnknown


def _chain(error: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = error
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


def database_unreachable(error: BaseException) -> bool:
    """The storage layer's verdict that the connection failed, not the statement. Only the
    error raised counts: a bug raised while handling an outage is still a bug."""
    return isinstance(error, DatabaseUnavailable | OutcomeUnknown)


class DatabaseOutage:
    """Tracks one worker's view of the database between its rounds."""

    def __init__(self, worker: str, log: logging.Logger) -> None:
        self._worker = worker
        self._log = log
        self.down = False

    def failed(self, error: BaseException) -> bool:
        """Notes a failed round. True when the database could not be reached: logged on the
        first such round only. False for any other failure, which the worker logs itself."""
        if not database_unreachable(error):
            return False
        if not self.down:
            self.down = True
            self._log.warning(
                "%s: the database cannot be reached; retrying quietly until it answers (%s)",
                self._worker,
                # types only: driver messages can quote statement values
                " <- ".join(type(e).__name__ for e in _chain(error)),
            )
        return True

    def answered(self) -> None:
        """Notes a round that reached the database: logs the recovery once after an outage."""
        if self.down:
            self.down = False
            self._log.warning("%s: the database answers again", self._worker)
