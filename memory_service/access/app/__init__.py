"""One entry per use case: the unit of work, the request id, commit, side effects."""
