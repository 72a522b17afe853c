"""The latency breakdown from Python (docs/breakdown.md): the request log's step columns sum
to each request's latency, the result's typed view and table, the summary's step lines and the
latency-log file's columns."""

import numpy as np
import pandas as pd
import ssdkit
from ssdkit.device import BREAKDOWN_STEPS

MIXED = {
    "run.latency_breakdown": True,
    "flash.blocks_per_plane": 128,
    "flow.0.queue_depth": 16,
    "flow.0.read_fraction": 0.5,
    "flow.0.requests": 3000,
}


def test_log_columns_sum_to_each_latency_and_views():
    r = ssdkit.run("mqsim-paper", overrides=MIXED, request_log=True)
    log = r.request_log
    cols = [f"{s}_ns" for s in BREAKDOWN_STEPS]
    assert all(c in log.columns for c in cols)
    total = log[cols].sum(axis=1).to_numpy()
    # The steps are whole picoseconds; latency_ns is the latency in whole nanoseconds.
    assert np.all(np.floor(total + 1e-6) == log["latency_ns"].to_numpy())
    assert (log["mapping_ns"] > 0).any() and (log["cache_ns"] > 0).any()
    bd = r.device.latency_breakdown
    assert bd["read"]["count"] + bd["write"]["count"] == 3000
    means = sum(bd["read"][s]["mean"] for s in BREAKDOWN_STEPS)
    assert abs(means - r.device.stats.read.latency.mean) < 1e-6
    table = r.breakdown()
    assert isinstance(table, pd.DataFrame)
    dev = table[(table.flow.isna()) & (table.op == "read")]
    assert list(dev.step) == list(BREAKDOWN_STEPS)
    assert r.flows[0].latency_breakdown["write"]["count"] == bd["write"]["count"]
    text = r.summary()
    assert "latency breakdown" in text
    for s in BREAKDOWN_STEPS:
        assert f"  {s} " in text


def test_latency_log_file_has_the_step_columns(tmp_path):
    path = tmp_path / "log.csv"
    ssdkit.run("mqsim-paper", overrides={**MIXED, "flow.0.requests": 500}, latency_log=str(path))
    df = pd.read_csv(path)
    assert "t_stall_ns" in df.columns and len(df) == 500
    total = df[[f"{s}_ns" for s in BREAKDOWN_STEPS]].sum(axis=1)
    assert np.all(np.floor(total + 1e-6) == df["latency_ns"])


def test_off_by_default():
    r = ssdkit.run("mqsim-paper", overrides={**MIXED, "run.latency_breakdown": False}, request_log=True)
    assert r.device.latency_breakdown is None and "die_queue_ns" not in r.request_log.columns
    assert "latency breakdown" not in r.summary()
    try:
        r.breakdown()
    except ValueError as e:
        assert "run.latency_breakdown" in str(e)
    else:
        raise AssertionError("breakdown() without a breakdown")
