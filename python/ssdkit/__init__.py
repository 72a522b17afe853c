"""ssdkit: a discrete-event SSD simulator with a Rust core.

>>> import ssdkit
>>> r = ssdkit.run("mqsim-paper", flow__0__requests=2000)
>>> print(r.summary())
>>> p = ssdkit.precondition("mqsim-paper", "device.snap")   # build the device state once
>>> r = ssdkit.run("mqsim-paper", snapshot="device.snap")   # and start runs from it
"""

from ._native import (
    ConfigError,
    PresetError,
    SimulationError,
    SsdkitError,
    SsdkitIoError,
    __version__,
)
from .api import config_schema, precondition, preset_toml, presets, resolve_config, run
from .result import (
    Device,
    EraseCounts,
    EraseHistogram,
    FlashStats,
    FlowResult,
    FtlStats,
    LatencyUs,
    OpStats,
    Precondition,
    Result,
    Stats,
)

__all__ = [
    "ConfigError",
    "Device",
    "EraseCounts",
    "EraseHistogram",
    "FlashStats",
    "FlowResult",
    "FtlStats",
    "LatencyUs",
    "OpStats",
    "Precondition",
    "PresetError",
    "Result",
    "SimulationError",
    "SsdkitError",
    "SsdkitIoError",
    "Stats",
    "__version__",
    "config_schema",
    "precondition",
    "preset_toml",
    "presets",
    "resolve_config",
    "run",
]
