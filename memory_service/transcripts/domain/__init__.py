"""Rules and records, no I/O: the standard library and the kernel's domain only."""
