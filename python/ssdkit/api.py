"""The Python entry points: resolve where a configuration comes from, render overrides as
TOML literals, and hand strings to the Rust core."""

from __future__ import annotations

import collections
import os
import re
import sys
from collections.abc import Iterable, Mapping

# The C module that `signal` wraps: the same functions and numbers, without the enums the
# wrapper builds when imported (0.3 ms of every command's start).
try:
    import _signal as signal
except ImportError:  # pragma: no cover - CPython has it
    import signal

from . import _native, _record, outputs
from ._columns import NATIVE_COLUMNS, _arrays, _breakdown_ns
from ._lazy import _Lazy
from ._native import ConfigError, PresetError, SsdkitError, SsdkitIoError
from .result import Precondition, Result

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Union

    import pandas

    ConfigArg = Union[str, "os.PathLike[str]", None]
    PathArg = Union[str, "os.PathLike[str]"]
    Overrides = Union[Mapping, Iterable[str], None]

# Imported by the runs that use them: fairness needs concurrent.futures and tempfile, the
# latency log pyarrow; a plain run pays for neither.
fairness_mod = _Lazy("fairness")
latency_log_mod = _Lazy("latency_log")


def presets() -> list[tuple[str, str]]:
    """Built-in presets as ``(name, description)`` pairs."""
    return list(_native.presets())


def preset_toml(name: str) -> str:
    """The TOML text of a built-in preset, comments included (a starting point to copy)."""
    return _native.preset_toml(name)


def config_schema() -> str:
    """JSON Schema of the configuration, as JSON text."""
    return _native.config_schema()


def run(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    progress: bool | Callable[[Progress], Any] = False,
    snapshot: PathArg | None = None,
    request_log: bool = False,
    latency_log: PathArg | None = None,
    steady_state: bool | Mapping[str, Any] | None = None,
    fairness: bool = False,
    workers: int | None = None,
    **kw: Any,
) -> Result:
    """Runs one simulation and returns its :class:`Result`.

    ``config`` is a built-in preset name, a path to a TOML file, or TOML text (any string
    containing a newline); a name that is neither a preset nor a file raises
    :class:`PresetError` listing the presets. TOML that describes no device (``[[flow]]``
    tables alone, perhaps with ``[run]``, ``[steady_state]`` or ``[precondition]``) runs on the
    ``mqsim-paper`` preset; with ``preset`` too, a TOML file or text runs on that preset (its
    tables over the preset's, its flows instead of the preset's). ``overrides`` is a dict ``{"flash.channels": 4}`` or a list of
    ``"key=value"`` strings; keyword arguments are overrides with ``__`` for ``.``
    (``flash__channels=4``); ``seed`` sets ``run.seed``. Later overrides win: ``overrides``,
    then keywords, then ``seed``.

    ``snapshot`` is a file written by :func:`precondition`: the device starts from that saved
    state instead of being preconditioned (the ``[precondition]`` section is then unused). The
    configuration must describe the same device (geometry, spare factor); a snapshot of
    another device, or a corrupt or truncated file, raises :class:`SsdkitIoError`.

    ``request_log=True`` keeps every completed request: ``Result.request_log`` is then a
    pandas DataFrame, one row per request in completion order, indexed by the request id
    (``id``: submission order over the run), with columns ``flow``, ``op`` (``"read"``,
    ``"write"``, ``"trim"``), ``offset_bytes``, ``bytes``, ``submit_ns``, ``complete_ns`` and
    ``latency_ns`` (the exact picosecond times and latency floored to nanoseconds). It costs
    about 100 bytes per request. ``latency_log`` is a file path ending in ``.parquet``
    (or ``.pq``) or ``.csv``: the same columns (and ``id``) are written to it as the run
    goes, in batches, so memory stays bounded (pyarrow writes both formats). The file appears
    only if the run succeeds (a FIFO or character device is written in place, batch by batch);
    an unknown suffix (:class:`ConfigError`), or a path :mod:`ssdkit.outputs` refuses (an input
    of the run, a directory or socket, a missing or unwritable folder: :class:`SsdkitIoError`)
    is refused before the run.

    ``steady_state=True`` runs the workload in rounds and judges them by the steady-state
    criteria of the SNIA Solid State Storage Performance Test Specification
    (``Result.steady_state``; ``to_pandas(kind="rounds")``): shorthand for the override
    ``steady_state.enabled = true``. A dict sets keys of ``[steady_state]`` too, e.g.
    ``{"round_ms": 2000, "max_rounds": 60}`` (``enabled`` is true unless it says otherwise).
    It is applied after ``overrides`` and keywords.

    ``progress=True`` shows a progress bar: in a Jupyter notebook a ``tqdm.auto`` bar when
    tqdm is installed, otherwise the core's bar on stderr when it is a terminal (it appears
    after half a second, fits the terminal, and shows an ETA where the workload has a known
    end, a spinner where it has not). A callable is called every 100 ms of wall time with a
    :class:`Progress` (``fraction`` done or None, ``requests`` completed, ``simulated_ns``,
    ``elapsed_s``); an exception it raises stops the run and propagates.

    ``fairness=True`` measures how the flows slow each other down, as the MQSim paper (FAST'18,
    section 3.1) does: each flow runs alone on the same starting device (same snapshot and
    seed; the other flows are switched off with ``flow.N.enabled = false`` so the flow keeps
    its random streams), then all run together. The shared run's result comes back with
    ``Result.fairness``: per flow ``rt_alone_us``, ``rt_shared_us`` (mean response time of
    its reads and writes) and ``slowdown`` S = shared / alone, and for the run ``fairness``
    F = min S / max S and ``weighted_speedup`` WS = sum of 1 / S; also in the JSON under
    ``fairness``. Without ``snapshot``, the device is preconditioned once for the whole
    workload into a temporary snapshot that every run starts from. The n + 1 runs go on
    ``workers`` threads at once (default: the machine's cores). It needs at least two flows and
    takes no ``progress``, ``request_log`` or ``latency_log`` (a ConfigError names which).

    The GIL is released while the simulation runs, so threads can run several at once. Every
    100 ms the run lets Python handle signals: Ctrl-C stops it with KeyboardInterrupt (no
    latency log file is left behind).

    Errors (the same for every entry point): a bad value raises :class:`ConfigError` naming
    the key or argument (an override that is None, an arbitrary object or nested more than
    :data:`MAX_DEPTH` levels, a bad override key, a path with a NUL byte or not valid UTF-8,
    an unknown key, a value out of range); an unknown preset :class:`PresetError`; an
    unreadable file or a bad snapshot :class:`SsdkitIoError`; a bad trace line
    :class:`TraceError`, all subclasses of :class:`SsdkitError`. A wrong kind of argument
    (``overrides`` not a dict or list of strings, ``config`` not a str or ``os.PathLike``)
    raises TypeError.
    """
    src = _source(config, preset)
    snap = None if snapshot is None else _path(snapshot, "snapshot")
    ov = _override_list(overrides, kw, seed) + _steady_state_overrides(steady_state)
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ConfigError(f"argument `workers` = {workers!r} must be a positive integer (threads for fairness runs)")
    if fairness:
        for name, given in (("progress", progress), ("request_log", request_log), ("latency_log", latency_log)):
            if given:
                raise ConfigError(f"argument `{name}` does not go with fairness=True (n + 1 runs at once)")
        return fairness_mod.run_fairness(src, ov, snap, workers)
    if workers is not None:
        raise ConfigError("argument `workers` goes with fairness=True")
    bar, user_progress, done = _progress_hooks(progress)
    arm = _ArmInterrupts()

    def on_progress(*args: Any) -> None:
        arm()
        if user_progress is not None:
            user_progress(*args)

    try:
        if latency_log is not None:
            path = _path(latency_log, "latency_log")
            latency_log_mod.check_path(path, lambda: input_files(src, ov) + ([("snapshot", snap)] if snap else []))
            kept: list[dict[str, bytearray]] = []

            def sink(cols: dict[str, bytearray]) -> None:
                arm()  # before the file exists, so an interrupt can remove it
                writer.write(cols)
                if request_log:
                    kept.append(cols)

            with latency_log_mod.LatencyLogWriter(path) as writer:
                text, doc = _native.run(
                    overrides=ov,
                    progress=bar,
                    snapshot=snap,
                    on_progress=on_progress,
                    log_sink=sink,
                    parsed=True,
                    **src,
                )
            result = Result._from_core(text, doc)
            if request_log:
                result = _record.replace(result, request_log=_request_log(_concat_columns(kept)))
            return result
        if not request_log:
            return Result._from_core(
                *_native.run(overrides=ov, progress=bar, snapshot=snap, on_progress=on_progress, parsed=True, **src)
            )
        text, cols = _native.run_with_log(overrides=ov, progress=bar, snapshot=snap, on_progress=on_progress, **src)
        return _record.replace(Result.from_json(text), request_log=_request_log(cols))
    finally:
        arm.restore()
        done()


def _steady_state_overrides(steady_state: Any) -> list[str]:
    """``run(steady_state=...)`` as overrides of ``[steady_state]``."""
    if steady_state is None:
        return []
    if isinstance(steady_state, bool):
        return [f"steady_state.enabled={toml_literal(steady_state)}"]
    if not isinstance(steady_state, Mapping):
        raise TypeError(
            f"steady_state must be a bool or a dict of [steady_state] keys, not {type(steady_state).__name__}"
        )
    out = [] if "enabled" in steady_state else ["steady_state.enabled=true"]
    for k, v in steady_state.items():
        if not isinstance(k, str):
            raise ConfigError(f"steady_state: key {_short(k)} is not a str")
        key = f"steady_state.{k}"
        _check_key(key)
        out.append(f"{key}={toml_literal(v, key)}")
    return out


class _ArmInterrupts:
    """Ctrl-C must reach Python as KeyboardInterrupt while the core runs (it lets Python
    handle signals every 100 ms) once there is something to clean up, such as a latency log
    being written. A program that set SIGINT to its default action (the ssdkit CLI does, so
    that Ctrl-C while the device is built and preconditioned, which does not poll, stops at
    once) gets Python's handler from the first progress report or log batch on, and its own
    back when the run returns."""

    def __init__(self) -> None:
        self.saved: Any = None

    def __call__(self) -> None:
        if self.saved is not None or signal.getsignal(signal.SIGINT) != signal.SIG_DFL:
            return
        try:
            self.saved = signal.signal(signal.SIGINT, signal.default_int_handler)
        except ValueError:
            pass  # not the main thread, the only one that may set a handler

    def restore(self) -> None:
        if self.saved is not None:
            signal.signal(signal.SIGINT, self.saved)
            self.saved = None


class Progress(collections.namedtuple("Progress", ["fraction", "requests", "simulated_ns", "elapsed_s"])):
    """What a ``progress`` callable of :func:`run` receives every 100 ms of wall time.

    - ``fraction`` (float or None): fraction of the run done in [0, 1] where the workload has a
      known end (the least advanced flow by its requests, bytes, duration or trace bytes read,
      or the time cap); None otherwise.
    - ``requests`` (int): requests completed so far.
    - ``simulated_ns`` (int): simulated time now, in nanoseconds.
    - ``elapsed_s`` (float): wall time since the simulation loop started, in seconds.
    """

    # A namedtuple, not typing.NamedTuple: `typing` stays out of a command line run's imports.
    __slots__ = ()


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def _progress_hooks(progress: Any) -> tuple[bool, Callable[..., None] | None, Callable[[], None]]:
    """(core bar on, callback for the core, cleanup) for ``run(progress=...)``."""
    if callable(progress):

        def call(fraction, requests, simulated_ns, elapsed_s) -> None:
            progress(Progress(fraction, requests, simulated_ns, elapsed_s))

        return False, call, lambda: None
    if not isinstance(progress, (bool, int)):
        raise TypeError(f"progress must be a bool or a callable, not {type(progress).__name__}")
    if progress and _in_notebook():
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return True, None, lambda: None
        bar = tqdm(total=1.0, bar_format="{l_bar}{bar}| [{elapsed}<{remaining}{postfix}]", leave=False)

        def update(fraction, requests, simulated_ns, elapsed_s) -> None:
            if fraction is not None:
                bar.n = fraction
            bar.set_postfix_str(f"{requests} requests, {simulated_ns / 1e6:.1f} ms simulated", refresh=False)
            bar.refresh()

        return False, update, bar.close
    return bool(progress), None, lambda: None


def _concat_columns(parts: list[dict[str, bytearray]]) -> dict[str, bytearray]:
    """Batches of native log columns joined into one set."""
    names = list(parts[0]) if parts else list(NATIVE_COLUMNS)
    return {n: bytearray(b"".join(p[n] for p in parts)) for n in names}


def _request_log(cols: dict[str, bytearray]) -> pandas.DataFrame:
    import pandas as pd  # deferred: the CLI should not pay pandas' import time

    a = _arrays(cols)
    df = pd.DataFrame(
        {
            "flow": a["queue"],
            "op": a["op"],
            "offset_bytes": a["offset_bytes"],
            "bytes": a["bytes"],
            "submit_ns": a["submit_ns"],
            "complete_ns": a["complete_ns"],
            "latency_ns": a["latency_ns"],
            **_breakdown_ns(a),
        },
        index=pd.Index(a["id"], name="id"),
        copy=False,
    )
    return df


def precondition(
    config: ConfigArg = None,
    output: PathArg | None = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    **kw: Any,
) -> Precondition:
    """Preconditions the configured device as its ``[precondition]`` section says and saves it
    to the snapshot file ``output``; returns the :class:`Precondition` record.

    Takes the configuration like :func:`run` (preset name, TOML path or text, ``overrides``,
    ``__`` keyword overrides, ``seed``). Pass the file to ``run(..., snapshot=output)`` to
    start any number of runs of the same device from that state. The file is written
    atomically: on error no partial file is left at ``output``. An ``output`` that is the
    configuration file or a flow's trace, a directory, socket or block device, or in a missing
    or unwritable folder raises :class:`SsdkitIoError` before any work (:mod:`ssdkit.outputs`);
    a character device or pipe is written in place. Errors as for :func:`run`.
    """
    if output is None:
        raise TypeError("precondition() needs `output`, the path of the snapshot file to write")
    src = _source(config, preset)
    out = _path(output, "output")
    ov = _override_list(overrides, kw, seed)
    # The core writes the snapshot (beside a regular file, then renamed; in place into a pipe
    # or device); the path is checked here, before preconditioning.
    outputs.check([("snapshot", out)], lambda: input_files(src, ov))
    text = _native.precondition(out, overrides=ov, **src)
    return Precondition.from_json(text)


def resolve_config(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    **kw: Any,
) -> str:
    """The validated configuration, every default written out, as TOML. Takes the same
    arguments as :func:`run`."""
    src = _source(config, preset)
    return _native.resolve_config(overrides=_override_list(overrides, kw, seed), **src)


def device_info(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """Geometry and logical capacity of the configured device: ``capacity_bytes``,
    ``logical_pages``, ``page_size_bytes``, ``channels``, ``chips_per_channel``,
    ``dies_per_chip``, ``planes_per_die``. Takes the same arguments as :func:`run`."""
    src = _source(config, preset)
    return _native.device_info(overrides=_override_list(overrides, kw, seed), **src)


def precondition_key(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """What the preconditioned state of the configured device depends on, resolved: the
    device, the ``[ftl]`` and ``[precondition]`` sections, the seed (``precondition.seed``, else
    ``run.seed``; ``seed_from`` says which) and what the flows decide (``footprint``,
    ``free_pool``, ``pinned``, and with a mapping cache ``flow_ranges``). Two configurations with
    equal keys precondition to the same device, so one snapshot serves both: sweeps share
    snapshots this way. Takes the same arguments as :func:`run`."""
    import json  # here: a command line run parses no JSON text (1 ms of its start)

    src = _source(config, preset)
    return json.loads(_native.precondition_key(overrides=_override_list(overrides, kw, seed), **src))


def input_files(src: Mapping[str, str], overrides: list[str]) -> list[tuple[str, str]]:
    """``(what, path)`` of every file the configuration ``src`` (from :func:`_source`) reads:
    the configuration file itself and each flow's trace, resolved as the core resolves them."""
    found = []
    if src.get("origin", "<string>") != "<string>":
        found.append(("configuration file", src["origin"]))
    for i, trace in enumerate(_native.trace_files(overrides=list(overrides), **src)):
        if trace:
            found.append((f"trace file of flow {i}", trace))
    return found


def config_inputs(config: object, overrides: object = None) -> list[tuple[str, str]]:
    """The files the configuration ``config`` (preset name, TOML path or text, as
    :func:`ssdkit.run` takes it) reads: the file itself and its flows' traces. Best effort: a
    configuration that does not resolve gives just its file (its error comes when it runs)."""
    try:
        src = _source(config, None)  # type: ignore[arg-type]
    except (SsdkitError, TypeError):
        return []
    try:
        return input_files(src, _override_list(overrides, {}, None))  # type: ignore[arg-type]
    except (SsdkitError, TypeError):
        origin = src.get("origin", "<string>")
        return [] if origin == "<string>" else [("configuration file", origin)]


def _path(p: Any, what: str, error: type[ConfigError] = ConfigError) -> str:
    """A path argument as text. A wrong kind raises TypeError; a bad value (NUL byte, bytes or
    surrogates that are not UTF-8, empty) raises ``error`` (a :class:`ConfigError`) naming the
    argument."""
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or an os.PathLike, not {type(p).__name__}")
    path = os.fspath(p)  # TypeError if __fspath__ returns neither str nor bytes
    if isinstance(path, bytes):
        try:
            path = path.decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(
                f"`{what}`: path {path!r} is not valid UTF-8 (byte {e.start}); ssdkit takes text paths"
            ) from None
    if not path:
        raise error(f"`{what}`: empty path")
    if "\0" in path:
        raise error(f"`{what}`: path {_short(path)} contains a NUL byte")
    _check_utf8(path, f"`{what}`: path", error)
    return path


def _check_utf8(text: str, what: str, error: type[ConfigError] = ConfigError) -> None:
    # Lone surrogates (os.fsdecode of undecodable bytes) cannot cross to the core, which takes
    # UTF-8; refused here so the error names the argument instead of a UnicodeEncodeError.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise error(f"{what} {_short(text)} is not valid UTF-8 (character {e.start}: a lone surrogate)") from None


def _short(v: Any, limit: int = 60) -> str:
    try:
        r = repr(v)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        r = f"<{type(v).__name__} object>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _source(config: ConfigArg, preset: str | None) -> dict[str, str]:
    """Keyword arguments for the native functions naming exactly one configuration source."""
    if preset is not None and not isinstance(preset, str):
        raise TypeError(f"preset must be a str, not {type(preset).__name__}")
    if config is not None and preset is not None:
        # A TOML file or text runs on the preset: its tables over the preset's, its flows
        # instead of the preset's.
        src = _source(config, None)
        if "preset" in src:
            raise ConfigError(
                f"`config` names preset {src['preset']} and `preset` names {preset!r}: give one"
                " (a TOML file or text goes with `preset`: it runs on that preset's device)"
            )
        _check_utf8(preset, "`preset`:")
        return {**src, "preset": preset}
    if preset is not None:
        _check_utf8(preset, "`preset`:")
        return {"preset": preset}
    if config is None:
        raise ConfigError("no configuration given: pass a preset name, a TOML file path or TOML text")
    if isinstance(config, os.PathLike):
        return _read_file(_path(config, "config"))
    if not isinstance(config, str):
        raise TypeError(
            f"config must be a str (preset name, TOML path or text) or an os.PathLike, not {type(config).__name__}"
        )
    if "\n" in config:
        _check_utf8(config, "`config`: TOML text")
        return {"toml_text": config, "origin": "<string>"}
    if "\0" in config:
        raise ConfigError(f"`config`: {_short(config)} contains a NUL byte (neither a preset name nor a path has one)")
    _check_utf8(config, "`config`:")
    names = [n for n, _ in _native.presets()]
    if config in names:
        return {"preset": config}
    if os.path.exists(config) or config.endswith(".toml") or os.sep in config or "/" in config:
        return _read_file(config)
    raise PresetError(
        f"`{config}` is neither a built-in preset nor an existing file; available presets: {', '.join(names)}"
    )


def _read_file(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            return {"toml_text": f.read(), "origin": path}
    except FileNotFoundError:
        raise SsdkitIoError(f"cannot read configuration `{path}`: no such file") from None
    except UnicodeDecodeError as e:
        raise SsdkitIoError(f"cannot read configuration `{path}`: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise SsdkitIoError(f"cannot read configuration `{path}`: {e.strerror or e}") from None


def _override_list(overrides: Overrides, kw: Mapping, seed: int | None) -> list[str]:
    """The overrides as ``key=value`` strings for the core. A wrong kind of ``overrides``
    raises TypeError; a bad key or value raises :class:`ConfigError` naming the key."""
    out: list[str] = []
    if isinstance(overrides, Mapping):
        for k, v in overrides.items():
            _check_key(k)
            out.append(f"{k}={toml_literal(v, k)}")
    elif isinstance(overrides, (str, bytes)):
        # Iterating a string would pass it character by character; refuse it instead.
        raise TypeError('overrides must be a dict or a list of "key=value" strings, not a single string')
    elif overrides is not None:
        if not isinstance(overrides, Iterable):
            raise TypeError(
                f'overrides must be a dict or a list of "key=value" strings, not {type(overrides).__name__}'
            )
        for i, o in enumerate(overrides):
            if not isinstance(o, str):
                raise ConfigError(f'overrides[{i}]: {_short(o)} is not a "key=value" string')
            key = _short(o.split("=", 1)[0].strip())
            if "\0" in o:
                raise ConfigError(f"override {key}: contains a NUL byte")
            _check_utf8(o, f"override {key}:")
            out.append(o)
    for k, v in kw.items():
        key = k.replace("__", ".")
        _check_key(key)  # **{"a=b": 1} reaches here too
        out.append(f"{key}={toml_literal(v, key)}")
    if seed is not None:
        out.append(f"run.seed={toml_literal(seed, 'run.seed')}")
    return out


_BAD_KEY_CHARS = re.compile(r"[=\x00-\x1f\x7f]")


def _check_key(k: Any) -> None:
    if not isinstance(k, str):
        raise ConfigError(f"override key {_short(k)}: keys are dotted str paths such as 'flash.channels'")
    if not k.strip():
        raise ConfigError("override key '': keys are dotted str paths such as 'flash.channels'")
    if _BAD_KEY_CHARS.search(k):
        raise ConfigError(f"override key {_short(k)}: a key has no '=', NUL, newline or other control character")
    _check_utf8(k, "override key")


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
# Deeper than any configuration key nests (a flow's size_list is 2); also stops cycles.
MAX_DEPTH = 32
_FORMS = "a bool, int, float, str, list or dict of those"


def toml_literal(v: Any, key: str = "value", _depth: int = 0) -> str:
    """``v`` as a TOML value literal, so a Python value keeps its type through an override
    (the string ``"8"`` stays a string instead of becoming the integer 8). A value with no
    TOML form (None, an arbitrary object, nesting deeper than :data:`MAX_DEPTH`, a str that
    is not valid UTF-8) raises :class:`ConfigError` naming ``key``."""
    if _depth > MAX_DEPTH:
        raise ConfigError(f"override `{key}`: nested more than {MAX_DEPTH} levels deep (or a cycle); allowed: {_FORMS}")
    # bool before the numbers: bool is an int subclass, and numpy's bool_ is neither.
    if isinstance(v, bool) or getattr(getattr(v, "dtype", None), "kind", None) == "b":
        return "true" if v else "false"
    number = _number_kind(v)
    if number == "integral":
        return str(int(v))
    if number == "real":
        return repr(float(v))  # 'nan', 'inf', '-inf', '1e-05': all valid TOML floats
    if isinstance(v, str):
        _check_utf8(v, f"override `{key}`: string")
        return '"' + "".join(_escape(c) for c in v) + '"'
    if isinstance(v, Mapping):
        parts = []
        for k, x in v.items():
            if not isinstance(k, str):
                raise ConfigError(f"override `{key}`: table key {_short(k)} is not a str")
            parts.append(f"{_toml_key(k)} = {toml_literal(x, f'{key}.{k}', _depth + 1)}")
        items = ", ".join(parts)
        return "{ " + items + " }" if items else "{}"
    if isinstance(v, (list, tuple)) or getattr(v, "ndim", 0) >= 1:
        return "[" + ", ".join(toml_literal(x, key, _depth + 1) for x in v) + "]"
    what = "None" if v is None else f"{type(v).__name__} value {_short(v)}"
    raise ConfigError(f"override `{key}`: {what} has no TOML form; allowed: {_FORMS}")


def _number_kind(v: Any) -> str | None:
    """``"integral"``, ``"real"`` or None, by the ``numbers`` ABCs (numpy's scalars register
    there). That module is imported only for a value that is not a built-in int, float, str,
    dict, list or tuple: a command line run does not need it."""
    if isinstance(v, int):
        return "integral"
    if isinstance(v, float):
        return "real"
    if isinstance(v, (str, dict, list, tuple)):
        return None
    import numbers

    if isinstance(v, numbers.Integral):
        return "integral"
    return "real" if isinstance(v, numbers.Real) else None


def _escape(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    if ord(c) < 0x20 or ord(c) == 0x7F:
        return f"\\u{ord(c):04X}"
    return c


def _toml_key(k: Any) -> str:
    k = str(k)
    return k if _BARE_KEY.match(k) else toml_literal(k)
