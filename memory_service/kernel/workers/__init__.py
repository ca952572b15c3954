"""Background work of the memory service."""
