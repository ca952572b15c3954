"""The memory service: authoritative, tenant-scoped memory records for AI assistants."""
