"""ssdkit: a discrete-event SSD simulator with a Rust core.

>>> import ssdkit
>>> r = ssdkit.run("mqsim-paper", flow__0__requests=2000)
>>> print(r.summary())
>>> p = ssdkit.precondition("mqsim-paper", "device.snap")   # build the device state once
>>> r = ssdkit.run("mqsim-paper", snapshot="device.snap")   # and start runs from it
>>> with ssdkit.Device("mqsim-paper") as dev:               # or drive it request by request
...     dev.submit(0, "read", 0, 4096)
...     dev.run_to_idle()
...     print(dev.drain())

Errors: a bad value (override, key, path) raises ConfigError naming it; an unknown preset
PresetError; an unreadable file SsdkitIoError; a bad trace line TraceError; all subclasses of
SsdkitError. A wrong kind of argument (overrides not a dict, config not a str or path) raises
TypeError. A request a Device cannot take raises RequestError. See the README's "Errors"
section.
"""

# The modules form a tree, bottom first: _native (the engine and the exceptions); outputs,
# _columns, _toml, _dotted, c; plot; result (the result model); fairness, latency_log; api
# (run, precondition); device, fio, sweep, bench, report; mqsim; cli; this file. A module
# imports only modules below it, never inside a function to dodge a circle
# (tests/python/test_import_graph.py holds the order and checks it).
from ._native import (
    ConfigError,
    PresetError,
    RequestError,
    SimulationError,
    SsdkitError,
    SsdkitIoError,
    TraceError,
    __version__,
)
from .api import (
    Progress,
    config_schema,
    device_info,
    precondition,
    precondition_key,
    preset_toml,
    presets,
    resolve_config,
    run,
)
from .device import Completion, Device
from .fio import FioError, fio_to_toml
from .mqsim import MqsimError, import_mqsim, mqsim_to_toml
from .result import (
    CacheCounts,
    CacheResult,
    CmtLookups,
    CmtResult,
    DeviceResult,
    EraseCounts,
    EraseHistogram,
    FlashStats,
    FlowResult,
    FtlStats,
    HostResult,
    LatencyHistogram,
    LatencyUs,
    MergeCounts,
    OpStats,
    Precondition,
    Result,
    RoundFlow,
    Stats,
    SteadyRound,
    SteadyState,
    SteadyVerdict,
    SuspensionResult,
    TimeSeries,
    WindowCheck,
    combine,
    load,
)
from .sweep import sweep

__all__ = [
    "CacheCounts",
    "CacheResult",
    "CmtLookups",
    "CmtResult",
    "Completion",
    "ConfigError",
    "Device",
    "DeviceResult",
    "EraseCounts",
    "EraseHistogram",
    "FioError",
    "FlashStats",
    "FlowResult",
    "FtlStats",
    "HostResult",
    "LatencyHistogram",
    "LatencyUs",
    "MergeCounts",
    "MqsimError",
    "OpStats",
    "Precondition",
    "PresetError",
    "Progress",
    "RequestError",
    "Result",
    "RoundFlow",
    "SimulationError",
    "SsdkitError",
    "SsdkitIoError",
    "Stats",
    "SteadyRound",
    "SteadyState",
    "SteadyVerdict",
    "SuspensionResult",
    "TimeSeries",
    "TraceError",
    "WindowCheck",
    "__version__",
    "combine",
    "config_schema",
    "device_info",
    "fio_to_toml",
    "import_mqsim",
    "load",
    "mqsim_to_toml",
    "precondition",
    "precondition_key",
    "preset_toml",
    "presets",
    "resolve_config",
    "run",
    "sweep",
]
