"""Plots hold the result's own numbers (read back from the figures), and `ssdkit plot` writes
an image."""

import json
import subprocess
import sys

import pytest
import ssdkit
from ssdkit import plot

pytest.importorskip("matplotlib", reason="matplotlib is not installed (extra ssdkit[plot])")

from conftest import TINY

RUN = {
    **TINY,
    "flow.0.requests": 3000,
    "flow.0.read_fraction": 0.6,
    "flow.1.requests": 1000,
    "flow.1.read_fraction": 1.0,
    "flow.1.queue_depth": 2,
    "run.timeseries_window_ms": 2,
    "run.latency_breakdown": True,
}


@pytest.fixture(scope="module")
def result():
    return ssdkit.run("mqsim-paper", overrides=RUN)


def test_cdf_ends_at_one_and_crosses_each_percentile_in_its_bucket(result):
    fig = result.plot.cdf()
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3  # flow 0 read and write, flow 1 read
    assert fig.axes[0].get_xscale() == "log"
    for line, (f, op) in zip(lines, [(0, "read"), (0, "write"), (1, "read")]):
        xs, ys = line.get_xdata(), line.get_ydata()
        assert ys[-1] == 1.0 and all(a <= b for a, b in zip(ys, ys[1:]))
        stats = result.raw["flows"][f]["stats"][op]
        hist = stats["latency_histogram"]
        for p, q in (("p50", 0.5), ("p99", 0.99)):
            i = next(k for k, y in enumerate(ys) if y >= q)
            lower = hist["lower_ps"][i] / 1e6
            assert lower <= stats["latency_us"][p] <= xs[i], (op, p)
    tail = result.plot.cdf(tail=True, flow=1)
    assert len(tail.axes[0].get_lines()) == 1 and tail.axes[0].get_yscale() == "log"


def test_bars_and_series_are_the_results_numbers(result):
    raw = result.raw
    bars = result.plot.percentiles().axes[0].patches
    want = [
        raw["flows"][f]["stats"][o]["latency_us"][p]
        for f, o in [(0, "read"), (0, "write"), (1, "read")]
        for p in plot._PCTS
    ]
    assert [b.get_height() for b in bars] == want
    ts = result.plot.timeseries()
    assert list(ts.axes[0].get_lines()[1].get_ydata()) == raw["timeseries"]["flows"][1]["iops"]
    dev = result.plot.device()
    assert list(dev.axes[1].get_lines()[0].get_ydata()) == raw["timeseries"]["device"]["free_blocks"]
    ec = result.plot.erase_counts().axes[0].patches
    assert [b.get_height() for b in ec] == raw["device"]["erase_counts"]["histogram"]["count"]
    # The breakdown's stacks add up to each group's mean latency (its parts sum to the total).
    bd = result.plot.breakdown().axes[0]
    tops = {}
    for b in bd.patches:
        x = round(b.get_x(), 6)
        tops[x] = max(tops.get(x, 0.0), b.get_y() + b.get_height())
    means = [raw["flows"][f]["stats"][o]["latency_us"]["mean"] for f, o in [(0, "read"), (0, "write"), (1, "read")]]
    for top, mean in zip([tops[x] for x in sorted(tops)], means):
        assert top == pytest.approx(mean, rel=1e-9)


def test_fairness_and_missing_parts(result, tmp_path):
    two = {**TINY, "flow.0.requests": 600, "flow.1.requests": 600, "flow.1.queue_depth": 8}
    r = ssdkit.run("mqsim-paper", overrides=two, fairness=True)
    bars = r.plot.fairness().axes[0].patches
    assert [b.get_height() for b in bars] == [f.slowdown for f in r.fairness.flows]
    plain = ssdkit.run("mqsim-paper", overrides={**TINY, "flow.0.requests": 100})
    with pytest.raises(ValueError, match="timeseries_window_ms"):
        plain.plot.timeseries()
    with pytest.raises(ValueError, match="latency_breakdown"):
        plain.plot.breakdown()
    with pytest.raises(ValueError, match="--fairness"):
        plain.plot.fairness()


def test_sweep_plots_hold_the_tables_means():
    pytest.importorskip("pyarrow")
    grid = {"flow.0.queue_depth": [1, 4], "flow.0.read_fraction": [1.0, 0.5]}
    t = ssdkit.sweep(
        "mqsim-paper", grid, overrides={**TINY, "flow.0.requests": 300}, repeats=2, workers=1, progress=False
    )
    fig = plot.sweep_line(t, "flow.0.queue_depth", "iops", group="flow.0.read_fraction")
    lines = fig.axes[0].get_lines()
    sel = t[t.op == "all"]
    for line, rf in zip(lines, [0.5, 1.0]):
        want = sel[sel["flow.0.read_fraction"] == rf].groupby("flow.0.queue_depth")["iops"].mean()
        assert list(line.get_ydata()) == list(want.values)
    hm = plot.sweep_heatmap(t, "flow.0.queue_depth", "flow.0.read_fraction", "latency_p99_us")
    img = hm.axes[0].get_images()[0].get_array()
    want = sel.pivot_table(index="flow.0.read_fraction", columns="flow.0.queue_depth", values="latency_p99_us")
    assert img.tolist() == want.values.tolist()


def test_cli_plot_writes_an_image(result, tmp_path):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(result.raw))
    png = tmp_path / "cdf.png"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "plot", str(res), "--kind", "cdf", "-o", str(png)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "plot", str(res), "--kind", "pie", "-o", str(png)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode != 0 and "invalid choice: 'pie'" in p.stderr
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(ssdkit.run("mqsim-paper", overrides={**TINY, "flow.0.requests": 100}).raw))
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "plot", str(plain), "--kind", "fairness", "-o", str(png)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode != 0 and "--fairness" in p.stderr and "Traceback" not in p.stderr


def _drawn(fig):
    """The figure laid out and drawn (off screen), so that its artists have their extents."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig.canvas.get_renderer()


def _legend_clear_of_bars(fig):
    """The figure's one legend, after checking that it covers none of the bars."""
    renderer = _drawn(fig)
    ax = fig.axes[0]
    legends = fig.legends + ([ax.get_legend()] if ax.get_legend() else [])
    assert len(legends) == 1
    box = legends[0].get_window_extent(renderer)
    bars = [b for b in ax.patches if b.get_height() > 0]
    assert bars
    for b in bars:
        bb = b.get_window_extent(renderer)
        overlap_w = min(box.x1, bb.x1) - max(box.x0, bb.x0)
        overlap_h = min(box.y1, bb.y1) - max(box.y0, bb.y0)
        assert overlap_w <= 0 or overlap_h <= 0, (b.get_label(), box, bb)
    return legends[0]


def test_breakdown_legend_is_clear_of_the_bars_and_each_step_has_its_colour(result):
    # Three stacks, the tallest reaching the top of the axes (a legend inside would cover it).
    _legend_clear_of_bars(result.plot.breakdown())
    # A data cache and a mapping cache add their steps: more than matplotlib's 10 colours.
    over = {"cache.mode": "read_write", "ftl.cmt.mode": "shared", "flow.0.read_fraction": 0.6}
    r = ssdkit.run("mqsim-paper", overrides={**TINY, **over, "flow.0.requests": 2000, "run.latency_breakdown": True})
    fig = r.plot.breakdown()
    legend = _legend_clear_of_bars(fig)
    ax = fig.axes[0]
    colours = {}
    for c in ax.containers:
        colours.setdefault(tuple(c.patches[0].get_facecolor()), []).append(c.get_label())
    assert len(ax.containers) > 10
    assert all(len(steps) == 1 for steps in colours.values()), colours
    assert sorted(t.get_text() for t in legend.get_texts()) == sorted(c.get_label() for c in ax.containers)


def test_device_plot_leaves_out_write_amplification_without_writes():
    reads = {**TINY, "flow.0.requests": 1000, "flow.0.read_fraction": 1.0, "run.timeseries_window_ms": 1}
    r = ssdkit.run("mqsim-paper", overrides=reads)
    assert all(v is None for v in r.raw["timeseries"]["device"]["write_amplification"])
    fig = r.plot.device()
    assert len(fig.axes) == 1
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == r.raw["timeseries"]["device"]["free_blocks"]
    assert "no user writes" in fig.axes[0].get_title()


@pytest.fixture(scope="module")
def two_workloads():
    """A sweep over a read-only and a 70/30 workload, with a second (read-only) flow."""
    pytest.importorskip("pyarrow")
    grid = {"flow.0.queue_depth": [1, 8], "flow.0.request_bytes": [4096, 16384]}
    fixed = {**TINY, "flow.0.requests": 300, "flow.1.requests": 200, "flow.1.read_fraction": 1.0}
    wl = [{"flow.0.read_fraction": 1.0}, {"flow.0.read_fraction": 0.7}]
    return ssdkit.sweep("mqsim-paper", grid, overrides=fixed, workloads=wl, repeats=2, workers=2, progress=False)


def test_sweep_lines_are_per_workload_and_flow_never_averaged_across(two_workloads):
    t = two_workloads
    sel = t[t.op == "all"]
    fig = plot.sweep_line(t, "flow.0.queue_depth", "iops", group="flow.0.request_bytes")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2 * 2 * 2  # request sizes x workloads x flows
    labels = [line.get_label() for line in lines]
    assert len(set(labels)) == len(lines)
    for line in lines:
        label = line.get_label()
        want = sel[sel["flow.0.request_bytes"] == (16384 if "16384" in label else 4096)]
        want = want[want.workload == (1 if "read_fraction=0.7" in label else 0)]
        want = want[want.flow == (1 if "flow 1" in label else 0)]
        assert want["repeat"].nunique() == 2 and want["workload"].nunique() == 1
        means = want.groupby("flow.0.queue_depth")["iops"].mean()
        assert list(line.get_xdata()) == list(means.index) and list(line.get_ydata()) == list(means.values), label
    # Read-only and 70/30 lines differ by orders of magnitude: no line lies between them.
    flow0 = [line for line in lines if "flow 0" in line.get_label()]
    assert {("read_fraction=0.7" in line.get_label()) for line in flow0} == {True, False}
    hm = plot.sweep_heatmap(t, "flow.0.queue_depth", "flow.0.request_bytes", "latency_p99_us")
    panels = [ax for ax in hm.axes if ax.get_images()]
    assert len(panels) == 4  # workloads x flows
    for ax in panels:
        title = ax.get_title()
        part = sel[
            (sel.workload == (1 if "read_fraction=0.7" in title else 0)) & (sel.flow == (1 if "flow 1" in title else 0))
        ]
        want = part.pivot_table(index="flow.0.request_bytes", columns="flow.0.queue_depth", values="latency_p99_us")
        assert ax.get_images()[0].get_array().tolist() == want.values.tolist(), title


def test_sweep_report_charts_are_per_workload(two_workloads, monkeypatch):
    from ssdkit import report

    figs = []
    monkeypatch.setattr(report, "_img", lambda fig, alt: figs.append((alt, fig)) or "")
    report.sweep_html(two_workloads)
    lines = [(alt, f) for alt, f in figs if " along " in alt]
    assert len(lines) == 2 * 2  # two keys x (throughput, p99)
    for alt, f in lines:
        assert len(f.axes[0].get_lines()) == 8, alt
    heat = [f for alt, f in figs if alt.startswith("p99 over")]
    assert len(heat) == 1 and len([ax for ax in heat[0].axes if ax.get_images()]) == 4
