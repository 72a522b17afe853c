"""``ssdkit report``: one self-contained HTML file (styles inline, images embedded as PNG data
URIs) for a result or a sweep's table, readable in any browser with nothing else installed.

A result's report: the run's figures, a summary table per flow and operation, the plots of
``ssdkit.plot`` that the result has data for, and the resolved configuration. A sweep's
report: the points' table and, for each swept key, the throughput and the p99 latency along
it (a line per value of a second key when there is one, and per workload and flow: never an
average across them), and heatmaps over the first two keys.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Mapping
from typing import Any

from . import outputs, plot

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
img { max-width: 100%; display: block; margin: 1em 0; }
pre { background: #f7f7f7; padding: 1em; overflow-x: auto; font-size: 0.85em; }
"""


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _img(fig, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="{_png(fig)}">'


def _table(header: list[str], rows: list[list[Any]], left: int = 0, table_id: str | None = None) -> str:
    def cell(v: Any, i: int, tag: str) -> str:
        cls = ' class="l"' if i < left else ""
        if isinstance(v, float):
            v = f"{v:,.3f}" if abs(v) < 1e6 else f"{v:,.0f}"
        elif isinstance(v, int):
            v = f"{v:,}"
        return f"<{tag}{cls}>{html.escape(str(v))}</{tag}>"

    ident = f' id="{table_id}"' if table_id else ""
    out = [f"<table{ident}><tr>" + "".join(cell(h, i, "th") for i, h in enumerate(header)) + "</tr>"]
    out += ["<tr>" + "".join(cell(v, i, "td") for i, v in enumerate(r)) + "</tr>" for r in rows]
    return "\n".join(out) + "</table>"


def _page(title: str, body: list[str]) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def result_html(result: Any) -> str:
    """The report of one result (an ssdkit Result or its JSON document)."""
    raw = plot._raw(result)
    dev = raw["device"]
    body = [
        _table(
            ["seed", "simulated time (s)", "events", "write amplification", "GC runs", "ssdkit"],
            [
                [
                    raw["seed"],
                    raw["simulated_time_s"],
                    raw["events"],
                    dev["ftl"]["write_amplification"],
                    dev["ftl"]["gc_runs"],
                    raw["ssdkit_version"],
                ]
            ],
        ),
        "<h2>Summary</h2>",
    ]
    rows = []
    for f in raw["flows"]:
        for op in ("read", "write", "trim", "all"):
            s = f["stats"][op]
            if s["count"] == 0:
                continue
            lat = s["latency_us"]
            rows.append(
                [
                    f["name"],
                    op,
                    s["count"],
                    s["iops"],
                    s["bandwidth_bytes_per_s"] / 1e6,
                    lat["mean"],
                    lat["p50"],
                    lat["p99"],
                    lat["p99_9"],
                    lat["max"],
                ]
            )
    body.append(
        _table(
            ["flow", "op", "requests", "IOPS", "MB/s", "mean (us)", "p50 (us)", "p99 (us)", "p99.9 (us)", "max (us)"],
            rows,
            left=2,
            table_id="summary",
        )
    )
    if raw.get("fairness"):
        fa = raw["fairness"]
        body += [
            "<h2>Fairness</h2>",
            _table(
                ["flow", "RT alone (us)", "RT shared (us)", "slowdown"],
                [[f["name"], f["rt_alone_us"], f["rt_shared_us"], f["slowdown"]] for f in fa["flows"]],
                left=1,
            ),
            f"<p>F = {fa['fairness']:.3f}, WS = {fa['weighted_speedup']:.3f}</p>",
            _img(plot.fairness(raw), "slowdown per flow"),
        ]
    body += ["<h2>Latency</h2>", _img(plot.cdf(raw), "latency CDF"), _img(plot.cdf(raw, tail=True), "latency tail")]
    body.append(_img(plot.percentiles(raw), "latency percentiles"))
    if any(f.get("latency_breakdown") for f in raw["flows"]):
        body.append(_img(plot.breakdown(raw), "latency breakdown"))
    if raw.get("timeseries"):
        body += ["<h2>Over time</h2>", _img(plot.timeseries(raw), "throughput and latency per window")]
        body.append(_img(plot.device(raw), "write amplification and free blocks"))
    body += ["<h2>Wear</h2>", _img(plot.erase_counts(raw), "erase counts")]
    body += ["<h2>Configuration</h2>", f"<pre>{html.escape(json.dumps(raw['config'], indent=2))}</pre>"]
    return _page("ssdkit result", body)


_META = {"point", "workload", "repeat", "seed", "flow", "scope", "op", "error", "result_json"}


def swept_keys(table) -> list[str]:
    """The swept keys of a sweep's table: the configuration-key columns (dotted names)."""
    return [c for c in table.columns if "." in c and c not in _META]


def sweep_html(table) -> str:
    """The report of a sweep's table (``ssdkit.sweep``'s DataFrame)."""
    keys = swept_keys(table)
    failed = table[table["error"].notna()]
    ok = table[table["error"].isna() & (table["op"] == "all")]
    cols = [
        "point",
        "workload",
        "repeat",
        *keys,
        "flow",
        "iops",
        "latency_mean_us",
        "latency_p99_us",
        "write_amplification",
    ]
    rows = [[r[c] for c in cols] for _, r in ok[cols].iterrows()]
    body = [
        f"<p>{table['point'].nunique()} points, {len(failed)} failed; the table has one row per point and flow (all operations).</p>",
        "<h2>Points</h2>",
        _table(cols, rows, left=1, table_id="summary"),
    ]
    if len(failed):
        body += [
            "<h2>Failed points</h2>",
            _table(
                ["point", *keys, "error"],
                [[r["point"], *(r[k] for k in keys), r["error"]] for _, r in failed.iterrows()],
                left=1,
            ),
        ]
    numeric = [k for k in keys if ok[k].dropna().map(lambda v: isinstance(v, (int, float))).all()]
    for k in keys:
        group = next((g for g in keys if g != k), None)
        body.append(f"<h2>Along {html.escape(k)}</h2>")
        for metric in ("iops", "latency_p99_us"):
            body.append(_img(plot.sweep_line(ok, k, metric, group=group, op=None), f"{metric} along {k}"))
    if len(numeric) >= 2:
        x, y = numeric[:2]
        body += [
            "<h2>Heatmap</h2>",
            _img(plot.sweep_heatmap(ok, x, y, "latency_p99_us", op=None), f"p99 over {x} and {y}"),
        ]
    return _page("ssdkit sweep", body)


def report(source: Any, output: str | os.PathLike) -> str:
    """Writes the report of ``source`` (a Result, a result JSON document or file, a sweep's
    DataFrame or its Parquet file) to ``output``; returns the path. ``output`` is checked first
    (:func:`ssdkit.outputs.check`: not the source, not a directory, a writable folder, else
    :class:`SsdkitIoError`) and replaced only once the report is whole; a pipe is written in place."""
    is_path = isinstance(source, (str, os.PathLike))
    what = "sweep table" if is_path and os.fspath(source).endswith(".parquet") else "result JSON"
    outputs.check([("report", output)], [(what, source)] if is_path else [])
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path.endswith(".parquet"):
            import pandas as pd

            try:
                page = sweep_html(pd.read_parquet(path))
            except ImportError:
                raise ImportError(
                    "reading a sweep's table needs pyarrow, a dependency of ssdkit missing here"
                ) from None
        else:
            with open(path) as f:
                page = result_html(json.load(f))
    elif isinstance(source, Mapping) or hasattr(source, "raw"):
        page = result_html(source)
    else:
        page = sweep_html(source)
    outputs.write(output, page, "report")
    return os.fspath(output)
