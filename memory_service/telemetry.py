"""OpenTelemetry set-up from the standard OTEL_* variables (exporters, endpoint, service name)."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)


def configure_tracing(default_service_name: str) -> TracerProvider:
    """`OTEL_TRACES_EXPORTER` = otlp | console | none (default: otlp when an endpoint is set)."""
    attributes = (
        {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": default_service_name}
    )
    provider = TracerProvider(resource=Resource.create(attributes))
    has_endpoint = bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    exporters = os.environ.get("OTEL_TRACES_EXPORTER", "otlp" if has_endpoint else "none")
    for name in (part.strip() for part in exporters.split(",")):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider
