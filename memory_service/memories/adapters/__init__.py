"""Outbound ports that need a third-party library."""
