"""examples/python/serve_bench.py keeps working: a 1-second run per server, its JSON rows
consistent with themselves (the figures of record come from longer runs, see its docstring)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _debian import skip_unless
from _serve import skip_unless_ssdkit_serve

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "python" / "serve_bench.py"


@pytest.mark.parametrize("server", ["nbdkit", "ssdkit-fast", "ssdkit-real", "floor"])
def test_serve_bench_runs(server):
    skip_unless("fio", "fio", "the serve_bench.py check")
    if server in ("nbdkit", "floor"):
        skip_unless("nbdkit", "nbdkit", "the serve_bench.py check")
    else:
        skip_unless_ssdkit_serve(f"the serve_bench.py check of {server}")
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "1", "--servers", server, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)
    assert row["server"] == server and row["requests"] > 0
    # fio's IOPS are its requests over its one-second run.
    assert row["iops"] == pytest.approx(row["requests"], rel=0.2)
    assert row["mean_latency_us"] > 0 and row["p99_latency_us"] >= row["mean_latency_us"] * 0.5
    assert row["cpu_us_per_request"] is not None and row["cpu_us_per_request"] >= 0
    assert 0 <= row["steal_fraction"] <= 1
    if server == "ssdkit-real":
        # fio paces the reads at --rate (10,000 IOPS by default); the real clock reports how late
        # replies left (the result's emulator.lateness).
        assert row["rate_iops"] == 10000 and row["iops"] <= 10000 * 1.05
        assert row["lateness_p99_us"] is not None and row["lateness_p99_us"] >= 0
    if server == "floor":
        # nbdkit serves the paced reads while a bare timer loop measures the machine's wake-up
        # lateness at the same rate.
        assert row["rate_iops"] == 10000 and row["iops"] <= 10000 * 1.05
        assert row["lateness_p99_us"] is not None and row["lateness_p99_us"] >= 0


def test_serve_bench_rejects_unknown_servers():
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--servers", "nbdkit,nope"], capture_output=True, text=True, check=False
    )
    assert p.returncode == 2 and "--servers: unknown nope" in p.stderr and "Traceback" not in p.stderr
