"""The memories slice (README.md)."""
