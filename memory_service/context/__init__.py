"""The context slice (README.md)."""
