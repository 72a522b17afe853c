"""``ssdkit calibrate``: fits configuration keys so that simulated points match measured ones.

The measured points are ``ssdkit probe``'s points file (format ``ssdkit-probe/1``) or fio's JSON
output (``--output-format=json``) of jobs with one pattern each (read, randread, write,
randwrite). Each point becomes one flow of the base configuration: its pattern, request size,
queue depth and address range, ``requests`` requests long. The fit minimises the squared
log-ratios of simulated to measured mean latency (``scipy.optimize.least_squares``, trust
region reflective, within the keys' bounds), so that a 10 % miss weighs the same at 50 us as
at 50 ms.

- Continuous keys (floats, and lists of floats such as ``flash.read_us``, whose entries are
  scaled together keeping their ratios; the fitted value is the first entry) are the fit's
  variables, normalised by their base values. Their starting values come from the X25-M
  latency model (:class:`ssdkit.models.X25mParams`): the base's simulated latencies are
  corrected by the model's relative change, and the keys fitted on that surrogate first, which
  costs no simulation.
- Integer keys (``flash.channels``, ...) are enumerated over their bounds outside the
  continuous fit; the combination with the smallest cost wins.
- Every point runs with one seed (common random numbers): a finite difference sees the keys'
  effect, not another draw of addresses. The Jacobian's columns run as one sweep
  (:func:`ssdkit.sweep.sweep`), its points in parallel on ``jobs`` processes.

The result holds each point's measured, base and fitted latency and error, the overall
root-mean-square log error, the simulator calls made, and whether the fit converged; a fit
that stops without converging reports the best point found.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import api, fio, models
from ._native import SsdkitError
from ._toml import tomllib
from .sweep import points as _sweep_points
from .sweep import sweep as _sweep

PROBE_FORMAT = "ssdkit-probe/1"
_PATTERNS = {
    # probe pattern / fio rw -> (flow pattern, read fraction)
    "seq-read": ("sequential", 1.0),
    "rand-read": ("random", 1.0),
    "seq-write": ("sequential", 0.0),
    "rand-write": ("random", 0.0),
}
_FIO_RW = {"read": "seq-read", "randread": "rand-read", "write": "seq-write", "randwrite": "rand-write"}
# fio's engines that keep `iodepth` requests in flight; the others (psync, fio's default,
# sync, pvsync, ...) issue one at a time whatever iodepth says.
_ASYNC_ENGINES = {"libaio", "io_uring", "io_uring_cmd", "posixaio", "nbd", "windowsaio", "solarisaio", "rdma"}
#: Most integer combinations enumerated: each runs a continuous fit of its own.
MAX_COMBINATIONS = 64
#: Forward-difference step of the Jacobian, relative to a key's base value: large enough that
#: the simulator's discrete events (which request meets which busy die) average out.
DIFF_STEP = 0.01


class CalibrateError(SsdkitError):
    """Measurements or keys that cannot be fitted, or a simulation that fails during the fit."""


@dataclass(frozen=True)
class Measured:
    """One measured point: a pattern (``seq-read``, ``rand-read``, ``seq-write``, ``rand-write``)
    at a request size and queue depth over a byte range, and its mean latency."""

    label: str
    pattern: str
    request_bytes: int
    iodepth: int
    offset_bytes: int
    span_bytes: int
    latency_us: float
    #: Size of the measured target, to place the range on a simulated device of another size.
    target_bytes: int = 0


# ---------------------------------------------------------------------------------------------
# Measured points


def load_points(path: str | os.PathLike[str]) -> list[Measured]:
    """The points of an ``ssdkit probe`` points file or of fio's JSON output."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise CalibrateError(f"{name}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CalibrateError(f"{name}: not UTF-8 text (a points file is JSON)") from None
    # fio may print notes before its JSON document.
    start = text.find("{")
    try:
        doc = json.loads(text[start:] if start >= 0 else text)
    except json.JSONDecodeError as e:
        raise CalibrateError(f"{name}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    if isinstance(doc, dict) and doc.get("format") == PROBE_FORMAT:
        return _probe_points(name, doc)
    if isinstance(doc, dict) and "fio version" in doc and isinstance(doc.get("jobs"), list):
        return _fio_points(name, doc)
    raise CalibrateError(
        f"{name}: neither an `ssdkit probe` points file (format {PROBE_FORMAT}) nor fio's JSON output"
        " (fio --output-format=json)"
    )


def _probe_points(name: str, doc: Mapping[str, Any]) -> list[Measured]:
    try:
        size = int((doc.get("target") or {}).get("size_bytes", 0) or 0)
        span = int((doc.get("plan") or {}).get("zone_bytes", 0) or 0)
    except (AttributeError, TypeError, ValueError):
        raise CalibrateError(f"{name}: `target.size_bytes` and `plan.zone_bytes` must be numbers") from None
    points = doc.get("points", [])
    if not isinstance(points, list):
        raise CalibrateError(f"{name}: `points` must be a list")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, dict):
            raise CalibrateError(f"{name}: point {i} is not an object")
        if p.get("test") == "sustained":
            continue  # a transient (a cache filling, GC starting), not a steady mean to fit
        try:
            m = Measured(
                label=f"{p['pattern']} {_size_text(int(p['request_bytes']))} qd{int(p['iodepth'])} zone {p.get('zone', 0)}",
                pattern=str(p["pattern"]),
                request_bytes=int(p["request_bytes"]),
                iodepth=int(p["iodepth"]),
                offset_bytes=int(p.get("offset_bytes", 0)),
                span_bytes=span,
                latency_us=float(p["latency_us"]),
                target_bytes=size,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrateError(
                f"{name}: point {i} lacks a usable {e} (pattern, request_bytes, iodepth, latency_us)"
            ) from None
        _check_point(name, f"point {i}", m)
        out.append(m)
    return out


def _fio_points(name: str, doc: Mapping[str, Any]) -> list[Measured]:
    glob = doc.get("global options", {}) or {}
    out = []
    if not isinstance(glob, dict):
        raise CalibrateError(f"{name}: `global options` must be an object")
    for i, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict) or not isinstance(job.get("job options", {}) or {}, dict):
            raise CalibrateError(f"{name}: job {i} is not an object with `job options`")
        opts = {**glob, **(job.get("job options", {}) or {})}
        jname = job.get("jobname", f"job {i}")
        where = f"job {i} ({jname})"
        if job.get("error", 0):
            raise CalibrateError(f"{name}: {where} ended with fio error {job['error']}: measure it again")
        rw = str(opts.get("rw", opts.get("readwrite", "read")))
        if rw not in _FIO_RW:
            raise CalibrateError(
                f"{name}: {where}: rw={rw} is not one of {', '.join(_FIO_RW)} (calibrate fits one pattern per job)"
            )
        pattern = _FIO_RW[rw]
        side = job.get("write" if pattern.endswith("write") else "read", {})
        try:
            ios = int(side.get("total_ios", 0) or 0)
            mean_ns = float(side["lat_ns"]["mean"]) if ios else 0.0
        except (AttributeError, KeyError, TypeError, ValueError):
            raise CalibrateError(f"{name}: {where} has no usable `total_ios` and `lat_ns.mean`") from None
        if ios == 0:
            raise CalibrateError(f"{name}: {where} completed no {pattern.split('-')[1]}s")
        bs = str(opts.get("bs", opts.get("blocksize", "4k"))).split(",")
        bs_dir = bs[1] if pattern.endswith("write") and len(bs) > 1 and bs[1] else bs[0]
        engine = str(opts.get("ioengine", "psync"))
        depth = _fio_int(name, where, "iodepth", opts.get("iodepth", "1")) if engine in _ASYNC_ENGINES else 1
        m = Measured(
            label=f"{jname} ({pattern} {bs_dir} qd{depth})",
            pattern=pattern,
            request_bytes=_fio_bytes(name, where, "bs", bs_dir),
            iodepth=depth,
            offset_bytes=_fio_bytes(name, where, "offset", str(opts.get("offset", "0"))),
            span_bytes=_fio_bytes(name, where, "size", str(opts["size"])) if "size" in opts else 0,
            latency_us=mean_ns / 1e3,
        )
        _check_point(name, where, m)
        out.append(m)
    return out


def _fio_bytes(name: str, where: str, key: str, text: str) -> int:
    ctx = fio._Ctx(f"{name}: {where}")
    opt = fio._Opt(key, key, text, 0, where)
    try:
        n, pct = fio._bytes(ctx, opt, text, 1024, percent=True)
    except fio.FioError:
        raise CalibrateError(f"{name}: {where}: {key}={text} is not a size (a number with k, m, g, ...)") from None
    if pct:
        raise CalibrateError(f"{name}: {where}: {key}={text}: a percentage of the device cannot be placed; give bytes")
    return n


def _fio_int(name: str, where: str, key: str, text: Any) -> int:
    try:
        return int(str(text))
    except ValueError:
        raise CalibrateError(f"{name}: {where}: {key}={text} is not an integer") from None


def _check_point(name: str, where: str, m: Measured) -> None:
    if m.pattern not in _PATTERNS:
        raise CalibrateError(f"{name}: {where}: pattern `{m.pattern}` is not one of {', '.join(_PATTERNS)}")
    if m.request_bytes < 512 or m.request_bytes % 512:
        raise CalibrateError(f"{name}: {where}: request size {m.request_bytes} is not a multiple of 512 bytes")
    if not 1 <= m.iodepth <= 65536:
        raise CalibrateError(f"{name}: {where}: queue depth {m.iodepth} is not in 1..65536")
    if not (m.latency_us > 0 and math.isfinite(m.latency_us)):
        raise CalibrateError(f"{name}: {where}: mean latency {m.latency_us} us is not a positive number")


def _size_text(n: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


# ---------------------------------------------------------------------------------------------
# Keys


@dataclass
class FitKey:
    """One fitted key: ``kind`` is ``float``, ``list`` (scaled together), ``int`` (enumerated) or
    ``rounded`` (an integer with more than :data:`MAX_COMBINATIONS` values in its bounds, fitted as
    continuous and rounded);
    ``base``, ``lo`` and ``hi`` are its base value and bounds (a list's first entry)."""

    key: str
    kind: str
    base: float
    lo: float
    hi: float
    base_value: Any = None

    def value(self, v: float) -> Any:
        """The configuration value for ``v``."""
        if self.kind in ("int", "rounded"):
            return round(v)
        if self.kind == "list":
            return [float(e) * v / self.base for e in self.base_value]
        return float(v)

    def integers(self) -> list[int]:
        return list(range(math.ceil(self.lo), math.floor(self.hi) + 1))


def _lookup(doc: Mapping[str, Any], key: str) -> Any:
    node: Any = doc
    segs = key.split(".")
    for i, s in enumerate(segs):
        if not isinstance(node, Mapping) or s not in node:
            where = ".".join(segs[:i]) or "the configuration"
            have = (
                sorted(k for k, v in node.items() if not isinstance(v, (Mapping, list)) or _numeric_list(v))
                if isinstance(node, Mapping)
                else []
            )
            listed = f"; numeric keys of {where}: {', '.join(have)}" if have else ""
            raise CalibrateError(f"--fit {key}: not a configuration key{listed}")
        node = node[s]
    return node


def _numeric_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in v)


def parse_fit(spec: str, resolved: Mapping[str, Any]) -> FitKey:
    """``KEY`` or ``KEY:LO:HI`` for the resolved base configuration ``resolved``. Without bounds
    a continuous key may move from a quarter to four times its base value, an integer one from
    half to twice it."""
    key, *bounds = spec.split(":")
    key = key.strip()
    if key.startswith(("flow.", "run.")) or key == "flow":
        raise CalibrateError(f"--fit {key}: calibrate fits device keys; the flows come from the measured points")
    v = _lookup(resolved, key)
    if isinstance(v, bool) or not (isinstance(v, (int, float)) or _numeric_list(v)):
        raise CalibrateError(f"--fit {key}: its value {v!r} is not numeric (a number or a list of numbers)")
    if isinstance(v, list):
        kind, base = "list", float(v[0])
        if base == 0 or any((e == 0) != (base == 0) for e in v):
            raise CalibrateError(f"--fit {key}: a list is scaled by its first entry, which must be non-zero; got {v}")
    elif isinstance(v, int):
        # TOML keeps 5 and 5.0 apart: an integer key is a count (channels, ...), enumerated.
        kind, base = "int", float(v)
    else:
        kind, base = "float", float(v)
    if bounds:
        if len(bounds) != 2:
            raise CalibrateError(f"--fit {spec}: give KEY or KEY:LO:HI")
        try:
            lo, hi = float(bounds[0]), float(bounds[1])
        except ValueError:
            raise CalibrateError(f"--fit {spec}: bounds `{bounds[0]}` and `{bounds[1]}` must be numbers") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise CalibrateError(f"--fit {spec}: the lower bound must be below the upper one")
    elif base == 0:
        raise CalibrateError(f"--fit {key}: its base value is 0; give bounds, --fit {key}:LO:HI")
    elif kind == "int":
        lo, hi = max(1.0, math.floor(base / 2)), base * 2
    else:
        lo, hi = min(base / 4, base * 4), max(base / 4, base * 4)
    if not lo <= base <= hi:
        raise CalibrateError(f"--fit {spec}: the bounds [{lo:g}, {hi:g}] exclude the base value {base:g}")
    if lo < 0:
        raise CalibrateError(f"--fit {spec}: a time, rate or count cannot be negative; give LO >= 0")
    if kind == "int":
        count = math.floor(hi) - math.ceil(lo) + 1
        if count < 1:
            raise CalibrateError(f"--fit {spec}: no integer lies in [{lo:g}, {hi:g}]")
        if count > MAX_COMBINATIONS:
            # Too many to enumerate (a cache's bytes, a block count): fitted as continuous,
            # rounded to an integer each time it is simulated.
            kind = "rounded"
    return FitKey(key, kind, base, lo, hi, v)


# ---------------------------------------------------------------------------------------------
# Simulation of the points


def _flow_overrides(m: Measured, capacity: int, requests: int) -> dict[str, Any]:
    pattern, read_fraction = _PATTERNS[m.pattern]
    span = m.span_bytes if 0 < m.span_bytes <= capacity else 0
    start = m.offset_bytes
    if span == 0:
        start = 0
    elif start + span > capacity:
        # The measured target is larger than the simulated device: the same place in proportion.
        frac = start / max(1, m.target_bytes - span) if m.target_bytes > span else 0.0
        start = int((capacity - span) * min(1.0, frac))
    align = max(4096, m.request_bytes)
    start = start // align * align
    if span:
        span = max(align, span // align * align)
    return {
        "flow.0.pattern": pattern,
        "flow.0.read_fraction": read_fraction,
        "flow.0.request_bytes": m.request_bytes,
        "flow.0.queue_depth": m.iodepth,
        "flow.0.start_bytes": start,
        "flow.0.range_bytes": span,
        "flow.0.requests": requests,
    }


def _base_text(config: Any, overrides: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The base configuration resolved, with its flows replaced by one plain flow that the
    points' overrides fill in."""
    resolved = api.resolve_config(config, overrides=dict(overrides))
    doc = tomllib.loads(resolved)
    flow = {"name": "point", "queue_depth": 1, "read_fraction": 1.0, "request_bytes": 4096, "pattern": "random"}
    doc["flow"] = [flow]
    return fio.toml_dumps(doc, []), tomllib.loads(resolved)


@dataclass
class Evaluator:
    """Simulated mean latencies of the points for sets of key values, cached, counted."""

    text: str
    points: Sequence[Measured]
    fixed: Mapping[str, Any]
    workloads: list[dict[str, Any]]
    seed: int
    jobs: int
    calls: int = 0
    sweeps: int = 0
    cache: dict[tuple, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Points that run the same flow (a probe's 4 KiB QD1 random reads are in IBM's test and
        # the queue-depth sweep) are one simulation, and one point of a sweep.
        keys = [json.dumps(w, sort_keys=True) for w in self.workloads]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        self.unique = [self.workloads[i] for i in sorted(set(first.values()))]
        pos = {k: j for j, k in enumerate(json.dumps(w, sort_keys=True) for w in self.unique)}
        self.index = [pos[k] for k in keys]

    def __call__(self, settings_list: Sequence[Mapping[str, Any]]) -> list[list[float]]:
        want = []
        for s in settings_list:
            k = _cache_key(s)
            if k not in self.cache and k not in [_cache_key(w) for w in want]:
                want.append(dict(s))
        if want:
            self._run(want)
        return [self.cache[_cache_key(s)] for s in settings_list]

    def _run(self, settings_list: list[dict[str, Any]]) -> None:
        keys = list(settings_list[0])
        grid = {k: [s[k] for s in settings_list] for k in keys} if keys else None
        mode = "zip" if keys else "cartesian"  # zip of no lists has no point, cartesian one
        pts = _sweep_points(grid, mode=mode, workloads=self.unique, seed=self.seed, same_seed=True)
        table = _sweep(
            self.text,
            grid,
            mode=mode,
            workloads=self.unique,
            seed=self.seed,
            same_seed=True,
            overrides=self.fixed,
            workers=self.jobs,
            progress=False,
            share_snapshots=False,
        )
        self.calls += len(pts)
        self.sweeps += 1
        rows = {}
        for r in table.itertuples(index=False):
            if r.error is not None and isinstance(r.error, str):
                p = next(p for p in pts if p.id == r.point)
                label = self.points[self.index.index(p.workload)].label
                raise CalibrateError(f"the simulation of {label} with {_settings_text(p.settings)} failed: {r.error}")
            if r.op == "all":
                rows[r.point] = float(r.latency_mean_us)
        sims: dict[tuple, list[float]] = {_cache_key(s): [math.nan] * len(self.unique) for s in settings_list}
        for p in pts:
            sims[_cache_key(p.settings)][p.workload] = rows[p.id]
        for k, sim in sims.items():
            self.cache[k] = [sim[j] for j in self.index]


def _cache_key(s: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, json.dumps(v)) for k, v in s.items()))


def _settings_text(s: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in s.items()) or "the base values"


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(e) for e in v) + "]"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def simulate(
    config: Any,
    points: Sequence[Measured],
    *,
    overrides: Mapping[str, Any] | None = None,
    requests: int = 2000,
    seed: int = 1,
    jobs: int | None = None,
) -> list[float]:
    """The simulated mean latency (us) of each point on ``config`` with ``overrides``: the
    flows ``calibrate`` runs. A calibration's measured points made by the simulator itself
    (a check that it recovers known keys) come from here."""
    ev = _evaluator(config, points, {}, requests, seed, jobs)
    return ev([dict(overrides or {})])[0]


def _evaluator(
    config: Any, points: Sequence[Measured], fixed: Mapping[str, Any], requests: int, seed: int, jobs: int | None
) -> Evaluator:
    if requests < 1:
        raise CalibrateError(f"--requests must be at least 1, got {requests}")
    text, _ = _base_text(config, fixed)
    capacity = api.device_info(text)["capacity_bytes"]
    wls = [_flow_overrides(m, capacity, requests) for m in points]
    # One preconditioned state for every evaluation: its seed fixed here.
    fixed_all = {**fixed, "precondition.seed": seed}
    return Evaluator(text, points, fixed_all, wls, seed, jobs or os.cpu_count() or 1)


# ---------------------------------------------------------------------------------------------
# The fit


@dataclass
class Fit:
    """A calibration's answer."""

    keys: list[FitKey]
    values: dict[str, Any]
    base_values: dict[str, Any]
    points: list[Measured]
    measured_us: list[float]
    base_us: list[float]
    fitted_us: list[float]
    converged: bool
    message: str
    simulator_calls: int
    sweeps: int
    wall_s: float
    start_values: dict[str, Any]
    combinations: list[dict[str, Any]]

    @staticmethod
    def _rms(sim: Sequence[float], meas: Sequence[float]) -> float:
        return math.sqrt(sum(math.log(s / m) ** 2 for s, m in zip(sim, meas)) / len(meas))

    @property
    def rms_log_error(self) -> float:
        """Root mean square of ln(simulated / measured) over the points, fitted."""
        return self._rms(self.fitted_us, self.measured_us)

    @property
    def base_rms_log_error(self) -> float:
        return self._rms(self.base_us, self.measured_us)

    def document(self) -> dict[str, Any]:
        return {
            "converged": self.converged,
            "message": self.message,
            "fitted": self.values,
            "base": self.base_values,
            "start": self.start_values,
            "bounds": {k.key: [k.lo, k.hi] for k in self.keys},
            "rms_log_error": self.rms_log_error,
            "base_rms_log_error": self.base_rms_log_error,
            "max_abs_error_pct": max(abs(f / m - 1) * 100 for f, m in zip(self.fitted_us, self.measured_us)),
            "simulator_calls": self.simulator_calls,
            "sweeps": self.sweeps,
            "wall_s": self.wall_s,
            "combinations": self.combinations,
            "points": [
                {
                    "label": p.label,
                    "pattern": p.pattern,
                    "request_bytes": p.request_bytes,
                    "iodepth": p.iodepth,
                    "measured_us": m,
                    "base_us": b,
                    "fitted_us": f,
                    "error_pct": (f / m - 1) * 100,
                }
                for p, m, b, f in zip(self.points, self.measured_us, self.base_us, self.fitted_us)
            ],
        }


def calibrate(
    points: Sequence[Measured] | str | os.PathLike[str],
    base: Any,
    fit: Sequence[str],
    *,
    overrides: Mapping[str, Any] | None = None,
    requests: int = 2000,
    seed: int = 1,
    jobs: int | None = None,
    max_evaluations: int = 30,
    subtract_us: float = 0.0,
    log: Callable[[str], None] | None = None,
) -> Fit:
    """Fits the keys ``fit`` (``KEY`` or ``KEY:LO:HI``) of ``base`` (a preset, TOML file or
    text, with ``overrides``) to the measured ``points`` (a list, or a points file for
    :func:`load_points`). ``subtract_us`` is removed from every measured latency first (a
    transport's overhead measured apart, such as NBD's). ``max_evaluations`` bounds the
    least-squares iterations (each a sweep of the points and one per key for the Jacobian).
    See the module's notes."""
    scipy_opt = _need_scipy()
    t0 = time.perf_counter()
    say = log or (lambda s: None)
    pts = load_points(points) if isinstance(points, (str, os.PathLike)) else list(points)
    if subtract_us:
        pts = [_subtract(p, subtract_us) for p in pts]
    if not fit:
        raise CalibrateError("give at least one key to fit (--fit KEY or KEY:LO:HI)")
    _, resolved = _base_text(base, dict(overrides or {}))
    keys = [parse_fit(s, resolved) for s in fit]
    seen = set()
    for k in keys:
        if k.key in seen:
            raise CalibrateError(f"--fit {k.key} is given twice")
        seen.add(k.key)
    cont = [k for k in keys if k.kind != "int"]
    ints = [k for k in keys if k.kind == "int"]
    if len(pts) < len(cont) + 1:
        raise CalibrateError(
            f"{len(pts)} measured point(s) cannot fit {len(cont)} continuous key(s): give at least {len(cont) + 1}"
        )
    combos = [{}]
    for k in ints:
        combos = [{**c, k.key: v} for c in combos for v in k.integers()]
    if len(combos) > MAX_COMBINATIONS:
        raise CalibrateError(
            f"the integer keys' bounds give {len(combos)} combinations (at most {MAX_COMBINATIONS}): narrow them"
        )
    ev = _evaluator(base, pts, dict(overrides or {}), requests, seed, jobs)
    meas = [p.latency_us for p in pts]
    base_settings = {k.key: k.value(k.base) for k in keys}
    base_sim = ev([base_settings])[0]
    _check_sim(base_sim, pts, base_settings)
    say(f"base: rms log error {Fit._rms(base_sim, meas):.4f} over {len(pts)} points")
    best: tuple[float, dict[str, Any], list[float], bool, str, dict[str, Any]] | None = None
    tried = []
    for combo in combos:
        start = _start_values(base, overrides, cont, combo, pts, base_sim, say) if cont else {}
        res = _fit_continuous(scipy_opt, ev, cont, combo, start, meas, max_evaluations, say)
        cost, settings, sim, ok, msg = res
        tried.append({"integers": combo, "rms_log_error": math.sqrt(2 * cost / len(pts)), "converged": ok})
        if best is None or cost < best[0]:
            best = (cost, settings, sim, ok, msg, start)
    assert best is not None
    _, settings, sim, ok, msg, start = best
    return Fit(
        keys=keys,
        values={k.key: settings[k.key] for k in keys},
        base_values=base_settings,
        points=pts,
        measured_us=meas,
        base_us=base_sim,
        fitted_us=sim,
        converged=ok,
        message=msg,
        simulator_calls=ev.calls,
        sweeps=ev.sweeps,
        wall_s=time.perf_counter() - t0,
        start_values={k.key: start.get(k.key, base_settings[k.key]) for k in cont},
        combinations=tried if ints else [],
    )


def _need_scipy():
    try:
        import scipy.optimize as opt
    except ImportError:
        raise ImportError(
            "ssdkit calibrate needs scipy, a dependency of ssdkit missing here: `pip install scipy`"
        ) from None
    return opt


def _subtract(p: Measured, us: float) -> Measured:
    lat = p.latency_us - us
    if lat <= 0:
        raise CalibrateError(f"{p.label}: its latency {p.latency_us:.3f} us is not above the subtracted {us} us")
    return Measured(p.label, p.pattern, p.request_bytes, p.iodepth, p.offset_bytes, p.span_bytes, lat, p.target_bytes)


def _check_sim(sim: Sequence[float], pts: Sequence[Measured], settings: Mapping[str, Any]) -> None:
    for s, p in zip(sim, pts):
        if not (s > 0 and math.isfinite(s)):
            raise CalibrateError(f"the simulation of {p.label} with {_settings_text(settings)} completed no request")


def _start_values(
    base: Any,
    overrides: Mapping[str, Any] | None,
    cont: Sequence[FitKey],
    combo: Mapping[str, Any],
    pts: Sequence[Measured],
    base_sim: Sequence[float],
    say: Callable[[str], None],
) -> dict[str, float]:
    """Starting values from the X25-M latency model: the base's simulated QD1 latencies times
    the model's relative change, fitted to the measured ones (no simulation). Where the model
    does not apply (no QD1 point, or a key it does not read) the base value stays."""
    opt = _need_scipy()
    qd1 = [i for i, p in enumerate(pts) if p.iodepth == 1]
    fallback = {k.key: k.base for k in cont}
    if not qd1:
        return fallback

    def model(u: Sequence[float]) -> list[float]:
        ov = {**dict(overrides or {}), **combo, **{k.key: k.value(x * k.base) for k, x in zip(cont, u)}}
        par = {w: models.X25mParams.from_config(base, write=w, overrides=ov) for w in (False, True)}
        out = []
        for i in qd1:
            p = par[pts[i].pattern.endswith("write")]
            out.append(p.record_us(p.pages(pts[i].request_bytes)))
        return out

    try:
        m0 = model([1.0] * len(cont))

        def resid(u):
            return [math.log(base_sim[i] * m / m_0 / pts[i].latency_us) for i, m, m_0 in zip(qd1, model(u), m0)]

        lo = [k.lo / k.base for k in cont]
        hi = [k.hi / k.base for k in cont]
        # The model has kinks (a channel's bus or its dies become the bottleneck), so a local
        # fit can stop in the wrong regime: a grid over the bounds (log-spaced, about 2,000
        # model evaluations, no simulation) picks where the local fit starts.
        n = max(2, min(9, int(2000 ** (1 / len(cont)))))
        axes = [
            [a * (b / a) ** (i / (n - 1)) if a > 0 else a + (b - a) * i / (n - 1) for i in range(n)]
            for a, b in zip(lo, hi)
        ]
        grid_best = min(([*u] for u in itertools.product(*axes)), key=lambda u: sum(x * x for x in resid(u)))
        r = opt.least_squares(resid, grid_best, bounds=(lo, hi), diff_step=1e-3, max_nfev=200)
    except (SsdkitError, ValueError, ZeroDivisionError) as e:
        say(f"start: the X25-M model does not apply ({e}); starting from the base values")
        return fallback
    start = {k.key: float(x * k.base) for k, x in zip(cont, r.x)}
    say("start (X25-M model): " + _settings_text({k: v for k, v in start.items()}))
    return start


def _fit_continuous(
    opt: Any,
    ev: Evaluator,
    cont: Sequence[FitKey],
    combo: Mapping[str, Any],
    start: Mapping[str, float],
    meas: Sequence[float],
    max_evaluations: int,
    say: Callable[[str], None],
) -> tuple[float, dict[str, Any], list[float], bool, str]:
    def settings(u: Sequence[float]) -> dict[str, Any]:
        return {**combo, **{k.key: k.value(x * k.base) for k, x in zip(cont, u)}}

    def resid_of(sim: Sequence[float]) -> list[float]:
        return [math.log(s / m) for s, m in zip(sim, meas)]

    if not cont:
        sim = ev([settings([])])[0]
        r = resid_of(sim)
        return 0.5 * sum(x * x for x in r), settings([]), sim, True, "integer keys enumerated"
    lo = [k.lo / k.base for k in cont]
    hi = [k.hi / k.base for k in cont]
    u0 = [min(max(start[k.key] / k.base, a), b) for k, a, b in zip(cont, lo, hi)]
    best: dict[str, Any] = {}

    def track(u: Sequence[float], sim: list[float]) -> list[float]:
        r = resid_of(sim)
        c = 0.5 * sum(x * x for x in r)
        if not best or c < best["cost"]:
            best.update(cost=c, u=list(u), sim=sim)
        return r

    def fun(u):
        sim = ev([settings(u)])[0]
        r = track(u, sim)
        rms = math.sqrt(sum(x * x for x in r) / len(r))
        best_rms = math.sqrt(2 * best["cost"] / len(meas))
        say(f"iteration: rms log error {rms:.5f} (best {best_rms:.5f}) at {_settings_text(settings(u))}")
        return r

    def jac(u):
        steps = []
        for j in range(len(cont)):
            h = DIFF_STEP * max(1.0, abs(u[j]))
            # Step inwards at an upper bound: the simulator is not run outside the bounds.
            if u[j] + h > hi[j]:
                h = -h
            v = list(u)
            v[j] += h
            steps.append((v, h))
        sims = ev([settings(u)] + [settings(v) for v, _ in steps])
        r0 = track(u, sims[0])
        cols = []
        for (v, h), sim in zip(steps, sims[1:]):
            rj = track(v, sim)
            cols.append([(a - b) / h for a, b in zip(rj, r0)])
        return [[cols[j][i] for j in range(len(cont))] for i in range(len(meas))]

    try:
        res = opt.least_squares(
            fun, u0, jac=jac, bounds=(lo, hi), method="trf", x_scale=1.0, xtol=1e-4, ftol=1e-8, max_nfev=max_evaluations
        )
        ok = res.status > 0
        msg = res.message
    except (ValueError, FloatingPointError) as e:
        ok, msg = False, f"the least-squares fit stopped: {e}"
    if not best:
        raise CalibrateError("the fit made no evaluation")
    return best["cost"], settings(best["u"]), best["sim"], ok, msg


# ---------------------------------------------------------------------------------------------
# Output


def fitted_toml(base: Any, fit: Fit, *, overrides: Mapping[str, Any] | None = None, origin: str = "") -> str:
    """The base configuration resolved, with the fitted values set: a file ``ssdkit run``
    accepts. Its header says where the values came from and how well they fit."""
    resolved = api.resolve_config(base, overrides={**dict(overrides or {}), **fit.values})
    doc = tomllib.loads(resolved)
    head = [
        f"Fitted by ssdkit calibrate{' from ' + origin if origin else ''}: {len(fit.points)} points,"
        f" rms log error {fit.rms_log_error:.4f} (base {fit.base_rms_log_error:.4f})"
        + ("" if fit.converged else " -- did NOT converge: the best point found"),
    ]
    for k in fit.keys:
        head.append(
            f"  {k.key} = {_fmt(fit.values[k.key])} (base {_fmt(fit.base_values[k.key])}, bounds {k.lo:g}..{k.hi:g})"
        )
    return fio.toml_dumps(doc, head)


def table(fit: Fit) -> str:
    """The fit as text: the keys, then each point's error."""
    out = []
    w = max(len(k.key) for k in fit.keys)
    out.append(f"{'key':<{w}}  {'base':>14}  {'start':>14}  {'fitted':>14}  bounds")
    for k in fit.keys:
        st = fit.start_values.get(k.key)
        out.append(
            f"{k.key:<{w}}  {_fmt(fit.base_values[k.key]):>14}  {(_fmt(st) if st is not None else '-'):>14}"
            f"  {_fmt(fit.values[k.key]):>14}  {k.lo:g}..{k.hi:g}"
        )
    out.append("")
    lw = max(len(p.label) for p in fit.points)
    out.append(f"{'point':<{lw}}  {'measured us':>12}  {'base us':>10}  {'fitted us':>10}  {'error':>8}")
    for p, m, b, f in zip(fit.points, fit.measured_us, fit.base_us, fit.fitted_us):
        out.append(f"{p.label:<{lw}}  {m:>12.2f}  {b:>10.2f}  {f:>10.2f}  {(f / m - 1) * 100:>+7.2f}%")
    out.append("")
    doc = fit.document()
    out.append(
        f"rms log error {fit.rms_log_error:.4f} (base {fit.base_rms_log_error:.4f}), largest error"
        f" {doc['max_abs_error_pct']:.2f} %; {fit.simulator_calls} simulator calls in {fit.sweeps} sweeps, {fit.wall_s:.1f} s"
    )
    out.append(("converged: " if fit.converged else "NOT converged (best point found): ") + fit.message)
    return "\n".join(out)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
