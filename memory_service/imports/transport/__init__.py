"""Inbound gRPC: parse the request once, call one app entry, present the answer."""
