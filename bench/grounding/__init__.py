"""Labelled messages and extracted memories: does the value say what the message says (faithful) or not."""
