"""Stubs for the compiled extension. Configurations cross as TOML text, results as JSON text.

The extension is called through ssdkit.api, which checks arguments first: a bad value raises
ConfigError naming it and a wrong kind TypeError (README "Errors"); called directly, a str that
is not valid UTF-8 raises UnicodeEncodeError."""

import os
from collections.abc import Callable
from typing import Any

__version__: str
BREAKDOWN_STEPS: list[str]

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
    on_progress: Callable[[float | None, int, int, float], object] | None = None,
    log_sink: Callable[[dict[str, bytearray]], object] | None = None,
) -> str:
    """Loads, validates and runs a configuration; returns the result document as JSON text,
    indented as `json.dumps(doc, indent=2)` writes it.

    Exactly one of `toml_text` and `preset` must be given. With `snapshot`, the device starts
    from that saved state instead of preconditioning. The GIL is released while the
    simulation runs; every 100 ms of wall time the run takes it to let Python handle signals
    (Ctrl-C raises KeyboardInterrupt) and calls `on_progress(fraction, requests, simulated_ns,
    elapsed_s)`. `log_sink` receives the request log in batches of at most 65,536 (the
    columns of `run_with_log`) as the run goes. An exception from either stops the run and
    propagates."""

def json_dumps_indent2(text: str) -> str:
    """`text` (JSON) written as `run` writes its documents: as `json.dumps(json.loads(text),
    indent=2)` would. Raises ValueError when `text` is not JSON."""

def precondition(
    output: str | os.PathLike[str],
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """Preconditions the configured device and saves it as a snapshot at `output`; returns
    the preconditioning record as JSON. Raises SsdkitIoError if the file cannot be written."""

def serve(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
    snapshot: str | os.PathLike[str] | None = None,
    socket: str | os.PathLike[str] | None = None,
    listen: str | None = None,
    allow_remote: bool = False,
    clock: str = "real",
    queues: int = 16,
    read_only: bool = False,
    backing: str | os.PathLike[str] | None = None,
    durable: bool = False,
    memory_limit: int = ...,
    export_name: str = "ssdkit",
    spin_us: int = 50,
    result_every: float | None = None,
    on_ready: Callable[[str, int, int], Any] | None = None,
    control: Callable[[], int] | None = None,
    on_result: Callable[[str], Any] | None = None,
    log_sink: Callable[[dict[str, bytearray]], Any] | None = None,
) -> str:
    """Serves the device as an NBD export until `control()` returns 2; `ssdkit.serve` wraps
    it. Returns the final result document as JSON text."""

def x25m_params(
    write: bool,
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> tuple[float, float, float, int, int]:
    """The X25-M latency model's parameters of a configuration: (ch_us, reg_us, cell_us, rho,
    page_bytes); `ssdkit.models.X25mParams.from_config` wraps it."""

def x25m_eval(
    ch_us: float, reg_us: float, cell_us: float, rho: int, page_bytes: int, n_pages: list[int]
) -> dict[str, Any]:
    """Eq. 1-7 of the X25-M latency model: `page_us`, `t_wait_us`, `t_cycle_us`, and per page
    count `cycles`, `record_us`, `iops`, `bytes_per_s`."""

def wa_steady_state(gc_policy: str, spare_factor: float, pages_per_block: int, d: int = 10) -> tuple[float, str]:
    """Steady-state write amplification under uniform random writes (mean-field or FIFO closed
    form), and the model's name."""

def wa_of_config(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> tuple[float, str, float, int]:
    """The configured device's steady-state write amplification: (wa, model name, spare
    factor, pages per block)."""

def nvme_eval(
    write: bool,
    request_bytes: list[int],
    queue_depth: int = 1,
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> list[dict[str, Any]]:
    """NVMeSim's Eq. 1-3 for a configuration, one dict per request size."""

def timer_floor(period_us: int, spin_us: int, seconds: float) -> list[int]:
    """How late this machine wakes a thread that waits for a deadline every `period_us` as
    `ssdkit serve --clock real` does (timer slack 1 ns, sleep, then spin the last `spin_us`),
    for `seconds`: the lateness of each deadline in nanoseconds."""

def resolve_config(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """The validated configuration with every default written out, as TOML."""

def trace_files(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> list[str]:
    """Each flow's trace file as the run opens it (relative paths resolved from the
    configuration file's folder), "" for a synthetic flow."""

def presets() -> list[tuple[str, str]]:
    """Built-in presets as (name, description) pairs."""

def preset_toml(name: str) -> str:
    """The TOML text of a built-in preset; raises PresetError for unknown names."""

def config_schema() -> str:
    """JSON Schema of the configuration."""

class TraceError(SsdkitError):
    """A trace file could not be read or has a bad line; the message names the file, line and text."""

class RequestError(SsdkitError):
    """A request a Device cannot take (time in the past, range outside the device, misaligned,
    unknown queue or op); the message names the problem. The device is unchanged."""

def run_with_log(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
    progress: bool = False,
    snapshot: str | os.PathLike[str] | None = None,
    on_progress: Callable[[float | None, int, int, float], object] | None = None,
) -> tuple[str, dict[str, bytearray]]:
    """Like `run`, keeping the request log: the result document as JSON and the completed
    requests, in completion order, as columns of native-endian buffers: `id`, `queue`,
    `offset_bytes`, `bytes`, `submit_ns`, `complete_ns`, `latency_ns` (int64), `submit_ps`,
    `complete_ps` (uint64), `op` (uint8 codes: 0 read, 1 write, 2 trim, 3 flush)."""

def run_alone(
    flows: list[int],
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
    snapshot: str | os.PathLike[str] | None = None,
) -> list[tuple[int, str, int, float]]:
    """The alone runs of a fairness measurement: for each index k of `flows`, a run with
    every other flow switched off, from `snapshot`. Returns `(k, name, count, mean_us)`:
    flow k's reads and writes completed and their mean latency in microseconds (equal to
    `flows[k].stats.all` of the run's result). The configuration is read once; no result
    document is built."""

def flows_enabled(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> list[bool]:
    """Whether each flow of the configuration is switched on (`enabled`), in order."""

def mqsim_random_state(seed: int) -> list[list[int]]:
    """The state (s1, s2) MQSim's `Utils::RandomGenerator(seed)` starts from, for a seed in
    0..2^32-1 (`ssdkit._mqsim_random`); OverflowError outside it."""

class Device:
    """The step-by-step device; `ssdkit.Device` wraps it. Times are integer nanoseconds
    (`t * 1000` ps exactly); completion times are picoseconds floored to nanoseconds.
    Integer arguments accept int or anything with `__index__` (not bool): a negative or
    too-large value raises RequestError, another kind TypeError. Every call releases the GIL
    and is serialised by a lock; a panic inside raises SimulationError and leaves the device
    unusable; after `close` calls raise SsdkitError."""

    def __init__(
        self,
        toml_text: str | None = None,
        origin: str = "<string>",
        preset: str | None = None,
        overrides: list[str] = ...,
        snapshot: str | os.PathLike[str] | None = None,
        queues: int | None = None,
    ) -> None: ...
    @property
    def capacity_bytes(self) -> int: ...
    @property
    def sector_bytes(self) -> int: ...
    @property
    def queues(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def submit(self, time_ns: int, op: str, offset_bytes: int, nbytes: int, queue: int | None = None) -> int:
        """Queues one request; returns its id. `op`: 'read', 'write', 'trim', 'flush'."""
    def submit_many(self, time_ns: bytes, ops: bytes, offset_bytes: bytes, nbytes: bytes, queues: bytes) -> int | None:
        """Submits equally long columns of native-endian int64 (op codes 0 read, 1 write, 2
        trim, 3 flush); returns the first id (consecutive ids), None for an empty batch. Every
        request is checked before any is submitted."""
    def run_until(self, time_ns: int) -> None: ...
    def run_to_idle(self) -> None:
        """Runs until no request is outstanding, then moves the clock up to a whole ns."""
    def now_ns(self) -> int: ...
    def now_ps(self) -> int: ...
    def next_event_ns(self) -> int | None:
        """The earliest pending event's time, rounded up to a whole ns; None when idle."""
    def next_event_ps(self) -> int | None: ...
    def outstanding(self) -> int: ...
    def drain(self) -> list[tuple[int, int, str, int, int, int, int, int]]:
        """`(id, queue, op, offset_bytes, bytes, submit_ns, complete_ns, latency_ns)` per
        completed request since the last drain, in completion order."""
    def drain_columns(self) -> dict[str, bytearray]:
        """Like `drain`, as the columns `run_with_log` returns."""
    def result_json(self) -> str: ...
    def close(self) -> None: ...

def precondition_key(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> str:
    """What the preconditioned state of the configured device depends on, as JSON."""

def device_info(
    toml_text: str | None = None,
    origin: str = "<string>",
    preset: str | None = None,
    overrides: list[str] = ...,
) -> dict[str, Any]:
    """Geometry and logical capacity of the configured device: capacity_bytes,
    logical_pages, page_size_bytes, channels, chips_per_channel, dies_per_chip, planes_per_die."""
