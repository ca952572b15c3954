"""Background work beside the request path."""
