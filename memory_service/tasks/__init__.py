"""The tasks slice (README.md)."""
