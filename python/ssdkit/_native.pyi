"""Stubs for the compiled extension. Configurations cross as TOML text, results as JSON text."""

__version__: str

class SsdkitError(Exception): ...
class ConfigError(SsdkitError): ...
class PresetError(SsdkitError): ...
class SimulationError(SsdkitError): ...
class SsdkitIoError(SsdkitError): ...

def run(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
    progress: bool = False,
) -> str:
    """Loads, validates and runs a configuration; returns the result document as JSON.

    Exactly one of `toml_text` and `preset` must be given. The GIL is released while the
    simulation runs."""

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
