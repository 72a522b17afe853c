"""Plots of a result and of a sweep (matplotlib, a dependency of every install).

Every function returns a ``matplotlib.figure.Figure`` (made without pyplot, so no window or
global state is involved) whose lines and bars hold the result's own numbers: a test can read
them back. ``Result.plot.<kind>()`` calls them on a result; ``ssdkit plot result.json --kind
<kind> -o file.png`` from the shell.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ._dotted import _flatten, _is_flow_name
from ._native import ConfigError

KINDS = ("cdf", "percentiles", "timeseries", "device", "erase_counts", "breakdown", "fairness")
_PCTS = ("p50", "p90", "p99", "p99_9", "p99_99")


def _figure(rows: int = 1, cols: int = 1, size: tuple[float, float] = (7.0, 4.5)):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "ssdkit plots need matplotlib, a dependency of ssdkit missing here: `pip install matplotlib`"
        ) from None
    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def _raw(result: Any) -> Mapping[str, Any]:
    if isinstance(result, Mapping):
        return result
    raw = getattr(result, "raw", None)
    if raw is None:
        raise TypeError(f"expected an ssdkit Result or its JSON document, not {type(result).__name__}")
    return raw


def _flows(raw, flow):
    flows = raw["flows"]
    if flow is None:
        return flows
    return [f for f in flows if f["index"] == flow or f["name"] == flow]


def _ops(stats, op):
    return [o for o in (("read", "write", "trim") if op is None else (op,)) if stats[o]["count"] > 0]


def cdf_points(hist: Mapping[str, list]) -> tuple[list[float], list[float]]:
    """A latency histogram's CDF: each bucket's upper bound in microseconds and the fraction of
    requests at or below it."""
    total = sum(hist["count"])
    xs, ys, acc = [], [], 0
    for up, n in zip(hist["upper_ps"], hist["count"]):
        acc += n
        xs.append(up / 1e6)
        ys.append(acc / total)
    return xs, ys


def cdf(result: Any, *, flow: int | str | None = None, op: str | None = None, tail: bool = False):
    """Latency CDF per flow and operation, log latency axis; ``tail=True`` plots 1 - CDF on a
    log axis instead (the tail percentiles stand apart)."""
    raw = _raw(result)
    fig, ((ax,),) = _figure()
    for f in _flows(raw, flow):
        for o in _ops(f["stats"], op):
            xs, ys = cdf_points(f["stats"][o]["latency_histogram"])
            if tail:
                ys = [max(1.0 - y, 1e-12) for y in ys]
            ax.step(xs, ys, where="post", label=f"{f['name']} {o}")
    ax.set_xscale("log")
    if tail:
        ax.set_yscale("log")
    ax.set_xlabel("latency (us)")
    ax.set_ylabel("1 - CDF" if tail else "CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("Latency distribution")
    return fig


def percentiles(result: Any, *, flow: int | str | None = None, op: str | None = None):
    """Latency percentiles (p50 to p99.99) per flow and operation, as grouped bars (log axis)."""
    raw = _raw(result)
    fig, ((ax,),) = _figure()
    groups = [(f, o) for f in _flows(raw, flow) for o in _ops(f["stats"], op)]
    width = 0.8 / max(len(groups), 1)
    for i, (f, o) in enumerate(groups):
        lat = f["stats"][o]["latency_us"]
        xs = [k + i * width for k in range(len(_PCTS))]
        ax.bar(xs, [lat[p] for p in _PCTS], width=width, label=f"{f['name']} {o}")
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(_PCTS))], [p.replace("_", ".") for p in _PCTS])
    ax.set_yscale("log")
    ax.set_ylabel("latency (us)")
    ax.legend()
    ax.set_title("Latency percentiles")
    return fig


def _series(raw):
    ts = raw.get("timeseries")
    if not ts:
        raise ValueError("the result has no time series: run with `run.timeseries_window_ms` > 0 (`--timeseries MS`)")
    starts = [s / 1e9 for s in ts["start_ps"]]  # ms
    return ts, starts


def timeseries(result: Any):
    """Throughput (IOPS) and mean latency per flow, window by window."""
    raw = _raw(result)
    ts, starts = _series(raw)
    fig, ((a1,), (a2,)) = _figure(2, 1, (7.0, 6.0))
    for f, s in zip(raw["flows"], ts["flows"]):
        a1.plot(starts, s["iops"], drawstyle="steps-post", label=f["name"])
        a2.plot(
            starts,
            [float("nan") if v is None else v for v in s["mean_latency_us"]],
            drawstyle="steps-post",
            label=f["name"],
        )
    a1.set_ylabel("IOPS")
    a2.set_ylabel("mean latency (us)")
    a2.set_xlabel("simulated time (ms)")
    a1.legend()
    a1.set_title("Throughput and latency per window")
    return fig


def device(result: Any):
    """Write amplification (per window) and free blocks over time. A run without user writes
    (read-only) has no write amplification in any window: its panel is left out and the title
    says so."""
    raw = _raw(result)
    ts, starts = _series(raw)
    d = ts["device"]
    wa = [float("nan") if v is None else v for v in d["write_amplification"]]
    if all(v is None for v in d["write_amplification"]):
        fig, ((a2,),) = _figure(1, 1, (7.0, 3.5))
        a2.set_title("Device over time (no user writes: no write amplification to draw)")
    else:
        fig, ((a1,), (a2,)) = _figure(2, 1, (7.0, 6.0))
        a1.plot(starts, wa, drawstyle="steps-post")
        a1.set_ylabel("write amplification")
        a1.set_title("Device over time")
    a2.plot(starts, d["free_blocks"], drawstyle="steps-post")
    a2.set_ylabel("free blocks")
    a2.set_xlabel("simulated time (ms)")
    return fig


def erase_counts(result: Any):
    """Histogram of the blocks' erase counts."""
    h = _raw(result)["device"]["erase_counts"]["histogram"]
    fig, ((ax,),) = _figure()
    ax.bar(h["bin_start"], h["count"], width=h["bin_width"], align="edge")
    ax.set_xlabel("erase count")
    ax.set_ylabel("blocks")
    ax.set_title("Erase counts")
    return fig


def breakdown(result: Any, *, op: str | None = None):
    """Mean time per step of the request path (stacked bars per flow and operation)."""
    raw = _raw(result)
    groups = []
    for f in raw["flows"]:
        b = f.get("latency_breakdown")
        if not b:
            continue
        for o, steps in b.items():
            if (op is None or o == op) and steps.get("count", 0) > 0:
                groups.append((f"{f['name']} {o}", {k: v["mean"] for k, v in steps.items() if isinstance(v, dict)}))
    if not groups:
        raise ValueError("the result has no latency breakdown: run with `run.latency_breakdown = true`")
    steps = [k for k in groups[0][1] if any(g[1].get(k, 0) > 0 for g in groups)]
    fig, ((ax,),) = _figure(size=(9.0, 4.5))
    bottom = [0.0] * len(groups)
    for s, colour in zip(steps, _distinct_colours(len(steps))):
        vals = [g[1].get(s, 0.0) for g in groups]
        ax.bar([g[0] for g in groups], vals, bottom=bottom, label=s, color=colour)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("mean time (us)")
    # Outside the axes, in the order of the stack (top step first): the stacks fill their
    # axes to the top, so a legend inside would hide some.
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles[::-1], labels[::-1], loc="outside right upper", fontsize="small")
    ax.set_title("Where the time goes")
    return fig


def _distinct_colours(n: int) -> list[Any]:
    """``n`` colours, no two alike: matplotlib's 10-colour cycle repeats after 10, and a
    request's path has up to 16 steps. tab20's strong shades first, then its light ones."""
    from matplotlib import colormaps

    if n <= 20:
        tab = colormaps["tab20"].colors
        return list(tab[0::2] + tab[1::2])[:n]
    return [colormaps["turbo"](i / (n - 1)) for i in range(n)]


def fairness(result: Any):
    """Each flow's slowdown (RT shared / RT alone), with F and WS in the title."""
    fa = _raw(result).get("fairness")
    if not fa:
        raise ValueError("the result has no fairness figures: run with `--fairness` (`fairness=True`)")
    fig, ((ax,),) = _figure()
    ax.bar([f["name"] for f in fa["flows"]], [f["slowdown"] for f in fa["flows"]])
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("slowdown")
    ax.set_title(f"Slowdown per flow: F = {fa['fairness']:.3f}, WS = {fa['weighted_speedup']:.3f}")
    return fig


def _select(table, op, flow):
    t = table[table["error"].isna()] if "error" in table else table
    if op is not None:
        t = t[t["op"] == op]
    if flow is not None:
        t = t[t["flow"] == flow]
    return t


#: Columns of a sweep's table that are not swept keys although their names have a dot.
_NOT_KEYS = {"result_json"}


def _lines_of(t, fixed: list[str]) -> list[str]:
    """The columns that tell a sweep's series apart, beside those in ``fixed``: every other
    swept key (dotted column) with more than one value, the workload and the flow where
    there are several. Only repeats are left to average."""
    keys = [c for c in t.columns if "." in c and c not in _NOT_KEYS and c not in fixed]
    split = [k for k in keys if t[k].nunique(dropna=False) > 1]
    for c in ("workload", "flow"):
        if c in t and c not in fixed and t[c].nunique() > 1:
            split.append(c)
    return split


def _workload_names(t) -> dict[Any, str]:
    """Workload index -> what sets it apart: the configuration keys whose values differ
    between the workloads (read from the points' results, the swept keys and seeds left out),
    e.g. ``flow.0.read_fraction=0.7``; ``workload N`` where the table cannot tell."""
    if "workload" not in t or "result_json" not in t:
        return {}
    import json

    first = t.drop_duplicates("workload")
    flat = {w: _flatten(json.loads(s)["config"]) for w, s in zip(first["workload"], first["result_json"])}
    swept = {c for c in t.columns if "." in c}
    skip = swept | {"run.seed", "precondition.seed"}
    keys = sorted({k for f in flat.values() for k in f if k not in skip and not _is_flow_name(k)})
    differ = [k for k in keys if len({repr(f.get(k)) for f in flat.values()}) > 1]
    return {w: ", ".join(f"{k}={f.get(k)}" for k in differ) if differ else f"workload {w}" for w, f in flat.items()}


def _label(t, cols: list[str], values: tuple, workloads: Mapping[Any, str]) -> str:
    parts = []
    for c, v in zip(cols, values):
        if c == "workload":
            parts.append(workloads.get(v, f"workload {v}"))
        elif c == "flow":
            names = t.loc[t["flow"] == v, "scope"] if "scope" in t else []
            parts.append(f"flow {v}" + (f" ({names.iloc[0]})" if len(names) else ""))
        else:
            parts.append(f"{c}={v}")
    return ", ".join(parts)


def _series_of(t, cols: list[str]):
    """(values, rows) for each series: one per combination of ``cols`` in the table."""
    if not cols:
        return [((), t)]
    return [(k if isinstance(k, tuple) else (k,), part) for k, part in t.groupby(cols, sort=True, dropna=False)]


def sweep_line(table, x: str, y: str, *, group: str | None = None, op: str | None = "all", flow: int | None = None):
    """A metric ``y`` of a sweep's table along a swept key ``x``: one line per value of
    ``group``, and per workload, per flow (where the table has several; ``flow`` picks one)
    and per value of every other swept key, so that a line averages repeats only, never
    different workloads or flows. The legend names each line."""
    t = _select(table, op, flow)
    fixed = [x] + ([group] if group is not None else [])
    cols = ([group] if group is not None else []) + _lines_of(t, fixed)
    names = _workload_names(t) if "workload" in cols else {}
    series = _series_of(t, cols)
    fig, ((ax,),) = _figure(size=(8.0, 4.5 + 0.2 * len(series) * bool(cols)))
    for values, part in series:
        m = part.groupby(x)[y].mean().sort_index()
        ax.plot(m.index, m.values, marker="o", label=_label(t, cols, values, names) if cols else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if cols:
        # Below the axes: with a line per workload and flow, a legend inside hides some.
        fig.legend(loc="outside lower center", fontsize="small")
    repeats = "repeat" in t and t["repeat"].nunique() > 1
    ax.set_title(f"{y} along {x}" + (" (mean of repeats)" if repeats else ""))
    return fig


def sweep_heatmap(table, x: str, y: str, value: str, *, op: str | None = "all", flow: int | None = None):
    """A metric over two swept keys, one cell per pair (repeats averaged): one panel per
    workload, per flow (where the table has several; ``flow`` picks one) and per value of
    every other swept key, never an average across them."""
    t = _select(table, op, flow)
    cols = _lines_of(t, [x, y])
    names = _workload_names(t) if "workload" in cols else {}
    series = _series_of(t, cols)
    fig, axes = _figure(len(series), 1, (7.0, 0.5 + 3.5 * len(series)))
    fig.suptitle(f"{value} over {x} and {y}")
    for (values, part), (ax,) in zip(series, axes):
        grid = part.pivot_table(index=y, columns=x, values=value, aggfunc="mean").sort_index().sort_index(axis=1)
        im = ax.imshow(grid.values, origin="lower", aspect="auto")
        ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns])
        ax.set_yticks(range(len(grid.index)), [str(i) for i in grid.index])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        fig.colorbar(im, ax=ax, label=value)
        if cols:
            ax.set_title(_label(t, cols, values, names), fontsize="medium")
    return fig


class Plotter:
    """``Result.plot``: the plots of one result."""

    def __init__(self, result: Any) -> None:
        self._r = result

    def cdf(self, **kw):
        return cdf(self._r, **kw)

    def percentiles(self, **kw):
        return percentiles(self._r, **kw)

    def timeseries(self):
        return timeseries(self._r)

    def device(self):
        return device(self._r)

    def erase_counts(self):
        return erase_counts(self._r)

    def breakdown(self, **kw):
        return breakdown(self._r, **kw)

    def fairness(self):
        return fairness(self._r)


def plot_file(path: str, kind: str) -> Any:
    """The figure of ``kind`` for the result JSON at ``path``."""
    if kind not in KINDS:
        raise ValueError(f"plot kind `{kind}` is not one of {', '.join(KINDS)}")
    import json

    with open(path) as f:
        raw = json.load(f)
    return globals()[kind](raw)


def image_format(path: str, default: str | None = None) -> str:
    """The image format ``path``'s suffix names (``"png"`` for ``.png``), checked before
    drawing: an unknown suffix, or a missing one without a ``default``, raises
    :class:`ssdkit.ConfigError` naming the suffixes matplotlib can write."""
    from matplotlib.backend_bases import FigureCanvasBase

    allowed = sorted(FigureCanvasBase.get_supported_filetypes())
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if not suffix and default is not None:
        return default
    if suffix[1:] not in allowed:
        said = f"unknown suffix `{suffix}`" if suffix else "no suffix"
        raise ConfigError(f"image `{path}`: {said}; allowed: {', '.join('.' + a for a in allowed)}")
    return suffix[1:]
