"""Design-space sweeps: many runs of one base configuration over a grid of keys, gathered into
one table.

A sweep is a list of points. A point is one value for each swept key (from a cartesian,
zipped or random grid), one workload (a set of overrides, when ``workloads`` are given) and
one repeat. Its seed is derived from the sweep seed and the point itself (a hash of its
settings, workload and repeat), not from its position, so a sweep gives the same table
whatever the order the points run in, the number of workers, or an interruption and resume.

Points on one device share its preconditioned state. The core says what that state depends
on (``ssdkit.precondition_key``: the device, the FTL and preconditioning settings, and what the
flows decide, such as the footprint of the random writes); points with equal keys form one
device, preconditioned with one seed derived from the sweep seed, the key and the repeat
(``precondition.seed``), while each point's workload draws from its own seed. Where two or
more points share a device, it is preconditioned once into a snapshot that they all load; the
table is the same with or without sharing (only the time taken differs).

Each point's rows (one per flow and operation) go to a part file next to the output as soon
as the point ends, named by the point's identity: a hash of everything its result depends on
(its configuration resolved by the core, with the base configuration, ``[set]``, its workload,
grid values and seeds, the size and time of the trace files it reads, and the ssdkit version).
A restarted sweep reuses the part files whose identity matches and runs the other points again;
the part files go once the table is written. A point that fails records its error in the
``error`` column and the sweep goes on; a key the configuration does not have (in the grid, a
workload or ``[set]``), or a bad ``[set]`` value, stops the sweep before any point runs.

Needs pandas, pyarrow and tqdm, which every install has.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _native, api, outputs
from ._native import ConfigError, SsdkitError, SsdkitIoError, __version__
from ._toml import tomllib

#: Columns that depend on the machine's speed, not on the simulation: left out when two
#: sweeps' tables are compared (in ``result_json`` too, with the preconditioning record's
#: ``wall_time_s`` and ``snapshot_load_s``).
WALL_CLOCK_COLUMNS = ("wall_time_s", "events_per_wall_s", "requests_per_wall_s")

#: The layout of a part file's rows, part of every point's identity: a change to the table's
#: columns makes older part files stale even within one ssdkit version (a development build).
_PART_FORMAT = 2

MODES = ("cartesian", "zip", "random")
_OPS = ("read", "write", "trim", "all")
_PERCENTILES = ("mean", "min", "p50", "p90", "p99", "p99_9", "p99_99", "max")


def _need(module: str, extra: str | None = None):
    """``module``, or an ImportError saying how to install it: an ``extra`` of ssdkit (dask), or
    a dependency every install has (pandas, pyarrow) that is missing from this environment."""
    try:
        return __import__(module)
    except ImportError:
        if extra is None:
            how = f"it is a dependency of ssdkit missing here: `pip install {module}`"
        else:
            how = f"install the extra with `pip install 'ssdkit[{extra}]'`"
        raise ImportError(f"this part of ssdkit sweeps needs {module}: {how}") from None


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    #: Stable id: a hash of ``settings``, the workload's overrides and ``repeat``.
    id: str
    #: Swept key -> value.
    settings: Mapping[str, Any]
    #: Index in the sweep's workloads (0 when there are none).
    workload: int
    repeat: int
    #: ``run.seed`` of the point, from the sweep seed and ``id``.
    seed: int
    overrides: Mapping[str, Any] = field(default_factory=dict)


def _combinations(grid: Mapping[str, Sequence[Any]], mode: str, samples: int | None, seed: int) -> list[dict]:
    if mode not in MODES:
        raise ConfigError(f"sweep mode `{mode}` is not one of {', '.join(MODES)}")
    for k, v in grid.items():
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) == 0:
            raise ConfigError(f"sweep grid key `{k}` must list one or more values, got {v!r}")
    keys = list(grid)
    if mode == "cartesian":
        if samples is not None:
            raise ConfigError('sweep `samples` goes with mode "random" only')
        return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]
    if mode == "zip":
        if samples is not None:
            raise ConfigError('sweep `samples` goes with mode "random" only')
        lengths = {k: len(grid[k]) for k in keys}
        if len(set(lengths.values())) > 1:
            raise ConfigError(f'sweep mode "zip" needs lists of one length; got {lengths}')
        return [dict(zip(keys, vals)) for vals in zip(*(grid[k] for k in keys))]
    if samples is None or samples < 1:
        raise ConfigError(f'sweep mode "random" needs `samples` >= 1, got {samples!r}')
    rng = random.Random(seed)
    return [{k: rng.choice(list(grid[k])) for k in keys} for _ in range(samples)]


def _digest(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def points(
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    mode: str = "cartesian",
    samples: int | None = None,
    workloads: Sequence[Mapping[str, Any]] | None = None,
    repeats: int = 1,
    seed: int = 0,
    same_seed: bool = False,
) -> list[Point]:
    """The points of a sweep, in a fixed order (grid order, then workloads, then repeats).
    With ``same_seed`` every point's seed is ``seed`` itself (see :func:`sweep`)."""
    if not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"sweep `repeats` must be an integer >= 1, got {repeats!r}")
    if same_seed and repeats > 1:
        raise ConfigError("sweep `same_seed` runs every point with one seed: `repeats` > 1 would repeat identical runs")
    combos = _combinations(dict(grid or {}), mode, samples, seed)
    wls = [dict(w) for w in (workloads or [{}])]
    out = []
    for settings in combos:
        for wi, w in enumerate(wls):
            for r in range(repeats):
                pid = _digest({"settings": settings, "workload": w, "repeat": r})[:16]
                point_seed = seed if same_seed else int(_digest({"sweep_seed": seed, "point": pid})[:15], 16)
                out.append(Point(pid, settings, wi, r, point_seed, {**w, **settings}))
    ids = [p.id for p in out]
    if len(set(ids)) != len(ids):
        # A random grid may draw a combination twice: those points would be one run.
        seen: set[str] = set()
        out = [p for p in out if not (p.id in seen or seen.add(p.id))]
    return out


@dataclass(frozen=True)
class Device:
    """The preconditioned device a point starts from."""

    #: A hash of the device's precondition key (with its seed): equal ids, equal states.
    id: str
    #: ``precondition.seed`` of the device.
    seed: int


def devices(config: Any, overrides: Mapping[str, Any], pts: Sequence[Point], seed: int = 0) -> dict[str, Device]:
    """Point id -> the device it starts from, for the points whose configuration is valid (the
    others report their error when they run). A device's seed is ``precondition.seed`` where
    the configuration sets it, else derived from the sweep seed, the device's key and the
    point's repeat: points that differ only in keys preconditioning does not read (queue
    depth, scheduling, ...) start from one state, and repeats from independent ones."""
    src = api._source(config, None)
    out = {}
    for p in pts:
        try:
            ov = api._override_list({**overrides, **p.overrides}, {}, p.seed)
            key = json.loads(_native.precondition_key(overrides=ov, **src))
        except (SsdkitError, TypeError, ValueError):
            continue
        if key.pop("seed_from") == "run.seed":
            key.pop("seed")
            key["seed"] = int(_digest({"sweep_seed": seed, "device": key, "repeat": p.repeat})[:15], 16)
        out[p.id] = Device(_digest(key)[:16], key["seed"])
    return out


#: A core message about a key the configuration does not have, rather than a bad value: serde's
#: unknown field (naming the key, or its first unknown section), or an override whose path does
#: not fit the configuration's shape.
_UNKNOWN_KEY = re.compile(
    r"key `(?P<key>[^`]+)`: unknown field|key `(?P<moved>[^`]+)` moved |^override `(?P<path>[^=`]+)="
)


def _unknown_key(msg: str) -> str | None:
    m = _UNKNOWN_KEY.search(msg)
    return None if m is None else (m.group("key") or m.group("moved") or m.group("path"))


def _trace_files(resolved: str) -> list[Any]:
    """Size and modification time of each trace file a resolved configuration reads: the
    configuration names them, their bytes decide the result too."""
    out: list[Any] = []
    if "\ntrace = " not in resolved:
        return out  # no trace flow: spare the parse, once per point
    for f in tomllib.loads(resolved).get("flow", []):
        path = f.get("trace")
        if isinstance(path, str):
            try:
                st = os.stat(path)
                out.append([path, st.st_size, st.st_mtime_ns])
            except OSError:
                out.append([path, None, None])  # the run reports it
    return out


def identities(
    config: Any, overrides: Mapping[str, Any], pts: Sequence[Point], devs: Mapping[str, Device]
) -> dict[str, str]:
    """Point id -> the point's identity: a hash of the configuration it runs, resolved by the
    core (base configuration, ``overrides``, workload, grid values, ``run.seed`` and
    ``precondition.seed``), the trace files it reads, its place in the sweep and the ssdkit
    version. A part file is reused only by a point of the same identity.

    Checks the sweep before anything runs: a bad ``overrides`` key or value, or a key of the
    grid or a workload that the configuration does not have, raises :class:`ConfigError`
    naming it with the core's message (the one ``--set`` gives, listing the allowed keys). A
    bad grid or workload value is left to its point, which records the error."""
    src = api._source(config, None)
    _native.resolve_config(**src)  # the base configuration's own errors, unchanged
    try:
        _native.resolve_config(overrides=api._override_list(overrides, {}, None), **src)
    except ConfigError as e:
        raise ConfigError(f"sweep [set] (the overrides of every point): {e}") from None
    out = {}
    for p in pts:
        what: dict[str, Any]
        try:
            ov = api._override_list(_overrides(overrides, p, devs.get(p.id)), {}, p.seed)
            resolved = _native.resolve_config(overrides=ov, **src)
            what = {"config": resolved, "traces": _trace_files(resolved)}
        except (SsdkitError, TypeError, ValueError) as e:
            _raise_unknown_key(str(e), p)
            what = {"source": src, "overrides": repr(sorted(p.overrides.items())), "error": str(e)}
        doc = {**what, "point": p.id, "workload": p.workload, "repeat": p.repeat, "seed": p.seed}
        out[p.id] = _digest({**doc, "ssdkit": __version__, "format": _PART_FORMAT})[:16]
    return out


def _raise_unknown_key(msg: str, p: Point) -> None:
    named = _unknown_key(msg)
    if named is None:
        return
    for k in p.overrides:
        if k == named or k.startswith(named + "."):  # `named` may be k's first unknown section
            where = f"grid key `{k}`" if k in p.settings else f"workload {p.workload} key `{k}`"
            raise ConfigError(f"sweep {where}: {msg}")
    raise ConfigError(f"sweep point {p.id}: {msg}")


def _rows(point: Point, device: Device | None, raw: dict | None, error: str | None, keys: Sequence[str]) -> list[dict]:
    base = {"point": point.id, "workload": point.workload, "repeat": point.repeat, "seed": point.seed}
    base.update(device=device and device.id, device_seed=device and device.seed)
    base.update({k: point.settings.get(k) for k in keys})
    if raw is None:
        return [{**base, "flow": None, "op": None, "error": error}]
    dev = raw["device"]
    common = {
        "error": None,
        "write_amplification": dev["ftl"]["write_amplification"] if dev["ftl"]["user_page_writes"] else float("nan"),
        "gc_runs": dev["ftl"]["gc_runs"],
        "simulated_time_s": raw["simulated_time_s"],
        "events": raw["events"],
        **{k: raw[k] for k in WALL_CLOCK_COLUMNS},
        "result_json": json.dumps(raw, sort_keys=True),
    }
    rows = []
    for f in raw["flows"]:
        for op in _OPS:
            s = f["stats"][op]
            if s["count"] == 0 and op != "all":
                continue
            # The names Result.to_pandas() gives the same figures (docs/results.md).
            row = {**base, "flow": f["index"], "scope": f["name"], "op": op}
            row.update(count=s["count"], iops=s["iops"], bandwidth_MBps=s["bandwidth_bytes_per_s"] / 1e6)
            row.update({f"latency_{p}_us": s["latency_us"][p] for p in _PERCENTILES})
            rows.append({**row, **common})
    return rows


def _overrides(fixed: Mapping[str, Any], point: Point, device: Device | None) -> dict[str, Any]:
    ov = {**fixed, **point.overrides}
    if device is not None:
        ov["precondition.seed"] = device.seed
    return ov


def _run_point(
    config: Any,
    fixed: Mapping[str, Any],
    point: Point,
    device: Device | None,
    snapshot: str | None,
    keys: Sequence[str],
) -> list[dict]:
    """Runs one point in a worker; returns its table rows (made there, so that the parent,
    which gathers every point, does little per point). ``snapshot`` is the device's shared
    snapshot: where this worker cannot read it (a Dask worker on another machine without a
    shared directory), the point preconditions the same state itself."""
    ov = _overrides(fixed, point, device)
    snap = snapshot if snapshot is not None and os.path.isfile(snapshot) else None
    try:
        try:
            r = api.run(config, overrides=ov, seed=point.seed, snapshot=snap)
        except SsdkitIoError as e:
            if snap is None or snap not in str(e):
                raise
            r = api.run(config, overrides=ov, seed=point.seed)
            snap = None
        raw = r.raw
        if snap is not None:
            # The file's name, not its (often temporary) directory: the table stays the same.
            raw["device"]["precondition"]["snapshot"] = os.path.basename(snap)
        return _rows(point, device, raw, None, keys)
    except (SsdkitError, TypeError, ValueError) as e:  # recorded; the sweep goes on
        return _rows(point, device, None, f"{type(e).__name__}: {e}", keys)


def _make_snapshot(config: Any, fixed: Mapping[str, Any], point: Point, device: Device, path: str) -> str | None:
    """Preconditions ``point``'s device into ``path`` (kept if it exists: a resumed sweep, or a
    snapshot directory given again). None if that fails: the points then precondition
    themselves and record the error."""
    if not os.path.isfile(path):
        try:
            api.precondition(config, path, overrides=_overrides(fixed, point, device), seed=point.seed)
        except (SsdkitError, TypeError, ValueError):
            return None
    return path


def _part_path(parts: Path, point: Point, ident: str) -> Path:
    return parts / f"{point.id}-{ident}.parquet"


def _resume(pd: Any, parts: Path, pts: Sequence[Point], idents: Mapping[str, str]) -> dict[str, Any]:
    """The rows of the points whose part file in ``parts`` has their identity. Other part files
    (an earlier sweep's with another configuration, seed or ssdkit version) are removed, and
    said so once on stderr: their points run again."""
    want = {_part_path(parts, p, idents[p.id]).name: p for p in pts}
    done, stale = {}, 0
    for f in sorted(parts.iterdir()):
        if f.name in want:
            done[want[f.name].id] = pd.read_parquet(f)
        elif f.is_file():
            stale += f.suffix == ".parquet"  # a .tmp is a part cut short: no result to speak of
            f.unlink()
    if stale:
        print(
            f"ssdkit sweep: ignoring {stale} part file{'s' * (stale > 1)} in {parts} from a sweep with another "
            "configuration, seed or ssdkit version: their points run again",
            file=sys.stderr,
        )
    return done


def sweep(
    config: Any,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    mode: str = "cartesian",
    samples: int | None = None,
    workloads: Sequence[Mapping[str, Any]] | None = None,
    repeats: int = 1,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
    output: str | os.PathLike | None = None,
    workers: int | None = None,
    executor: Any = None,
    progress: bool = True,
    share_snapshots: bool = True,
    snapshot_dir: str | os.PathLike | None = None,
    same_seed: bool = False,
):
    """Runs ``config`` (a preset name, a TOML path or TOML text, as :func:`ssdkit.run`) at every
    point of the grid and returns the table (a pandas DataFrame): one row per point, flow and
    operation, the swept keys as columns, the point's statistics, and its whole result as JSON
    (``result_json``).

    ``grid`` maps configuration keys (flow keys too, ``"flow.0.queue_depth"``) to lists of
    values; ``mode`` is ``"cartesian"`` (every combination), ``"zip"`` (the i-th value of every
    list together) or ``"random"`` (``samples`` combinations drawn with the sweep seed).
    ``workloads`` is a list of override dicts, each run at every grid point; ``repeats`` runs
    each point again with another seed; ``overrides`` apply to every point (the grid and the
    workload win over them). ``output`` is a Parquet file: the points' part files are kept in
    ``<output>.parts/`` until the table is written, so that an interrupted sweep resumes where
    it stopped (reusing only the points whose configuration, seed and ssdkit version are
    unchanged: :func:`identities`). Keys are checked before any point runs: one the
    configuration does not have (grid, workload or ``overrides``), or a bad ``overrides``
    value, raises :class:`ConfigError` naming it. ``workers``
    processes run the points (default: every core); ``progress`` shows a bar with an ETA.

    Points on one device (columns ``device`` and ``device_seed``: see the module's notes)
    start from one preconditioned state. With ``share_snapshots`` (the default) a device that
    two or more points start from is preconditioned once, into a snapshot in
    ``snapshot_dir`` (default: ``<output>.snapshots/``, kept until the sweep completes so a
    resumed sweep reuses it, or a temporary directory without ``output``; a directory given
    here is kept, and its snapshots reused by later sweeps of the same devices). The table is
    the same either way.

    ``executor`` runs the points on a Dask cluster instead: a ``dask.distributed.Client``, or
    a scheduler's address (``"tcp://host:8786"``), for which a client is made and closed again.
    The workers need ssdkit installed (``pip install 'ssdkit[dask]'``), and to share snapshots
    a ``snapshot_dir`` they all see (a worker that cannot read one preconditions the same
    state itself); SLURM and PBS clusters come from dask-jobqueue (docs/sweeps.md). The table
    is the same as the local pool's.

    ``same_seed`` runs every point with ``run.seed = seed`` instead of a seed derived from the
    point (common random numbers: points that differ only in their settings see the same
    requests, as the finite differences of ``ssdkit calibrate`` need); ``repeats`` must be 1.
    """
    pd = _need("pandas")
    _need("pyarrow")
    pts = points(grid, mode=mode, samples=samples, workloads=workloads, repeats=repeats, seed=seed, same_seed=same_seed)
    keys = list(dict(grid or {}))
    fixed = dict(overrides or {})
    if output is not None:
        outputs.check(
            [("sweep table", output)],
            lambda: api.config_inputs(config, fixed),
            stream=False,
            why=" (its part files go beside it, in <output>.parts/)",
        )
    n = workers or os.cpu_count() or 1
    if n < 1:
        raise ConfigError(f"sweep `workers` must be >= 1, got {workers}")
    devs = devices(config, fixed, pts, seed)
    idents = identities(config, fixed, pts, devs)
    parts: Path | None = None
    done: dict[str, Any] = {}
    if output is not None:
        parts = Path(f"{os.fspath(output)}.parts")
        parts.mkdir(parents=True, exist_ok=True)
        done = _resume(pd, parts, pts, idents)
    todo = [p for p in pts if p.id not in done]
    groups: dict[str, list[Point]] = {}
    for p in todo:
        if p.id in devs:
            groups.setdefault(devs[p.id].id, []).append(p)
    shared = {d: ps for d, ps in groups.items() if len(ps) >= 2} if share_snapshots else {}
    sdir, own_dir = None, False
    if shared:
        if snapshot_dir is not None:
            sdir = Path(snapshot_dir)
        elif output is not None:
            sdir, own_dir = Path(f"{os.fspath(output)}.snapshots"), True
        else:
            sdir, own_dir = Path(tempfile.mkdtemp(prefix="ssdkit-sweep-")), True
        sdir.mkdir(parents=True, exist_ok=True)
    plan = _Plan(config, fixed, keys, devs, shared, sdir, idents)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pts), initial=len(pts) - len(todo), unit="point", desc="sweep")

    left = {d: len(ps) for d, ps in shared.items()}

    def finish(p: Point, rows: list[dict]) -> None:
        frame = pd.DataFrame(rows)
        if parts is not None:
            part = _part_path(parts, p, idents[p.id])
            tmp = part.with_suffix(".tmp")
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, part)  # a part file is whole or absent
        done[p.id] = frame
        if bar is not None:
            bar.update(1)
        d = devs[p.id].id if p.id in devs else None
        if d in left:
            left[d] -= 1
            if left[d] == 0 and own_dir:
                # A snapshot is as large as the device's tables (276 MB for mqsim-paper): one
                # whose points are all done goes at once.
                Path(plan.snapshot_path(d)).unlink(missing_ok=True)

    completed = False
    try:
        if executor is not None:
            _on_dask(executor, plan, todo, finish)
        elif n == 1 or len(todo) <= 1:
            for p in todo:
                dev = devs.get(p.id)
                if dev is not None and dev.id in shared and shared[dev.id][0] is p:
                    snap = _make_snapshot(*plan.snapshot_args(dev.id))
                    plan.made[dev.id] = snap
                finish(p, _run_point(*plan.point_args(p, plan.made)))
        else:
            _on_pool(min(n, len(todo)), plan, todo, finish)
        completed = True
    finally:
        if bar is not None:
            bar.close()
        if own_dir and (completed or output is None):
            shutil.rmtree(sdir, ignore_errors=True)
    table = pd.concat([done[p.id] for p in pts], ignore_index=True)
    if output is not None:
        with outputs.writing(output, "sweep table") as f:
            table.to_parquet(f, index=False)
        shutil.rmtree(parts, ignore_errors=True)  # the table holds them; a rerun starts afresh
    return table


@dataclass
class _Plan:
    """What every task of a sweep needs: the arguments of its snapshot and point tasks."""

    config: Any
    fixed: Mapping[str, Any]
    keys: Sequence[str]
    devs: Mapping[str, Device]
    #: Device id -> its points, for the devices whose snapshot is shared.
    shared: Mapping[str, list[Point]]
    sdir: Path | None
    #: Point id -> its identity (``identities``).
    idents: Mapping[str, str] = field(default_factory=dict)
    #: Device id -> its snapshot's path once made (None if making it failed).
    made: dict[str, str | None] = field(default_factory=dict)

    def snapshot_path(self, d: str) -> str:
        return str(self.sdir / f"{d}.snap")

    def snapshot_args(self, d: str) -> tuple:
        first = self.shared[d][0]
        return (self.config, self.fixed, first, self.devs[first.id], self.snapshot_path(d))

    def point_args(self, p: Point, snaps: Mapping[str, Any]) -> tuple:
        dev = self.devs.get(p.id)
        snap = snaps.get(dev.id) if dev is not None else None
        return (self.config, self.fixed, p, dev, snap, self.keys)


def _on_pool(n: int, plan: _Plan, todo: list[Point], finish) -> None:
    # The platform's default start method: fork on Linux, so a script need not guard its sweep
    # with `if __name__ == "__main__":` (spawn, the default on macOS and Windows, needs it;
    # docs/sweeps.md). The pool runs tasks in submission order. At most `n` shared devices are
    # open at once (their snapshot made or being made, some of their points to run), so that
    # at most `n` snapshots are on disk; the next opens when one's last point ends.
    with cf.ProcessPoolExecutor(max_workers=n) as pool:
        pending: dict[cf.Future, tuple[str, Any]] = {}
        closed = list(plan.shared)[::-1]
        left = {d: len(ps) for d, ps in plan.shared.items()}

        def open_next() -> None:
            if closed:
                d = closed.pop()
                pending[pool.submit(_make_snapshot, *plan.snapshot_args(d))] = ("snapshot", d)

        for _ in range(n):
            open_next()
        for p in todo:
            dev = plan.devs.get(p.id)
            if dev is None or dev.id not in plan.shared:
                pending[pool.submit(_run_point, *plan.point_args(p, {}))] = ("point", p)
        while pending:
            ready, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in ready:
                kind, what = pending.pop(fut)
                if kind == "snapshot":
                    plan.made[what] = fut.result()
                    for p in plan.shared[what]:
                        pending[pool.submit(_run_point, *plan.point_args(p, plan.made))] = ("point", p)
                    continue
                finish(what, fut.result())
                dev = plan.devs.get(what.id)
                if dev is not None and dev.id in left:
                    left[dev.id] -= 1
                    if left[dev.id] == 0:
                        open_next()


def _on_dask(executor: Any, plan: _Plan, todo: list[Point], finish) -> None:
    distributed = _need("distributed", "dask")
    if isinstance(executor, str):
        client, own = distributed.Client(executor), True
    elif isinstance(executor, distributed.Client):
        client, own = executor, False
    else:
        raise TypeError(
            f"sweep `executor` must be a dask.distributed.Client or a scheduler address, not {type(executor).__name__}"
        )
    try:
        # Keys name the configuration too: a client remembers results by key across sweeps
        # (a point's by its identity, which covers the configuration's contents).
        stem = _digest({"config": plan.config, "overrides": plan.fixed})[:12]
        # A point task takes its device's snapshot task as an argument: Dask runs it after.
        snaps = {
            d: client.submit(_make_snapshot, *plan.snapshot_args(d), key=f"ssdkit-snap-{stem}-{d}", pure=False)
            for d in plan.shared
        }
        futures = {}
        for p in todo:
            f = client.submit(
                _run_point, *plan.point_args(p, snaps), key=f"ssdkit-sweep-{stem}-{plan.idents[p.id]}", pure=False
            )
            futures[f.key] = (f, p)
        for f in distributed.as_completed([f for f, _ in futures.values()]):
            finish(futures[f.key][1], f.result())
            f.release()
        for f in snaps.values():
            f.release()
    finally:
        if own:
            client.close()


def load_sweep_file(path: str | os.PathLike) -> dict[str, Any]:
    """Reads a sweep description (TOML): ``config`` (preset name, or a TOML file relative to
    the sweep file), ``mode``, ``samples``, ``repeats``, ``seed``, ``share_snapshots``,
    ``snapshot_dir`` (relative to the sweep file), ``[set]`` (overrides for every point),
    ``[grid]`` (key -> list of values) and ``[[workload]]`` tables."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such sweep file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: invalid TOML: {e}") from None
    allowed = {
        "config",
        "mode",
        "samples",
        "repeats",
        "seed",
        "share_snapshots",
        "snapshot_dir",
        "set",
        "grid",
        "workload",
    }
    extra = sorted(set(doc) - allowed)
    if extra:
        raise ConfigError(f"{p}: unknown key `{extra[0]}`; allowed: {', '.join(sorted(allowed))}")
    if "config" not in doc:
        raise ConfigError(f"{p}: missing key `config` (a preset name or a TOML file)")
    kinds = {
        "config": (str, "a string"),
        "mode": (str, "a string"),
        "samples": (int, "an integer"),
        "repeats": (int, "an integer"),
        "seed": (int, "an integer"),
        "share_snapshots": (bool, "true or false"),
        "snapshot_dir": (str, "a string"),
        "set": (dict, "a table"),
        "grid": (dict, "a table"),
        "workload": (list, "an array of tables ([[workload]])"),
    }
    for k, v in doc.items():
        want, name = kinds[k]
        if (
            not isinstance(v, want)
            or (isinstance(v, bool) and want is not bool)
            or (k == "workload" and not all(isinstance(w, dict) for w in v))
        ):
            raise ConfigError(f"{p}: key `{k}` must be {name}, got {v!r}")
    config = doc["config"]
    local = p.parent / config
    if local.is_file():
        config = str(local)
    return {
        "config": config,
        "grid": doc.get("grid", {}),
        "mode": doc.get("mode", "cartesian"),
        "samples": doc.get("samples"),
        "repeats": doc.get("repeats", 1),
        "seed": doc.get("seed", 0),
        "overrides": doc.get("set", {}),
        "workloads": doc.get("workload"),
        "share_snapshots": doc.get("share_snapshots", True),
        "snapshot_dir": None if "snapshot_dir" not in doc else str(p.parent / doc["snapshot_dir"]),
    }
