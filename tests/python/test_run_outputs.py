"""What a run gives besides its summary: the time series (its windows sum to the run's totals),
the streamed latency log (the same rows as the in-memory log, in Parquet and CSV), progress
callbacks, Ctrl-C, the pandas conventions, and how trace auto-detection explains itself."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
import ssdkit
from conftest import SMALL, TINY_WRITES

WINDOW_MS = 0.5


@pytest.fixture(scope="module")
def busy():
    """Mixed reads, writes and TRIMs on a small device with GC at work, in 0.5 ms windows."""
    ov = {
        **TINY_WRITES,
        "flow.0.read_fraction": 0.4,
        "flow.0.trim_fraction": 0.05,
        "flow.0.requests": 6000,
        "run.timeseries_window_ms": WINDOW_MS,
    }
    return ssdkit.run("mqsim-paper", overrides=ov, request_log=True)


def test_time_series_windows_sum_to_the_run_totals(busy):
    ts = busy.timeseries
    assert ts is not None and ts.window_ps == int(WINDOW_MS * 1e9)
    # Windows tile the run: consecutive starts, the last one ending at the run's last event.
    n = math.ceil(ts.end_ps / ts.window_ps)
    assert ts.windows == n
    assert ts.start_ps == [i * ts.window_ps for i in range(n)]
    assert ts.end_ps >= busy.simulated_time_ps
    f = ts.flows[0]
    assert sum(f["completed"]) == busy.flows[0].completed
    st = busy.flows[0].stats
    assert sum(f["bytes"]) == st.all.bytes + st.trim.bytes
    dev, ftl = ts.device, busy.device.ftl
    assert ftl.gc_runs > 0, "the case should make GC work"
    assert sum(dev["gc_runs"]) == ftl.gc_runs
    assert sum(dev["gc_page_moves"]) == ftl.gc_page_moves
    assert sum(dev["user_page_writes"]) == ftl.user_page_writes
    assert sum(dev["page_programs"]) == busy.device.flash.page_programs
    # Per window: the rates are the counts over the window's length.
    lengths = np.diff(np.append(ts.start_ps, ts.end_ps)) / 1e12
    np.testing.assert_allclose(np.asarray(f["iops"]) * lengths, f["completed"], rtol=1e-12)
    for wa, user, prog in zip(dev["write_amplification"], dev["user_page_writes"], dev["page_programs"]):
        assert (wa is None) == (user == 0)
        if user:
            assert wa == prog / user


def test_time_series_latency_and_queue_depth_follow_the_requests(busy):
    """Each window's mean and max latency are those of the requests the log shows completing in
    it; a closed-loop flow keeps its queue depth (32) in every full window but the last."""
    ts, log = busy.timeseries, busy.request_log
    f = ts.flows[0]
    window = (log["complete_ns"].to_numpy() * 1000) // ts.window_ps
    counts = np.bincount(window, minlength=ts.windows)
    assert counts.tolist() == f["completed"]
    # The log has nanoseconds; the series means are exact picoseconds: agree within 1 ns.
    lat_us = log["latency_ns"].to_numpy() / 1e3
    for w in range(ts.windows):
        mine = lat_us[window == w]
        if mine.size == 0:
            assert f["mean_latency_us"][w] is None and f["max_latency_us"][w] is None
        else:
            assert abs(f["mean_latency_us"][w] - mine.mean()) <= 1e-3
            assert abs(f["max_latency_us"][w] - mine.max()) <= 1e-3
    qd = busy.config["flow"][0]["queue_depth"]
    assert qd == 32
    # Every completion submits the next request at the same instant, so the depth is exactly
    # 32 until the flow runs out of requests.
    last_submit_window = int((log["submit_ns"].max() * 1000) // ts.window_ps)
    assert f["queue_depth"][:last_submit_window] == [32.0] * last_submit_window


def test_time_series_as_a_tidy_frame(busy):
    df = busy.to_pandas(kind="timeseries")
    n = busy.timeseries.windows
    assert len(df) == 2 * n  # one flow and the device
    assert str(df["completed"].dtype) == "Int64" and str(df["free_blocks"].dtype) == "Int64"
    dev = df[df["scope"] == "device"]
    flow = df[df["scope"] != "device"]
    assert flow["free_blocks"].isna().all() and dev["free_blocks"].notna().all()
    assert int(dev["completed"].sum()) == busy.completed
    assert int(dev["gc_runs"].sum()) == busy.device.ftl.gc_runs
    assert (df["config_hash"] == busy.config_hash).all() and (df["seed"] == busy.seed).all()
    assert df["end_ms"].iloc[n - 1] == busy.timeseries.end_ps / 1e9


def test_without_a_window_there_is_no_time_series(small_result):
    assert small_result.timeseries is None and "timeseries" not in small_result.raw
    with pytest.raises(ssdkit.SsdkitError, match="timeseries_window_ms"):
        small_result.to_pandas(kind="timeseries")
    with pytest.raises(ValueError, match="allowed: 'summary', 'timeseries'"):
        small_result.to_pandas(kind="bogus")


@pytest.mark.parametrize("bad", [-1, 1e-9, float("nan")])
def test_a_bad_window_is_refused_naming_the_key(bad):
    with pytest.raises(ssdkit.ConfigError, match="run.timeseries_window_ms"):
        ssdkit.run("mqsim-paper", overrides={**SMALL, "run.timeseries_window_ms": bad})


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_latency_log_file_holds_the_request_log(tmp_path, suffix):
    path = tmp_path / f"lat{suffix}"
    r = ssdkit.run(
        "mqsim-paper", overrides={**TINY_WRITES, "flow.0.read_fraction": 0.5}, latency_log=path, request_log=True
    )
    got = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    assert list(got.columns) == ["id", "flow", "op", "offset_bytes", "bytes", "submit_ns", "complete_ns", "latency_ns"]
    want = r.request_log.reset_index()
    assert len(got) == len(want) == r.completed
    for c in got.columns:
        assert got[c].astype(str).tolist() == want[c].astype(str).tolist(), c
    assert [p.name for p in tmp_path.iterdir()] == [path.name], "no temporary file is left"


def test_the_latency_log_streams_in_bounded_batches(tmp_path):
    """More requests than one batch (65,536): the file gets every one of them."""
    path = tmp_path / "lat.parquet"
    n = 150_000
    r = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.requests": n}, latency_log=path)
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == n == r.completed
    assert meta.num_row_groups >= 2


@pytest.mark.parametrize(
    "name, error, match",
    [
        ("missing/lat.csv", ssdkit.SsdkitIoError, "directory .* does not exist"),
        ("lat.txt", ssdkit.ConfigError, r"unknown suffix `\.txt`; allowed: \.parquet or \.pq \(Parquet\), \.csv"),
        (".", ssdkit.SsdkitIoError, "is a directory"),
    ],
)
def test_a_bad_latency_log_path_is_refused_before_the_run(tmp_path, name, error, match):
    with pytest.raises(error, match=match):
        ssdkit.run("mqsim-paper", overrides=SMALL, latency_log=tmp_path / name)


def test_progress_callback_sees_the_run_advance():
    seen = []
    r = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.requests": 1_500_000}, progress=seen.append)
    assert seen, "a run of more than a second reports"
    fr = [p.fraction for p in seen]
    assert all(f is not None for f in fr) and fr == sorted(fr) and 0 < fr[-1] <= 1
    assert [p.requests for p in seen] == sorted(p.requests for p in seen)
    assert all(p.requests <= r.completed for p in seen)
    # For a request-bounded flow the fraction is requests completed over requests to do.
    assert all(abs(p.fraction - p.requests / 1_500_000) < 1e-12 for p in seen)


def test_a_progress_callback_that_raises_stops_the_run(tmp_path):
    def stop(p):
        raise RuntimeError("enough")

    path = tmp_path / "lat.csv"
    with pytest.raises(RuntimeError, match="enough"):
        ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.requests": 5_000_000}, progress=stop, latency_log=path)
    assert list(tmp_path.iterdir()) == [], "an interrupted run leaves no log file"


INTERRUPTED = textwrap.dedent(
    """
    import sys, ssdkit
    def tell(p):
        print("running", flush=True)
    try:
        ssdkit.run("mqsim-paper", overrides={"flash.blocks_per_plane": 128, "flow.0.requests": 10**9},
                   progress=tell, latency_log=sys.argv[1])
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(3)
    """
)


def _interrupt(argv, cwd, first_line="running", wait_s=0.0):
    """Starts `argv` in `cwd`, waits for its first output line (`first_line`) and then
    `wait_s` more seconds, checks it still runs, sends SIGINT; returns (seconds to exit, exit
    code, output: stdout and stderr together)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    try:
        first = p.stdout.readline()
        assert first_line in first, first + p.stdout.read()
        time.sleep(wait_s)
        assert p.poll() is None, "it should still be running"
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        return time.monotonic() - t, p.returncode, out
    finally:
        if p.poll() is None:
            p.kill()


def test_ctrl_c_stops_a_python_run_within_a_second(tmp_path):
    log = tmp_path / "lat.parquet"
    took, code, out = _interrupt([sys.executable, "-c", INTERRUPTED, str(log)], tmp_path)
    assert code == 3 and "KeyboardInterrupt" in out, out
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert list(tmp_path.iterdir()) == [], "no partial latency log"


def test_ctrl_c_stops_the_cli_without_a_partial_output(tmp_path):
    # The CLI has no progress callback to print from; wait until its run is under way.
    argv = [
        sys.executable,
        "-c",
        "import sys; print('running', flush=True); from ssdkit.cli import main; sys.exit(main(sys.argv[1:]))",
        "run",
        "mqsim-paper",
        "--set",
        "flash.blocks_per_plane=128",
        "--set",
        "flow.0.requests=1000000000",
        "--latency-log",
        "lat.csv",
        "-o",
        "out.json",
    ]
    # 3 s: building the device and preconditioning, then the run.
    took, code, out = _interrupt(argv, tmp_path, wait_s=3)
    assert code == 130, (code, out)
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert sorted(os.listdir(tmp_path)) == [], "neither the log nor the result is left"


def test_summary_frame_conventions(small_result):
    df = small_result.to_pandas()
    write = df[(df["op"] == "write") & (df["scope"] == "device")].iloc[0]
    assert write["count"] == 0 and write["iops"] == 0.0
    lat = ("latency_mean_us", "latency_p50_us", "latency_p99_us", "latency_max_us")
    assert all(math.isnan(write[c]) for c in lat), "no writes ran"
    read = df[(df["op"] == "read") & (df["scope"] == "device")].iloc[0]
    assert read["latency_p99_us"] == small_result.device.stats.read.latency.p99
    assert str(df["count"].dtype) == "Int64" and str(df["flow"].dtype) == "Int64"
    assert df["flow"].isna().tolist() == (df["scope"] == "device").tolist()
    assert list(df.columns[:2]) == ["config_hash", "seed"]
    with_keys = small_result.to_pandas(config_keys=["flash.channels", "flow.0.queue_depth"])
    assert with_keys["flash.channels"].eq(8).all() and with_keys["flow.0.queue_depth"].eq(32).all()
    with pytest.raises(KeyError, match="flash.nope"):
        small_result.to_pandas(config_keys=["flash.nope"])


def test_combine_finds_the_swept_keys():
    runs = [ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.queue_depth": qd}) for qd in (1, 8)]
    df = ssdkit.combine(runs)
    assert list(df.columns[:3]) == ["config_hash", "seed", "flow.0.queue_depth"]
    assert sorted(df["flow.0.queue_depth"].unique()) == [1, 8]
    assert len(df) == sum(len(r.to_pandas()) for r in runs)
    assert df["config_hash"].nunique() == 2
    with pytest.raises(TypeError, match="not an ssdkit Result"):
        ssdkit.combine([runs[0], "x"])


def test_notebook_view_and_an_80_column_summary(small_result):
    html = small_result._repr_html_()
    assert "<table" in html and small_result.config_hash in html
    mixed = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.read_fraction": 0.5})
    text = mixed.summary()
    assert max(len(line) for line in text.splitlines()[:12]) <= 80
    assert "p99.9" in text  # everything fits in 80 columns for a usual run
    narrow = mixed.summary(width=60)
    assert "p50" not in narrow.splitlines()[3] and "p99" in narrow


MQSIM_LINES = "0 0 2048 8 1\n1000 0 4096 8 0\n2000 0 8192 8 1\n"
DISKSIM_LINES = "0.0 0 2048 8 1\n1.5 0 4096 8 0\n2.0 0 8192 8 1\n"


@pytest.mark.parametrize(
    "text, fmt, words",
    [
        (MQSIM_LINES, "mqsim", ["read as MQSim", 'trace_format = "disksim"']),
        (DISKSIM_LINES, "disksim", ["read as DiskSim", "line 1 has a decimal time", "disksim_pages"]),
    ],
)
def test_trace_detection_says_what_it_chose_and_why(tmp_path, text, fmt, words):
    trace = tmp_path / "t.trace"
    trace.write_text(text)
    r = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.trace": str(trace)})
    t = r.flows[0].trace
    assert t["format"] == fmt
    for w in words:
        assert w in t["detection"]
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "run", "mqsim-paper", "--set", "flash.blocks_per_plane=128", "--set",
         f"flow.0.trace={ssdkit.api.toml_literal(str(trace))}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert f"trace of flow 0 ({trace})" in p.stderr and words[0] in p.stderr
    named = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.trace": str(trace), "flow.0.trace_format": fmt})
    assert "detection" not in named.flows[0].trace


def test_the_progress_bar_fits_the_terminal_and_shows_an_eta(tmp_path):
    """On a terminal 80 columns wide the core's bar never draws a longer line, and shows the
    fraction done and an ETA for a request-bounded flow."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    argv = [sys.executable, "-m", "ssdkit", "run", "mqsim-paper", "--set", "flash.blocks_per_plane=128"]
    argv += ["--set", "flow.0.requests=3000000"]
    p = subprocess.Popen(argv, stdin=slave, stdout=subprocess.DEVNULL, stderr=slave, cwd=tmp_path)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=120) == 0
    text = out.decode("utf-8", "replace")
    import re

    drawn = [s for s in re.split(r"\r|\n|\x1b\[[0-9;]*[A-Za-z]", text) if s.strip()]
    assert drawn, "a run of more than half a second draws a bar"
    assert max(len(s) for s in drawn) <= 80, max(drawn, key=len)
    assert any("%" in s and "ETA" in s for s in drawn), drawn[:3]


PRECONDITIONING = textwrap.dedent(
    """
    import sys, ssdkit
    print("calling", flush=True)
    try:
        # Write-mode preconditioning of the 512 GiB device: minutes of page writes.
        ssdkit.run("mqsim-paper", precondition__mode="write", flow__0__read_fraction=0.0)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(3)
    """
)


def test_ctrl_c_stops_preconditioning_within_a_second(tmp_path):
    # 2.5 s: past building the mapping table, inside the page writes.
    took, code, out = _interrupt([sys.executable, "-c", PRECONDITIONING], tmp_path, "calling", wait_s=2.5)
    assert code == 3 and "KeyboardInterrupt" in out, out
    assert took < 1.0, f"took {took:.2f} s to stop"


def test_in_a_notebook_progress_is_a_tqdm_bar(monkeypatch, capsys):
    pytest.importorskip("tqdm", reason="tqdm is in the test extras: pip install '.[test]'")
    monkeypatch.setattr(ssdkit.api, "_in_notebook", lambda: True)
    r = ssdkit.run("mqsim-paper", overrides={**SMALL, "flow.0.requests": 1_500_000}, progress=True)
    err = capsys.readouterr().err
    assert "requests" in err and "ms simulated" in err and "%" in err, err[-500:]
    assert r.completed == 1_500_000


def test_backlog_warning_names_only_the_work_owed():
    """At the last completion, collections under way are owed in every mode; free space below
    the GC start point only when GC refills it (ftl.gc_refill)."""
    ov = {**TINY_WRITES, "run.end": "last_completion"}
    default = ssdkit.run("mqsim-paper", overrides=ov)
    refill = ssdkit.run("mqsim-paper", overrides={**ov, "ftl.gc_refill": True})
    for r in (default, refill):
        assert r.backlog["planes_below_gc_start"] > 0
    assert "short of their GC start point" not in default.summary()
    if default.backlog["planes_collecting"]:
        assert "planes collecting" in default.summary()
    assert "short of their GC start point" in refill.summary()
