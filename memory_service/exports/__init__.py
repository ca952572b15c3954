"""The exports slice (README.md)."""
