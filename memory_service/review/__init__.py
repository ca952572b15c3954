"""The review slice (README.md)."""
