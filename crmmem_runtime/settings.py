"""Typed settings from the environment, and the one-line error a bad value becomes.

Every environment variable either process reads is a field of a settings class (its name is
the field's alias, its docstring the description in docs/settings.md); `load` turns a bad value
into a `ConfigError` naming the variable, which `python -m ...` prints on one line before exiting
2. The configuration table of docs/settings.md is generated from these classes
(`make settings-table`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from crmmem_runtime.redaction import shown_setting

TRUE_VALUES = ("1", "true", "yes", "on")
FALSE_VALUES = ("0", "false", "no", "off")


class ConfigError(Exception):
    """A setting is missing, malformed or out of range: the process must not start."""


class EnvSettings(BaseSettings):
    """Base of every settings class: exact variable names (the environment is case-sensitive),
    unknown variables ignored, no NaN or infinity, immutable once read."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="ignore",
        case_sensitive=True,
        use_attribute_docstrings=True,
        allow_inf_nan=False,
        validate_default=False,
        hide_input_in_errors=True,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _blank_flag_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        """An empty flag (`MEMORY_DEV_MODE=`) means its default, as an unset one does; other
        spellings than 1/0, true/false, yes/no, on/off are refused rather than read as off."""
        field = cls.model_fields[info.field_name or ""]
        if field.annotation is not bool or not isinstance(value, str):
            return value
        word = value.strip().lower()
        if word == "":
            return field.default
        if word in TRUE_VALUES:
            return True
        if word in FALSE_VALUES:
            return False
        raise ValueError(f"expected one of {', '.join(TRUE_VALUES + FALSE_VALUES)}")


S = TypeVar("S", bound=EnvSettings)


def load(cls: type[S]) -> S:
    """Reads `cls` from the environment; a bad value is a ConfigError naming each variable."""
    try:
        return cls()
    except ValidationError as error:
        raise ConfigError(describe(error)) from None


def describe(error: ValidationError) -> str:
    """`MEMORY_MAX_WORKERS='abc': input should be a valid integer` for each bad variable, on one
    line; a secret's value is left out, a URL's shown with its password hidden
    (`crmmem_runtime.redaction`)."""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        name = ".".join(str(part) for part in item["loc"]) or "settings"
        message = item["msg"].removeprefix("Value error, ")
        shown = _shown(name)
        if shown is not None:
            parts.append(f"{name}={shown!r}: {message[:1].lower()}{message[1:]}")
        else:
            parts.append(f"{name}: {message[:1].lower()}{message[1:]}")
    return "; ".join(parts)


def _shown(name: str) -> str | None:
    value = os.environ.get(name)
    shown = None if value is None else shown_setting(name, value)
    if shown is None:
        return None
    return shown if len(shown) <= 80 else shown[:77] + "..."


def host_port(value: str) -> str:
    """`host:port` with a port from 0 to 65535 (0: any free port, written to PORT_FILE)."""
    host, _, port = value.strip().rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("expected host:port, e.g. 127.0.0.1:50051")
    return value.strip()


HostPort = Annotated[str, AfterValidator(host_port)]
# A folder, made absolute once at start-up (the process may change directory later).
AbsolutePath = Annotated[Path, AfterValidator(Path.resolve)]
