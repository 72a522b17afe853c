"""Stubs for the compiled extension. Configurations cross as TOML text, results as JSON text.

The extension is called through ssdkit.api, which checks arguments first: a bad value raises
ConfigError naming it and a wrong kind TypeError (README "Errors"); called directly, a str that
is not valid UTF-8 raises UnicodeEncodeError."""

import os

__version__: str

class SsdkitError(Exception):
    """Base class of every ssdkit error."""

class ConfigError(SsdkitError):
    """A bad value: configuration key, override, path argument; the message names it."""

class PresetError(SsdkitError):
    """Unknown preset name; the message lists the available presets."""

class SimulationError(SsdkitError):
    """The simulation could not finish (a model bug reported instead of a hang or crash)."""

class SsdkitIoError(SsdkitError):
    """A file could not be read or written (also: a bad snapshot, an output that is an input)."""

def run(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
    progress: bool = False,
    snapshot: str | os.PathLike[str] | None = None,
) -> str:
    """Loads, validates and runs a configuration; returns the result document as JSON.

    Exactly one of `toml_text` and `preset` must be given. With `snapshot`, the device starts
    from that saved state instead of preconditioning. The GIL is released while the
    simulation runs."""

def precondition(
    output: str | os.PathLike[str],
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """Preconditions the configured device and saves it as a snapshot at `output`; returns
    the preconditioning record as JSON. Raises SsdkitIoError if the file cannot be written."""

def resolve_config(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """The validated configuration with every default written out, as TOML."""

def presets() -> list[tuple[str, str]]:
    """Built-in presets as (name, description) pairs."""

def preset_toml(name: str) -> str:
    """The TOML text of a built-in preset; raises PresetError for unknown names."""

def config_schema() -> str:
    """JSON Schema of the configuration."""

class TraceError(SsdkitError): ...

def device_info(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """Geometry and logical capacity of the configured device as JSON: capacity_bytes,
    logical_pages, page_size_bytes, channels, chips_per_channel, dies_per_chip, planes_per_die."""
