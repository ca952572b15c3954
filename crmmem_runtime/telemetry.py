"""Logging and OpenTelemetry set-up for both processes, from LOG_FORMAT and the standard OTEL_*
variables (exporters, endpoint, service name)."""

from __future__ import annotations

import json
import logging
import threading
import time
import traceback
from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from pydantic import Field, field_validator

from crmmem_runtime.redaction import MIN_LOGGED_SECRET, hide_userinfo, otel_secrets, redact
from crmmem_runtime.settings import EnvSettings

EXPORTERS = ("otlp", "console", "none")


class TelemetrySettings(EnvSettings):
    """Read by both processes. The OpenTelemetry SDK reads the OTEL_* variables too (and others,
    such as OTEL_EXPORTER_OTLP_HEADERS or OTEL_RESOURCE_ATTRIBUTES, which pass straight to it)."""

    log_format: Literal["json", "text"] = Field("json", validation_alias="LOG_FORMAT")
    """`json`: one JSON object a line with trace and span ids; `text`: plain lines."""

    otel_traces_exporter: str = Field("", validation_alias="OTEL_TRACES_EXPORTER")
    """Comma-separated `otlp`, `console` or `none`; unset: `otlp` when an endpoint is set, else
    `none`. Traces propagate from the memory service into the sidecar."""

    otel_metrics_exporter: str = Field("", validation_alias="OTEL_METRICS_EXPORTER")
    """Comma-separated `otlp`, `console` or `none`; unset: `otlp` when an endpoint is set."""

    otel_exporter_otlp_endpoint: str = Field("", validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT")
    """The OTLP/gRPC collector for traces and metrics, e.g. `http://collector:4317`."""

    otel_exporter_otlp_traces_endpoint: str = Field(
        "", validation_alias="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    """A collector for traces only (counts as an endpoint for the exporter defaults)."""

    otel_exporter_otlp_metrics_endpoint: str = Field(
        "", validation_alias="OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    )
    """A collector for metrics only (read by the SDK)."""

    otel_exporter_otlp_headers: str = Field(
        "", validation_alias="OTEL_EXPORTER_OTLP_HEADERS", repr=False
    )
    """`name=value` pairs (comma-separated, values URL-encoded) sent with every export, e.g. a
    collector's `authorization`; read by the SDK, and here only to keep the values out of the
    logs."""

    otel_exporter_otlp_traces_headers: str = Field(
        "", validation_alias="OTEL_EXPORTER_OTLP_TRACES_HEADERS", repr=False
    )
    """Headers for trace exports only (as `OTEL_EXPORTER_OTLP_HEADERS`)."""

    otel_exporter_otlp_metrics_headers: str = Field(
        "", validation_alias="OTEL_EXPORTER_OTLP_METRICS_HEADERS", repr=False
    )
    """Headers for metric exports only (as `OTEL_EXPORTER_OTLP_HEADERS`)."""

    otel_service_name: str = Field("", validation_alias="OTEL_SERVICE_NAME")
    """The `service.name` on spans; unset: `memory-service` or `retrieval-service`."""

    @field_validator("otel_traces_exporter", "otel_metrics_exporter")
    @classmethod
    def _known_exporters(cls, value: str) -> str:
        unknown = [part for part in _parts(value) if part not in EXPORTERS]
        if unknown:
            raise ValueError(f"unknown exporter {unknown[0]!r}; expected {', '.join(EXPORTERS)}")
        return value

    def _has_endpoint(self) -> bool:
        return bool(self.otel_exporter_otlp_endpoint or self.otel_exporter_otlp_traces_endpoint)

    def secret_values(self) -> list[str]:
        """Every secret the process holds (each process's settings add theirs), for
        `crmmem_runtime.redaction.redact` to clean a text of before it is printed or logged."""
        return []

    def exporter_secrets(self) -> list[str]:
        """The credentials in the OTLP exporters' headers and endpoints, which the SDK quotes."""
        return otel_secrets(
            (
                self.otel_exporter_otlp_headers,
                self.otel_exporter_otlp_traces_headers,
                self.otel_exporter_otlp_metrics_headers,
            ),
            (
                self.otel_exporter_otlp_endpoint,
                self.otel_exporter_otlp_traces_endpoint,
                self.otel_exporter_otlp_metrics_endpoint,
            ),
        )

    def trace_exporters(self) -> list[str]:
        return _parts(self.otel_traces_exporter) or ["otlp" if self._has_endpoint() else "none"]

    def metric_exporters(self) -> list[str]:
        return _parts(self.otel_metrics_exporter) or ["otlp" if self._has_endpoint() else "none"]


def _parts(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class JsonFormatter(logging.Formatter):
    """One JSON object a line, with the current trace and span ids for jumping to the trace."""

    def format(self, record: logging.LogRecord) -> str:
        context = trace.get_current_span().get_span_context()
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if context.is_valid:
            entry["trace_id"] = format(context.trace_id, "032x")
            entry["span_id"] = format(context.span_id, "016x")
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:  # already formatted (and cleaned) by SecretRedaction
            entry["exception"] = record.exc_text
        return json.dumps(entry)


def configure_logging(settings: TelemetrySettings) -> None:
    """Structured JSON logs on stderr (set LOG_FORMAT=text for plain lines on a laptop)."""
    handler = logging.StreamHandler()
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
        handler.formatter.converter = time.gmtime  # type: ignore[union-attr]
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    # Every line, whichever library logged it, is cleaned of the process's secrets first.
    handler.addFilter(SecretRedaction([*settings.secret_values(), *settings.exporter_secrets()]))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    grpc_common = logging.getLogger("grpc._common")
    if not any(isinstance(f, UndecodableRequests) for f in grpc_common.filters):
        grpc_common.addFilter(UndecodableRequests())


class SecretRedaction(logging.Filter):
    """On the handler every log line goes through: the message, a traceback and a stack cleaned
    of `secrets` (as written or percent-encoded) and of every URL's password. Libraries quote
    what they were given: the OpenTelemetry SDK logs a malformed OTEL_EXPORTER_OTLP_HEADERS whole
    ("Header format invalid! …") and its endpoint, password included, in every export warning."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self._secrets = [secret for secret in secrets if len(secret) >= MIN_LOGGED_SECRET]

    def clean(self, text: str) -> str:
        return hide_userinfo(redact(text, self._secrets))

    def filter(self, record: logging.LogRecord) -> bool:
        broken = False
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: shown as they came, cleaned
            message, broken = f"{record.msg} {record.args}", True
        cleaned = self.clean(message)
        if broken or cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info:
            record.exc_text = self.clean(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.clean(record.exc_text)
        if record.stack_info:
            record.stack_info = self.clean(record.stack_info)
        return True


class UndecodableRequests(logging.Filter):
    """gRPC logs a full traceback for every request body it cannot decode, before any
    authentication: anyone could fill the logs. The memory service's lenient handlers
    (`kernel/transport/edge.py`) keep unary requests from getting there; for what still does
    (streaming requests, such as server reflection), this turns the tracebacks into one short line
    per interval with a count."""

    MESSAGE = "Exception deserializing message!"

    def __init__(self, interval_seconds: float = 60.0) -> None:
        super().__init__()
        self._interval = interval_seconds
        self._lock = threading.Lock()
        self._count = 0
        self._next_report = 0.0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self.MESSAGE:
            return True
        error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else "error"
        with self._lock:
            self._count += 1
            now = time.monotonic()
            if now < self._next_report:
                return False
            count, self._count, self._next_report = self._count, 0, now + self._interval
        record.msg = "rejected %d undecodable request bodies (%s); at most one such line per %d s"
        record.args = (count, error, int(self._interval))
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def exporting_traces(settings: TelemetrySettings) -> bool:
    return any(name != "none" for name in settings.trace_exporters())


def configure_tracing(settings: TelemetrySettings, default_service_name: str) -> TracerProvider:
    """`OTEL_TRACES_EXPORTER` = otlp | console | none (default: otlp when an endpoint is set)."""
    attributes = {} if settings.otel_service_name else {"service.name": default_service_name}
    provider = TracerProvider(resource=Resource.create(attributes))
    for name in settings.trace_exporters():
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
    _configure_metrics(settings)
    return provider


def _configure_metrics(settings: TelemetrySettings) -> None:
    """`OTEL_METRICS_EXPORTER` = otlp | console | none (default: otlp when an endpoint is set)."""
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricReader,
        PeriodicExportingMetricReader,
    )

    readers: list[MetricReader] = []
    for name in settings.metric_exporters():
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
    if readers:
        metrics.set_meter_provider(MeterProvider(metric_readers=readers))


def failure_summary(error: BaseException) -> str:
    """Where an unexpected failure happened, for the log: exception types and code locations
    only. Messages are left out because they can quote request values (memory text)."""
    parts: list[str] = []
    current: BaseException | None = error
    while current is not None and len(parts) < 5:
        frames = traceback.extract_tb(current.__traceback__)
        where = " <- ".join(f"{f.name} ({f.filename}:{f.lineno})" for f in reversed(frames))
        parts.append(f"{type(current).__name__} at {where or 'unknown'}")
        current = current.__cause__ or current.__context__
    return "; caused by ".join(parts)
