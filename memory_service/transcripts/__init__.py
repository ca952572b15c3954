"""The transcripts slice (README.md)."""
