"""The settings both processes read, as the base of each one's settings class."""

from __future__ import annotations

from pydantic import Field

from crmmem_runtime.shared_secret import SharedSecretSettings
from crmmem_runtime.telemetry import TelemetrySettings


class ProcessSettings(TelemetrySettings, SharedSecretSettings):
    """Logging, tracing and the shared secret, plus where to report the bound port."""

    port_file: str = Field("", validation_alias="PORT_FILE")
    """When set, the port actually bound is written to this file once the server listens (for
    tests and scripts that start it on port 0)."""
