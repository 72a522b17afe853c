"""The Python entry points: resolve where a configuration comes from, render overrides as
TOML literals, and hand strings to the Rust core."""

from __future__ import annotations

import json
import numbers
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Union

from . import _native
from ._native import ConfigError, PresetError, SsdkitIoError
from .result import Precondition, Result

ConfigArg = Union[str, "os.PathLike[str]", None]
PathArg = Union[str, "os.PathLike[str]"]
Overrides = Union[Mapping, Iterable[str], None]


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
    progress: bool = False,
    snapshot: PathArg | None = None,
    **kw: Any,
) -> Result:
    """Runs one simulation and returns its :class:`Result`.

    ``config`` is a built-in preset name, a path to a TOML file, or TOML text (any string
    containing a newline); a name that is neither a preset nor a file raises
    :class:`PresetError` listing the presets. ``overrides`` is a dict ``{"flash.channels": 4}`` or a list of
    ``"key=value"`` strings; keyword arguments are overrides with ``__`` for ``.``
    (``flash__channels=4``); ``seed`` sets ``run.seed``. Later overrides win: ``overrides``,
    then keywords, then ``seed``.

    ``snapshot`` is a file written by :func:`precondition`: the device starts from that saved
    state instead of being preconditioned (the ``[precondition]`` section is then unused). The
    configuration must describe the same device (geometry, spare factor); a snapshot of
    another device, or a corrupt or truncated file, raises :class:`SsdkitIoError`.

    The GIL is released while the simulation runs, so threads can run several at once. The
    core has no cancellation point: Ctrl-C takes effect only when the run returns.
    """
    src = _source(config, preset)
    snap = None if snapshot is None else _path(snapshot, "snapshot")
    text = _native.run(overrides=_override_list(overrides, kw, seed), progress=progress, snapshot=snap, **src)
    return Result.from_json(text)


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
    atomically: on error no partial file is left at ``output``.
    """
    if output is None:
        raise TypeError("precondition() needs `output`, the path of the snapshot file to write")
    src = _source(config, preset)
    out = _path(output, "output")
    if os.path.isdir(out):
        # Checked here: the core would write its temporary file beside the directory first.
        raise SsdkitIoError(f"{out}: cannot write snapshot: it is a directory")
    ov = _override_list(overrides, kw, seed)
    if os.path.exists(out):
        refuse_overwriting_inputs([out], input_files(src, ov))
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
    return json.loads(_native.device_info(overrides=_override_list(overrides, kw, seed), **src))


def input_files(src: Mapping[str, str], overrides: list[str]) -> list[tuple[str, str]]:
    """``(what, path)`` of every file the configuration ``src`` (from :func:`_source`) reads:
    the configuration file itself and each flow's trace, resolved as the core resolves them."""
    from .fio import toml_loads  # fio imports this module

    found = []
    if src.get("origin", "<string>") != "<string>":
        found.append(("configuration file", src["origin"]))
    doc = toml_loads(_native.resolve_config(overrides=list(overrides), **src), "resolved configuration")
    for i, f in enumerate(doc.get("flow", [])):
        if f.get("trace"):
            found.append((f"trace file of flow {i}", f["trace"]))
    return found


def refuse_overwriting_inputs(outputs: Iterable[str], inputs: Iterable[tuple[str, str]]) -> None:
    """Raises :class:`SsdkitIoError` if an output path is the same file as one of ``inputs``
    (``(what, path)`` pairs): replacing it would destroy an input of the run, e.g. ``-o`` naming
    the configuration or a trace. Same file means the same inode (links, ``..``, symlinks)."""
    inputs = list(inputs)
    for out in outputs:
        if not os.path.exists(out):
            continue  # a new file cannot be one of the existing inputs
        for what, inp in inputs:
            try:
                same = os.path.samefile(out, inp)
            except (OSError, ValueError):
                same = False  # a missing or unreadable input is reported by whoever reads it
            if same:
                raise SsdkitIoError(
                    f"refusing to write `{out}`: it is the same file as the {what} `{inp}`; choose another output path"
                )


def _path(p: Any, what: str) -> str:
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or a path, not {type(p).__name__}")
    path = os.fspath(p)
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a text path, not {type(path).__name__}")
    return path


def _source(config: ConfigArg, preset: str | None) -> dict[str, str]:
    """Keyword arguments for the native functions naming exactly one configuration source."""
    if config is not None and preset is not None:
        raise ConfigError("give either a configuration or a preset, not both")
    if preset is not None:
        return {"preset": preset}
    if config is None:
        raise ConfigError("no configuration given: pass a preset name, a TOML file path or TOML text")
    if isinstance(config, os.PathLike):
        return _read_file(os.fspath(config))
    if not isinstance(config, str):
        raise TypeError(f"config must be a str or a path, not {type(config).__name__}")
    if "\n" in config:
        return {"toml_text": config, "origin": "<string>"}
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
    out: list[str] = []
    if isinstance(overrides, Mapping):
        out += [f"{k}={toml_literal(v, k)}" for k, v in overrides.items()]
    elif isinstance(overrides, (str, bytes)):
        # Iterating a string would pass it character by character; refuse it instead.
        raise TypeError('overrides must be a dict or a list of "key=value" strings, not a single string')
    elif overrides is not None:
        for o in overrides:
            if not isinstance(o, str):
                raise TypeError(f'overrides must be "key=value" strings; got {o!r}')
            out.append(o)
    for k, v in kw.items():
        key = k.replace("__", ".")
        out.append(f"{key}={toml_literal(v, key)}")
    if seed is not None:
        out.append(f"run.seed={toml_literal(seed, 'run.seed')}")
    return out


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_literal(v: Any, key: str = "value") -> str:
    """``v`` as a TOML value literal, so a Python value keeps its type through an override
    (the string ``"8"`` stays a string instead of becoming the integer 8)."""
    # bool before the numbers: bool is an int subclass, and numpy's bool_ is neither.
    if isinstance(v, bool) or getattr(getattr(v, "dtype", None), "kind", None) == "b":
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))  # 'nan', 'inf', '-inf', '1e-05': all valid TOML floats
    if isinstance(v, str):
        return '"' + "".join(_escape(c) for c in v) + '"'
    if isinstance(v, Mapping):
        items = ", ".join(f"{_toml_key(k)} = {toml_literal(x, f'{key}.{k}')}" for k, x in v.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(v, (list, tuple)) or getattr(v, "ndim", 0) >= 1:
        return "[" + ", ".join(toml_literal(x, key) for x in v) + "]"
    raise TypeError(f"override `{key}`: {type(v).__name__} value {v!r} has no TOML form")


def _escape(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    if ord(c) < 0x20 or ord(c) == 0x7F:
        return f"\\u{ord(c):04X}"
    return c


def _toml_key(k: Any) -> str:
    k = str(k)
    return k if _BARE_KEY.match(k) else toml_literal(k)
