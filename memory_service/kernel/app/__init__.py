"""Use cases as the transport calls them: each opens a unit of work, handles the request id,
commits, then runs its side effects through ports (see docs/architecture.md)."""
