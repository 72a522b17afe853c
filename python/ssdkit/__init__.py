"""ssdkit: a discrete-event SSD simulator with a Rust core.

>>> import ssdkit
>>> r = ssdkit.run("mqsim-paper", flow__0__requests=2000)
>>> print(r.summary())
"""

from ._native import (
    ConfigError,
    PresetError,
    SimulationError,
    SsdkitError,
    SsdkitIoError,
    __version__,
)
from .api import config_schema, preset_toml, presets, resolve_config, run
from .result import Device, FlowResult, LatencyUs, OpStats, Result, Stats

__all__ = [
    "ConfigError",
    "Device",
    "FlowResult",
    "LatencyUs",
    "OpStats",
    "PresetError",
    "Result",
    "SimulationError",
    "SsdkitError",
    "SsdkitIoError",
    "Stats",
    "__version__",
    "config_schema",
    "preset_toml",
    "presets",
    "resolve_config",
    "run",
]
