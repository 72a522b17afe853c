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
