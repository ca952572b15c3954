"""The documents slice (README.md)."""
