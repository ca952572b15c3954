"""SQL storage: typed models, tenant-scoped repositories and the unit of work."""
