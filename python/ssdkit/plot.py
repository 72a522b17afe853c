"""Plots of a result and of a sweep (matplotlib, a dependency of every install).

Every function returns a ``matplotlib.figure.Figure`` (made without pyplot, so no window or
global state is involved) whose lines and bars hold the result's own numbers: a test can read
them back. ``Result.plot.<kind>()`` calls them on a result; ``ssdkit plot result.json --kind
<kind> -o file.png`` from the shell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

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
    """Write amplification (per window) and free blocks over time."""
    raw = _raw(result)
    ts, starts = _series(raw)
    d = ts["device"]
    fig, ((a1,), (a2,)) = _figure(2, 1, (7.0, 6.0))
    a1.plot(starts, [float("nan") if v is None else v for v in d["write_amplification"]], drawstyle="steps-post")
    a2.plot(starts, d["free_blocks"], drawstyle="steps-post")
    a1.set_ylabel("write amplification")
    a2.set_ylabel("free blocks")
    a2.set_xlabel("simulated time (ms)")
    a1.set_title("Device over time")
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
    fig, ((ax,),) = _figure()
    bottom = [0.0] * len(groups)
    for s in steps:
        vals = [g[1].get(s, 0.0) for g in groups]
        ax.bar([g[0] for g in groups], vals, bottom=bottom, label=s)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("mean time (us)")
    ax.legend(fontsize="small", ncol=2)
    ax.set_title("Where the time goes")
    return fig


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


def sweep_line(table, x: str, y: str, *, group: str | None = None, op: str | None = "all", flow: int | None = 0):
    """A metric ``y`` of a sweep's table along a swept key ``x``, one line per value of
    ``group`` (repeats averaged)."""
    t = _select(table, op, flow)
    fig, ((ax,),) = _figure()
    keys = [None] if group is None else sorted(t[group].dropna().unique())
    for g in keys:
        part = t if g is None else t[t[group] == g]
        m = part.groupby(x)[y].mean().sort_index()
        ax.plot(m.index, m.values, marker="o", label=None if g is None else f"{group} = {g}")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if group is not None:
        ax.legend()
    ax.set_title(f"{y} along {x}")
    return fig


def sweep_heatmap(table, x: str, y: str, value: str, *, op: str | None = "all", flow: int | None = 0):
    """A metric over two swept keys (repeats averaged), one cell per pair."""
    t = _select(table, op, flow)
    grid = t.pivot_table(index=y, columns=x, values=value, aggfunc="mean").sort_index().sort_index(axis=1)
    fig, ((ax,),) = _figure()
    im = ax.imshow(grid.values, origin="lower", aspect="auto")
    ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns])
    ax.set_yticks(range(len(grid.index)), [str(i) for i in grid.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=value)
    ax.set_title(f"{value} over {x} and {y}")
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
    with open(path) as f:
        raw = json.load(f)
    return globals()[kind](raw)
