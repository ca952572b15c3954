"""What both processes share when they start: typed settings and the one-line configuration
error, logging and tracing, binding a port, and the shared secret between the memory service
and its retrieval sidecar. It imports neither process package, so the sidecar never loads the
memory service and the memory service never loads the sidecar's model stack."""
