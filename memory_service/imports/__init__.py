"""The imports slice (README.md)."""
