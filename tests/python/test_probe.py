"""`ssdkit probe`: the measurements against a file it creates and against `ssdkit serve`, checked
against invariants (Little's law for the closed-loop queue-depth sweep, the real clock never
replying before the simulated completion), Ctrl-C keeping the points, and the refusals that
protect data."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import ssdkit
from _debian import skip_unless
from _serve import served
from ssdkit import probe as probe_mod

QUICK = ["--sizes", "4k,64k", "--queue-depths", "1,4,16", "--seconds", "0.2", "--zone-bytes", "8m"]
QUICK += ["--page-sizes", "4k,8k", "--sustained-bytes", "64m", "--log-ms", "10"]


def probe(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", "probe", *args, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_file_the_probe_creates(tmp_path):
    skip_unless("fio", "fio", "ssdkit probe's measurements")
    target, out = tmp_path / "scratch.img", tmp_path / "points.json"
    p = probe(str(target), "-o", str(out), "--create-bytes", "64m", *QUICK)
    assert p.returncode == 0, p.stderr
    assert not target.exists(), "the file the probe made is removed"
    doc = json.loads(out.read_text())
    assert doc["format"] == "ssdkit-probe/1" and not doc["interrupted"]
    assert doc["target"] == {"name": str(target), "kind": "file", "size_bytes": 64 << 20}
    points = doc["points"]
    # IBM's 4 patterns x 2 sizes x 3 zones at QD1, the 3 queue depths, the 2 page-test sizes,
    # the 2 sustained writes.
    assert len(points) == 4 * 2 * 3 + 3 + 2 + 2
    sustained = [p for p in points if p["test"] == "sustained"]
    assert [p["pattern"] for p in sustained] == ["seq-write", "rand-write"]
    for s in sustained:
        assert s["io_bytes"] == 64 << 20, s
        series = s["bandwidth_log"]["series"]
        if not series:
            # fio logs its first interval late (after about 140 ms here): a 64 MiB sequential
            # write at 1 GB/s ends first, and a fast disk's random writes too. The estimate
            # says so.
            key = "write_cache" if s["pattern"] == "seq-write" else "gc_onset"
            assert "fio logged 0 intervals" in doc["estimates"][key]["error"]
            continue
        # fio's log covers the run up to its last entry: its bytes add up to what was written,
        # within two intervals at the highest rate logged (the first and last intervals are fio's
        # least exact) and what the run wrote after the last entry, which fio 3.33 does not log
        # (a partial interval: 1 to 10 ms of 135 to 255 ms runs here, more on a loaded host). The
        # run's length is fio's own (its bandwidth is bytes over whole milliseconds).
        ends = [t / 1e3 for t, _ in series]
        logged = sum(v * (b - a) for (_, v), a, b in zip(series, [0.0, *ends[:-1]], ends))
        tail = max(0.0, round(s["io_bytes"] / s["bytes_per_s"] * 1e3) / 1e3 - ends[-1])
        peak = max(v for _, v in series)
        assert logged <= (64 << 20) + 2 * peak * 0.010, (logged, s)
        assert logged >= (64 << 20) - peak * (2 * 0.010 + tail), (logged, tail, s)
    est = doc["estimates"]
    for name in ("read_latency_4k_qd1", "write_latency_4k_qd1"):
        assert est[name]["value_us"] > 0 and 0 <= est[name]["stderr_us"] < est[name]["value_us"], est[name]
    assert est["parallelism"]["value"] > 0 and est["parallelism"]["knee_iodepth"] in (1, 4, 16)
    for pattern in ("seq-read", "rand-read", "seq-write", "rand-write"):
        assert est["ibm_linear_model"][pattern]["points"] == 6
    assert "read latency 4k qd1" in p.stdout
    for name in ("page_size", "write_cache", "gc_onset", "program_latency"):
        assert name in est, name


def test_ssdkit_serve_real_clock_is_never_faster_than_simulated(tmp_path):
    skip_unless("fio", "fio", "ssdkit probe against an NBD export")
    skip_unless("nbdinfo", "libnbd-bin", "ssdkit probe against an NBD export")
    out, result = tmp_path / "points.json", tmp_path / "result.json"
    with served("mqsim-paper", "--set", "flash.blocks_per_plane=128", "-o", str(result), tmp_path=tmp_path) as s:
        # Reads only: nothing is written, so no --destructive is needed.
        p = probe(s.uri, "-o", str(out), "--reads-only", *QUICK)
        assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["target"]["kind"] == "nbd" and {p["pattern"] for p in doc["points"]} == {"seq-read", "rand-read"}
    sim = json.loads(result.read_text())["device"]["stats"]["read"]["latency_us"]
    # A reply leaves no earlier than its simulated completion, so what fio sees at QD1 is the
    # simulated latency plus the transport, never less.
    qd1 = [p for p in doc["points"] if p["iodepth"] == 1 and p["request_bytes"] == 4096]
    assert qd1 and min(p["latency_us"] for p in qd1) >= sim["min"]


def test_ctrl_c_keeps_the_points_measured(tmp_path):
    skip_unless("fio", "fio", "ssdkit probe's Ctrl-C")
    target, out = tmp_path / "scratch.img", tmp_path / "points.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdkit", "probe", str(target), "-o", str(out), "--create-bytes", "64m", *QUICK],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Interrupt once the file is filled and a few runs are done (each takes 0.2 s).
    deadline = time.monotonic() + 60
    while not (target.exists() and target.stat().st_size == 64 << 20) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted; the points measured so far are in" in err and "Traceback" not in err
    doc = json.loads(out.read_text())
    assert doc["interrupted"] and 0 < len(doc["points"]) < 27
    assert not target.exists()
    # No fio is left running on the removed file.
    left = subprocess.run(["pgrep", "-f", str(target)], capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", left.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("{existing}",), "writing would destroy the data on this existing file; give --destructive"),
        (("/dev/null",), "not a regular file, a block device or an NBD URI"),
        (("{tmp}/no/such/x.img",), "its folder"),
        (("{tmp}/new.img", "--zones", "2"), "--zones must be an odd number"),
        (("{tmp}/new.img", "--sizes", "1000"), "multiples of 512 bytes"),
        (("{tmp}/new.img", "--create-bytes", "16m", "--zone-bytes", "8m"), "do not fit in"),
        (("{tmp}/new.img", "--queue-depths", "1,x"), "--queue-depths: '1,x' is not a list of integers"),
        (("nbd+unix:///?socket={tmp}/s",), "writing would destroy the export's data"),
    ],
)
def test_refusals(tmp_path, args, message):
    existing = tmp_path / "existing.img"
    existing.write_bytes(b"data" * 1024)
    argv = [a.format(tmp=tmp_path, existing=existing) for a in args]
    p = probe(*argv, "-o", str(tmp_path / "points.json"))
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert existing.read_bytes() == b"data" * 1024
    assert not (tmp_path / "points.json").exists() and not (tmp_path / "new.img").exists()


def test_the_points_file_is_not_the_target(tmp_path):
    target = tmp_path / "new.img"
    p = probe(str(target), "-o", str(target))
    assert p.returncode == 2 and "is the probe target" in p.stderr, p.stderr
    assert not target.exists()
    existing = tmp_path / "old.img"
    existing.write_bytes(b"x" * (1 << 20))
    p = probe(str(existing), "-o", str(existing), "--reads-only", "--zones", "1", "--zone-bytes", "1m", "--sizes", "4k")
    assert p.returncode == 2 and "probe target" in p.stderr, p.stderr
    assert existing.read_bytes() == b"x" * (1 << 20)


def test_points_file_path_is_checked_before_measuring(tmp_path):
    p = probe(str(tmp_path / "new.img"), "-o", str(tmp_path))
    assert p.returncode == 2 and "directory" in p.stderr, p.stderr
    assert not Path(tmp_path / "new.img").exists()


# A served device whose figures are known: the x25m preset (10 channels x 2 chips, 4 KiB pages)
# with 1 ms reads, so that the NBD transport is a small part of every latency and the device's
# peak IOPS (about 16,000) is well within what the transport carries; NVMe queues, so that 128
# requests reach the device (SATA's NCQ holds 32); laid out sequentially, so that the first
# hundreds of MiB of writes meet no garbage collection.
KNOWN = {
    "flash.blocks_per_plane": 128,
    "flash.read_us": [1000.0, 1000.0],
    "interface.type": "nvme",
    "precondition.mode": "sequential",
}


def _serve_args(overrides: dict) -> list[str]:
    out = ["x25m"]
    for k, v in overrides.items():
        out += ["--set", f"{k}={json.dumps(v)}"]
    return out


def _simulated(overrides: dict, **flow) -> ssdkit.Result:
    ov = {**KNOWN, **overrides, **{f"flow.0.{k}": v for k, v in flow.items()}}
    return ssdkit.run("x25m", overrides=ov)


#: For the latencies: 3 ms reads and programs, so that the transport's variation (about 270 us
#: more with a busy core than the instantaneous device below shows) stays under 10 %.
SLOW = {**KNOWN, "flash.read_us": [3000.0, 3000.0], "flash.program_us": [3000.0, 3000.0]}

#: The same device with its flash nearly instantaneous: what the probe sees of it is the transport.
FAST = {
    **KNOWN,
    "flash.read_us": [1.0, 1.0],
    "flash.program_us": [1.0, 1.0],
    "flash.bus.rate_mts": 4096.0,
    "flash.bus.channel_switch_read_us": 0.0,
    "flash.bus.channel_switch_write_us": 0.0,
}


def _transport_us(tmp_path) -> float:
    """The transport's time at QD1 for 4 KiB (NBD over a Unix socket, fio's nbd engine, the
    real clock's lateness): what the probe measures of `ssdkit serve` on the nearly instantaneous
    device less that device's simulated latency, the mean of reads and writes. (nbdkit memory is
    no stand-in: on this project's machine its QD1 reads took 165 us and writes 225 us through
    fio, ssdkit serve's transport 100 to 120 us.)"""
    out = tmp_path / "transport.json"
    with served(*_serve_args(FAST), tmp_path=tmp_path, name="fast") as m:
        p = probe(
            m.uri,
            "-o",
            str(out),
            "--destructive",
            "--sizes",
            "4k",
            "--zones",
            "1",
            "--zone-bytes",
            "16m",
            "--queue-depths",
            "1",
            "--page-sizes",
            "none",
            "--sustained-bytes",
            "0",
            "--seconds",
            "1",
        )
        assert p.returncode == 0, p.stderr
    est = json.loads(out.read_text())["estimates"]
    fast = {**FAST}
    read = ssdkit.run("x25m", overrides={**fast, "flow.0.requests": 1000}).flows[0].stats.read.latency.mean
    ov = {**fast, "flow.0.requests": 1000, "flow.0.read_fraction": 0.0}
    write = ssdkit.run("x25m", overrides=ov).flows[0].stats.write.latency.mean
    return (est["read_latency_4k_qd1"]["value_us"] - read + est["write_latency_4k_qd1"]["value_us"] - write) / 2


def test_probe_recovers_a_served_devices_page_latencies_and_parallelism(tmp_path):
    skip_unless("fio", "fio", "ssdkit probe against an NBD export")
    skip_unless("nbdinfo", "libnbd-bin", "ssdkit probe against an NBD export")
    transport = _transport_us(tmp_path)
    out = tmp_path / "points.json"
    with served(*_serve_args(SLOW), tmp_path=tmp_path) as s:
        p = probe(
            s.uri,
            "-o",
            str(out),
            "--destructive",
            "--sizes",
            "4k",
            "--zones",
            "1",
            "--zone-bytes",
            "64m",
            "--queue-depths",
            "1,128",
            "--page-sizes",
            "2k,4k,8k",
            "--page-iodepth",
            "128",
            "--sustained-bytes",
            "0",
            "--seconds",
            "1",
            "--transport-us",
            f"{transport:.3f}",
        )
        assert p.returncode == 0, p.stderr
    est = json.loads(out.read_text())["estimates"]
    assert est["transport_us"] == pytest.approx(transport, abs=1e-3)
    # The page size exactly: reads of 2 and 4 KiB cost one page read, 8 KiB two.
    assert est["page_size"]["value_bytes"] == 4096, est["page_size"]
    # Read and program latency against the same device simulated directly (4 KiB random, QD1):
    # within 10 % once the transport is removed.
    read = _simulated(SLOW, queue_depth=1, requests=1000).flows[0].stats.read.latency.mean
    write = _simulated(SLOW, queue_depth=1, requests=1000, read_fraction=0.0).flows[0].stats.write.latency.mean
    assert est["read_latency_4k_qd1"]["value_us"] == pytest.approx(read, rel=0.10), (est["read_latency_4k_qd1"], read)
    assert est["program_latency"]["value_us"] == pytest.approx(write, rel=0.10), (est["program_latency"], write)
    # Parallelism by Little's law, against the same law on the direct simulation: peak IOPS at
    # QD128 x QD1 latency (the 20 dies less their shared channels' transfers).
    peak = _simulated(SLOW, queue_depth=128, requests=20000, range_bytes=64 << 20).flows[0].stats.read.iops
    assert est["parallelism"]["value"] == pytest.approx(peak * read / 1e6, rel=0.10), (est["parallelism"], peak, read)


def test_probe_finds_a_served_write_cache_and_gc_onset(tmp_path):
    skip_unless("fio", "fio", "ssdkit probe against an NBD export")
    skip_unless("nbdinfo", "libnbd-bin", "ssdkit probe against an NBD export")
    quick = [
        "--sizes",
        "4k",
        "--zones",
        "1",
        "--zone-bytes",
        "16m",
        "--queue-depths",
        "1",
        "--page-sizes",
        "none",
        "--seconds",
        "0.2",
        "--destructive",
    ]
    cache = 128 << 20
    out = tmp_path / "cache.json"
    with served(*_serve_args({**KNOWN, "cache.mode": "write", "cache.capacity_bytes": cache}), tmp_path=tmp_path) as s:
        p = probe(
            s.uri, "-o", str(out), *quick, "--sustained", "seq-write", "--sustained-bytes", "512m", "--log-ms", "10"
        )
        assert p.returncode == 0, p.stderr
    wc = json.loads(out.read_text())["estimates"]["write_cache"]
    print("write cache:", json.dumps(wc))
    # The cache's capacity lies between the two readings of the cliff (draining while filling
    # or not), and the bytes before the cliff are within 10 % of it: the cliff's interval is
    # 10 ms, the transport filling the cache at 460 to 850 MB/s (measured +0.6 %). fio's first
    # log entry can cover its first 150 ms: at 460 MB/s a 64 MiB cache filled in 145 ms, and
    # the cliff fell in that entry or the next, read as 69.3 or 73.9 MB as the host ran (3
    # failures in 4 on a slow day); 128 MiB puts the cliff past the first entry.
    assert wc["lower_bytes"] <= cache <= wc["value_bytes"] + wc["resolution_bytes"], wc
    assert wc["value_bytes"] == pytest.approx(cache, rel=0.10), wc
    out = tmp_path / "gc.json"
    with served(*_serve_args(KNOWN), tmp_path=tmp_path) as s:
        p = probe(
            s.uri,
            "-o",
            str(out),
            *quick,
            "--sustained",
            "rand-write",
            "--sustained-bytes",
            "400m",
            "--sustained-seconds",
            "8",
        )
        assert p.returncode == 0, p.stderr
    gc = json.loads(out.read_text())["estimates"]["gc_onset"]
    # The same workload simulated directly (4 KiB random writes at QD32 over the device), its
    # bandwidth in 100 ms windows through the same cliff finder: about 225 MB.
    r = _simulated({"run.timeseries_window_ms": 100}, queue_depth=32, read_fraction=0.0, requests=400 * 256)
    bw = r.raw["timeseries"]["flows"][0]["bandwidth_bytes_per_s"]
    sim = probe_mod.cliff([[100.0 * (i + 1), v] for i, v in enumerate(bw)])
    assert sim is not None
    assert gc["value_bytes"] == pytest.approx(sim["bytes_before"], rel=0.10), (gc, sim)
