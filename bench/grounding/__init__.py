"""Labelled messages and the memories an extractor wrote from them: faithful or not."""
