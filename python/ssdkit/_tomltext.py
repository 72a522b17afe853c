"""Configuration trees as TOML text, and ``--set`` overrides applied to them as the core applies
them: what the fio and MQSim converters share (:mod:`ssdkit.fio`, :mod:`ssdkit.mqsim`). A module
of its own so that ``ssdkit run --mqsim`` does not load the fio converter (0.6 ms of its start)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from . import _native, api
from ._lazy import _Lazy
from ._native import ConfigError

# TOML is read only to parse --set values: `ssdkit run --mqsim`, which imports this module,
# parses none and skips tomllib (4 ms).
_toml = _Lazy("_toml")

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The preset a converted workload runs on when no device is given.
DEFAULT_PRESET = "mqsim-paper"


def base_source(base: Any, preset: str | None) -> tuple[str, str]:
    """(TOML text, label) of a device configuration: preset name, path, or TOML text."""
    if base is None and preset is None:
        preset = DEFAULT_PRESET
    src = api._source(base, preset)
    if "preset" in src and "toml_text" in src:
        # A file laid over a preset: the device they make together.
        return _native.resolve_config(**src), f"{src['origin']} on preset {src['preset']}"
    if "preset" in src:
        return _native.preset_toml(src["preset"]), f"preset {src['preset']}"
    return src["toml_text"], src["origin"]


def override_list(overrides: Any) -> list[str]:
    return api._override_list(overrides, {}, None)


def device_capacity(doc: Mapping, overrides: Sequence[str], origin: str) -> int:
    """Logical capacity in bytes of the device ``doc`` describes (flows ignored) after the
    non-flow overrides, from the core's ``device_info``."""
    # A shallow copy: only `d`'s own "flow" key is replaced; nothing below writes `doc`'s tables.
    d = {k: v for k, v in doc.items() if k != "flow"}
    d["flow"] = [{"requests": 1}]  # the core validates a whole configuration
    dev_ov = [o for o in overrides if not o.split("=", 1)[0].strip().startswith("flow.")]
    info = _native.device_info(toml_text=toml_dumps(d, []), origin=origin, overrides=dev_ov)
    return int(info["capacity_bytes"])


def parse_override_value(raw: str) -> Any:
    try:
        return _toml.tomllib.loads(f"v = {raw}")["v"]
    except _toml.tomllib.TOMLDecodeError:
        return raw  # a bare string, as the core takes it


def apply_override_list(doc: dict, overrides: Iterable[str]) -> None:
    """Applies ``key.path=value`` overrides to a TOML tree the way the core does
    (config/overrides.rs): values parse as TOML literals, else bare strings; numeric segments
    index arrays, one past the end appends."""
    for spec in overrides:
        path, eq, raw = spec.partition("=")
        if not eq:
            raise ConfigError(f"override `{spec}`: expected key.path=value")
        path = path.strip()
        segs = path.split(".")
        if not path or any(not s for s in segs):
            raise ConfigError(f"override `{spec}`: empty key in path `{path}`")
        value = parse_override_value(raw.strip())
        cur: Any = doc
        for i, seg in enumerate(segs):
            last = i + 1 == len(segs)
            if isinstance(cur, dict):
                if last:
                    cur[seg] = value
                    break
                if seg not in cur:
                    cur[seg] = [] if segs[i + 1].isdigit() else {}
                cur = cur[seg]
            elif isinstance(cur, list):
                if not seg.isdigit():
                    raise ConfigError(f"override `{spec}`: `{'.'.join(segs[: i + 1])}` must be an index into an array")
                n = int(seg)
                if n > len(cur):
                    raise ConfigError(
                        f"override `{spec}`: index {n} out of range (the array has {len(cur)} entries; "
                        f"use {len(cur)} to append)"
                    )
                if n == len(cur):
                    cur.append({})
                if last:
                    cur[n] = value
                    break
                cur = cur[n]
            else:
                raise ConfigError(f"override `{spec}`: `{'.'.join(segs[:i])}` is a value, not a section")


_TABLE_ORDER = ("run", "interface", "pcie", "ftl", "precondition", "flash")


def toml_dumps(doc: Mapping, header: Sequence[str]) -> str:
    """TOML text of a configuration tree: comment lines, scalar keys, tables (in the order of
    the configuration's sections), then ``[[flow]]`` tables."""
    out = [f"# {h}" if h else "#" for h in header]
    if out:
        out.append("")
    lit = api.toml_literal

    def emit_table(path: str, t: Mapping, array: bool = False) -> None:
        out.append(f"[[{path}]]" if array else f"[{path}]")
        subs = []
        for k, v in t.items():
            if isinstance(v, Mapping):
                subs.append((k, v))
            else:
                out.append(f"{api._toml_key(k)} = {lit(v, k)}")
        out.append("")
        for k, v in subs:
            emit_table(f"{path}.{api._toml_key(k)}", v)

    scalars = [(k, v) for k, v in doc.items() if not isinstance(v, Mapping) and k != "flow"]
    for k, v in scalars:
        out.append(f"{api._toml_key(k)} = {lit(v, k)}")
    if scalars:
        out.append("")
    tables = [k for k in _TABLE_ORDER if isinstance(doc.get(k), Mapping)]
    tables += [k for k, v in doc.items() if isinstance(v, Mapping) and k not in _TABLE_ORDER]
    for k in tables:
        emit_table(api._toml_key(k), doc[k])
    for f in doc.get("flow", []) or []:
        emit_table("flow", f, array=True)
    return "\n".join(out).rstrip("\n") + "\n"
