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
# (tests/python/test_import_graph.py holds the order and checks it, lazy imports included).
import importlib
import sys
import types

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

# The rest is imported on first use (PEP 562): `import ssdkit`, and every command of the CLI,
# pay only for the modules they use (`ssdkit --version` starts in tens of milliseconds).
_LAZY = {
    "CacheCounts": "result",
    "CacheResult": "result",
    "CmtLookups": "result",
    "CmtResult": "result",
    "Completion": "device",
    "Device": "device",
    "DeviceResult": "result",
    "EraseCounts": "result",
    "EraseHistogram": "result",
    "FioError": "fio",
    "FlashStats": "result",
    "FlowResult": "result",
    "FtlStats": "result",
    "HostResult": "result",
    "LatencyHistogram": "result",
    "LatencyUs": "result",
    "MergeCounts": "result",
    "MqsimError": "mqsim",
    "OpStats": "result",
    "Precondition": "result",
    "Progress": "api",
    "Result": "result",
    "RoundFlow": "result",
    "Stats": "result",
    "SteadyRound": "result",
    "SteadyState": "result",
    "SteadyVerdict": "result",
    "SuspensionResult": "result",
    "TimeSeries": "result",
    "WindowCheck": "result",
    "combine": "result",
    "config_schema": "api",
    "device_info": "api",
    "fio_to_toml": "fio",
    "import_mqsim": "mqsim",
    "load": "result",
    "mqsim_to_toml": "mqsim",
    "precondition": "api",
    "precondition_key": "api",
    "preset_toml": "api",
    "presets": "api",
    "resolve_config": "api",
    "run": "api",
    "sweep": "sweep",
}


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        # A submodule named as a name it exports (the module ssdkit.sweep, the function
        # ssdkit.sweep): the import system sets the module on first import; the name wins, as
        # when this file imported every module itself.
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ssdkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
