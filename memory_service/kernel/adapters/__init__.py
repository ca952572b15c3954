"""Implementations of the domain's ports that need third-party libraries (storage has its own)."""
