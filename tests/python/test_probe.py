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
from _debian import skip_unless
from _serve import served

QUICK = ["--sizes", "4k,64k", "--queue-depths", "1,4,16", "--seconds", "0.2", "--zone-bytes", "8m"]


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
    # IBM's 4 patterns x 2 sizes x 3 zones at QD1, then the 3 queue depths.
    assert len(points) == 4 * 2 * 3 + 3
    assert {p["zone"] for p in points if p["test"] == "ibm"} == {0, 1, 2}
    # The zones spread over the target, each inside it.
    offsets = sorted({p["offset_bytes"] for p in points})
    assert offsets[0] == 0 and offsets[-1] + (8 << 20) <= 64 << 20 and len(offsets) == 3
    for q in (p for p in points if p["test"] == "qd"):
        # Little's law for fio's closed loop: requests outstanding = IOPS x mean latency
        # (measured within 2 % here). Tolerance: the fill and drain at the ends of each 0.2 s
        # run and fio's time between completing and resubmitting.
        assert q["iops"] * q["latency_us"] / 1e6 == pytest.approx(q["iodepth"], rel=0.10), q
    est = doc["estimates"]
    for name in ("read_latency_4k_qd1", "write_latency_4k_qd1"):
        assert est[name]["value_us"] > 0 and 0 <= est[name]["stderr_us"] < est[name]["value_us"], est[name]
    assert est["parallelism"]["value"] > 0 and est["parallelism"]["knee_iodepth"] in (1, 4, 16)
    for pattern in ("seq-read", "rand-read", "seq-write", "rand-write"):
        assert est["ibm_linear_model"][pattern]["points"] == 6
    assert "read latency 4k qd1" in p.stdout


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
