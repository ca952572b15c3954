"""The retrieval sidecar: embeds text and proposes candidate ids from a vector index."""
