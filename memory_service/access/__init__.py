"""The access slice (README.md)."""
