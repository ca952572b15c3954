"""gRPC transport: servicers, proto/domain conversion, authentication and error mapping."""
