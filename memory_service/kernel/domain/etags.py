"""Etags (AIP-154), formatted and read in this one place.

An etag is the memory's version (every write bumps it) as a quoted string: `"v3"`. Before etags
were quoted the service returned the bare form `v3`; that form is still accepted on input, so a
client holding an old etag keeps working, but it is never returned.
"""

from __future__ import annotations

import re

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Memory

# The quoted form, or the bare one clients may still hold; a version has at most 18 digits (int64).
ETAG = re.compile(r'"v([1-9][0-9]{0,17})"|v([1-9][0-9]{0,17})')


def etag_of(memory: Memory) -> str:
    return f'"v{memory.version}"'


def parse_etag(etag: str, field: str = "etag", *, required: bool) -> int | None:
    """The version an etag names; None when it is absent and may be."""
    if not etag:
        if required:
            raise InvalidArgument(field, "is required: read the memory and send its etag")
        return None
    match = ETAG.fullmatch(etag)
    if not match:
        raise InvalidArgument(field, "is not an etag this service issued")
    return int(match.group(1) or match.group(2))
