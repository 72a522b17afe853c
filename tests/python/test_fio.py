"""fio job files: parsing, fio's number rules, the flow tables they become, refusals, and the
end-to-end check that `ssdkit run --fio` equals a hand-written TOML."""

import json
import math
import os
import subprocess
import sys

import pytest
import tomllib
from ssdkit import fio
from ssdkit.fio import FioError, convert_fio, fio_to_toml

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "fio")

# A small device (64 MiB raw) so capacities are small numbers and runs take milliseconds.
TINY_DEVICE = """
[flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 128
pages_per_block = 64
page_size_bytes = 4096

[ftl]
gc_preemptible = false
"""


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=300
    )


def flows(job_text, base=TINY_DEVICE, **kw):
    return tomllib.loads(fio_to_toml(job_text, base, **kw))["flow"]


def flow(job_text, **kw):
    (f,) = flows(job_text, **kw)
    return f


def capacity(base=TINY_DEVICE):
    return convert_fio("[j]\nrw=read\n", base).capacity_bytes


def refused(job_text, *fragments, base=TINY_DEVICE):
    with pytest.raises(FioError) as e:
        fio_to_toml(job_text, base)
    msg = str(e.value)
    for f in fragments:
        assert f in msg, msg
    assert "supported options:" in msg
    return msg


# --- fio's number syntax -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kb_base, value",
    [
        ("4096", 1024, 4096),
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KB", 1024, 4096),
        ("4KiB", 1024, 4000),  # fio's compatibility inversion: IEC prefixes are powers of 1000
        ("1m", 1024, 1 << 20),
        ("2g", 1024, 2 << 30),
        ("1t", 1024, 1 << 40),
        ("4096b", 1024, 4096),
        ("0x1000", 1024, 4096),
        ("4k", 1000, 4000),
        ("4KiB", 1000, 4096),
        ("1MiB", 1000, 1 << 20),
    ],
)
def test_fio_size_units(text, kb_base, value):
    ctx = fio._Ctx("t.fio")
    opt = fio._Opt("bs", "bs", text, 1, "j")
    assert fio._bytes(ctx, opt, text, kb_base) == (value, False)


@pytest.mark.parametrize("text", ["1.5g", "4x", "4ki", "k", "-4k"])
def test_fio_size_units_refused(text):
    ctx = fio._Ctx("t.fio")
    with pytest.raises(FioError):
        fio._bytes(ctx, fio._Opt("bs", "bs", text, 1, "j"), text, 1024)


@pytest.mark.parametrize(
    "text, us", [("2", 2_000_000), ("500ms", 500_000), ("10us", 10), ("1m", 60_000_000), ("2s", 2_000_000)]
)
def test_fio_time_units(text, us):
    assert fio._time_us(fio._Ctx("t"), fio._Opt("runtime", "runtime", text, 1, "j"), text) == us


def test_fio_time_unit_sec_is_refused():
    refused("[j]\nruntime=10sec\n", "microseconds", "runtime")


def test_kb_base_1000_applies_to_the_job():
    f = flow("[j]\nkb_base=1000\nbs=4KiB\nsize=1024k\n")
    assert (f["request_bytes"], f["range_bytes"]) == (4096, 1_024_000)
    refused("[j]\nbs=4KiB\n", "4000", "KiB")


# --- job file structure ---------------------------------------------------------------------------


def test_globals_comments_flags_and_defaults():
    text = """
; comment
# another
[global]
rw=randread   ; inline comment
bs=8k
[a]
iodepth=1
[b]
rw=write
"""
    a, b = flows(text)
    cap = capacity()
    assert a == {
        "name": "a",
        "queue_depth": 1,
        "read_fraction": 1.0,
        "trim_fraction": 0.0,
        "request_bytes": 8192,
        "pattern": "random",
        "start_bytes": 0,
        "range_bytes": cap,
        "requests": 0,
        "io_bytes": cap,  # fio stops after `size` bytes: the whole device by default
        "duration_ms": 0.0,
        "start_ms": 0.0,
    }
    assert b["pattern"] == "sequential" and b["read_fraction"] == 0.0 and b["request_bytes"] == 8192


def test_global_applies_only_to_jobs_below_it():
    a, b = flows("[a]\n[global]\nbs=16k\n[b]\n")
    assert a["request_bytes"] == 4096 and b["request_bytes"] == 16384


def test_numjobs_offset_increment_and_name():
    fs = flows("[j]\nname=w\nrw=randwrite\nsize=1m\nnumjobs=3\noffset=2m\noffset_increment=1m\n")
    assert [f["name"] for f in fs] == ["w.0", "w.1", "w.2"]
    assert [f["start_bytes"] for f in fs] == [2 << 20, 3 << 20, 4 << 20]
    assert all(f["range_bytes"] == 1 << 20 and f["io_bytes"] == 1 << 20 for f in fs)


def test_percent_size_and_offset():
    cap = capacity()
    f = flow("[j]\nsize=50%\nbs=4k\n")
    assert f["range_bytes"] == (cap * 50 // 100) // 4096 * 4096
    f = flow("[j]\noffset=25%\nbs=4k\n")
    start = -(-(cap * 25 // 100) // 4096) * 4096  # rounded up to the block size
    assert f["start_bytes"] == start and f["range_bytes"] == cap - start


def test_stop_conditions():
    f = flow("[j]\nsize=4m\n")
    assert (f["io_bytes"], f["requests"], f["duration_ms"]) == (4 << 20, 0, 0.0)
    f = flow("[j]\nsize=4m\nio_size=1m\nruntime=2\n")
    assert (f["io_bytes"], f["duration_ms"]) == (1 << 20, 2000.0)
    f = flow("[j]\nsize=4m\nnumber_ios=10\n")
    assert (f["io_bytes"], f["requests"]) == (4 << 20, 10)  # number_ios only adds a limit
    f = flow("[j]\nsize=4m\nruntime=250ms\ntime_based\n")
    assert (f["io_bytes"], f["requests"], f["duration_ms"]) == (0, 0, 250.0)
    f = flow("[j]\nrw=randread\nsize=4m\nloops=3\n")
    assert f["io_bytes"] == 12 << 20
    f = flow("[j]\nsize=4m\nstartdelay=20ms\n")
    assert f["start_ms"] == 20.0


def test_mixes_and_trims():
    f = flow("[j]\nrw=randrw\nrwmixread=70\n")
    assert f["read_fraction"] == 0.7 and f["trim_fraction"] == 0.0
    f = flow("[j]\nrw=randrw\nrwmixwrite=10\n")
    assert f["read_fraction"] == 0.9
    f = flow("[j]\nreadwrite=randrw\n")
    assert f["read_fraction"] == 0.5
    f = flow("[j]\nrw=randtrim\n")
    assert (f["read_fraction"], f["trim_fraction"], f["pattern"]) == (0.0, 1.0, "random")
    f = flow("[j]\nrw=rw\nrwmixread=100\n")  # a sequential mix with one direction is fine
    assert f["read_fraction"] == 1.0 and f["pattern"] == "sequential"


def test_block_size_distributions():
    f = flow("[j]\nrw=randread\nbssplit=4k/50:8k/30:16k/\n")
    assert f["size"] == "list" and f["align_bytes"] == 4096
    assert f["size_list"] == [
        {"bytes": 4096, "weight": 50},
        {"bytes": 8192, "weight": 30},
        {"bytes": 16384, "weight": 20},
    ]
    # Three entries without percentages get 33 each; the last one sorted takes the missing 1.
    f = flow("[j]\nrw=randread\nbssplit=4k:8k:16k\n")
    assert [e["weight"] for e in f["size_list"]] == [33, 33, 34]
    # Sizes round down to a multiple of the smallest (fio aligns buffer lengths to min bs).
    f = flow("[j]\nrw=randread\nbssplit=4k/10:6k/90\n")
    assert f["request_bytes"] == 4096 and "size" not in f
    # bsrange: lo + hi x u rounded down to a multiple of lo -> multiples of lo, equally likely.
    f = flow("[j]\nrw=randread\nbsrange=4k-16k\n")
    assert f["size_list"] == [{"bytes": b * 1024, "weight": 1} for b in (4, 8, 12, 16)]
    f = flow("[j]\nrw=randread\nbsrange=4k-10k\n")  # the top is capped: 10k gets half a share
    assert f["size_list"] == [{"bytes": 4096, "weight": 2}, {"bytes": 8192, "weight": 2}, {"bytes": 10240, "weight": 1}]
    f = flow("[j]\nrw=randread\nbsrange=512-8k\n")
    assert (f["size"], f["size_min_bytes"], f["size_max_bytes"]) == ("uniform", 512, 8192)
    # Per-direction sizes are fine when the job uses one direction only.
    f = flow("[j]\nrw=randread\nbs=4k,64k\n")
    assert f["request_bytes"] == 4096
    f = flow("[j]\nrw=randwrite\nbs=4k,64k\nblockalign=8k\n")
    assert f["request_bytes"] == 65536 and f["align_bytes"] == 8192


def test_random_distributions():
    f = flow("[j]\nrw=randread\nrandom_distribution=zipf:1.2\n")
    assert (f["pattern"], f["zipf_theta"], f["scramble"]) == ("zipf", 1.2, True)
    assert flow("[j]\nrw=randread\nrandom_distribution=zipf\n")["zipf_theta"] == 1.1  # fio's default
    f = flow("[j]\nrw=randread\nrandom_distribution=pareto:0.3\n")
    assert (f["pattern"], f["pareto_h"], f["scramble"]) == ("pareto", 0.3, True)
    f = flow("[j]\nrw=randread\nrandom_distribution=normal:10\n")
    assert f["pattern"] == "normal" and f["scramble"] is True
    assert math.isclose(f["normal_stdev_fraction"], math.sqrt(1 / 144 + 0.01 / 12))
    # Sequential jobs ignore the distribution, as fio does.
    assert flow("[j]\nrw=read\nrandom_distribution=zipf:1.2\n")["pattern"] == "sequential"


def test_open_loop_rates():
    f = flow("[j]\nrw=randread\nrate_iops=5000\n")
    assert (f["arrival"], f["rate_iops"]) == ("fixed", 5000.0) and "queue_depth" not in f
    f = flow("[j]\nrw=randwrite\nrate_iops=100,2000\nrate_process=poisson\n")
    assert (f["arrival"], f["rate_iops"]) == ("exponential", 2000.0)


def test_sync_engine_allows_depth_one_and_async_engines_take_iodepth():
    assert flow("[j]\nioengine=psync\n")["queue_depth"] == 1
    assert flow("[j]\nioengine=io_uring\niodepth=64\n")["queue_depth"] == 64


def test_notes_for_remaining_differences():
    conv = convert_fio("[j]\nrw=randrw\ndirect=0\n", TINY_DEVICE)
    text = " ".join(conv.notes)
    assert "random map" in text and "rwmix" in text and "page cache" in text
    assert "# note: [j] fio's random map" in conv.toml
    assert not convert_fio("[j]\nrw=randread\nnorandommap\ndirect=1\n", TINY_DEVICE).notes


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("[j]\nthinktime=10\n", ["t.fio:2", "[j]", "`thinktime`", "think time"]),
        ("[a]\n[b]\nstonewall\n", [":3", "[b]", "`stonewall`"]),
        ("[j]\nverify=md5\n", ["`verify`"]),
        ("[j]\nend_fsync=1\n", ["`end_fsync`"]),
        ("[j]\nrw=randrw\nfsync=4\n", ["`fsync`", "write-only"]),
        ("[j]\nzonemode=zbd\n", ["`zonemode`"]),
        ("[j]\nfoo=1\n", ["`foo`", "not supported"]),
        ("[j]\ninclude other.fio\n", ["include"]),
        ("bs=4k\n[j]\n", ["outside of a [section]"]),
        ("[global]\nbs=4k\n", ["no job section"]),
        ("[j]\nrw=randrw\nbs=4k,8k\n", ["`bs`", "different sizes"]),
        ("[j]\nrw=trimwrite\n", ["trimwrite"]),
        ("[j]\nrw=rw\n", ["separate sequential positions"]),
        ("[j]\nrw=randread\n" + "iodepth=32\n", ["iodepth=32", "psync", "queue depth 1", "libaio"]),
        ("[j]\nrw=randread\nrandom_distribution=zipf:1.2:0.3\n", ["center"]),
        ("[j]\nrw=randread\nrandom_distribution=zipf:1\n", ["1.0"]),
        ("[j]\nrw=randrw\nrate_iops=100\n", ["`rate_iops`", "each direction"]),
        ("[j]\nstartdelay=1-5\n", ["range"]),
        ("[j]\nrw=randread:4\n", ["postfix"]),
        ("[j]\nrw=write\nsize=1m\nio_size=2m\n", ["sequential job", "time_based"]),
        ("[j]\ntime_based\n", ["needs runtime"]),
        ("[j]\nbs=1000\n", ["not a positive multiple of 512"]),
        ("[j]\nsize=${SIZE}\n", ["environment"]),
        ("[j]\nioengine=null\n", ["`null`"]),
        ("[j]\nfilename=/dev/a:/dev/b\n", ["several files"]),
        ("[j]\nrwmixread=150\nrw=randrw\n", ["out of range"]),
    ],
)
def test_refusals_name_file_line_section_option(tmp_path, text, fragments):
    p = tmp_path / "t.fio"
    p.write_text(text)
    with pytest.raises(FioError) as e:
        fio_to_toml(str(p), TINY_DEVICE)
    msg = str(e.value)
    for f in fragments:
        assert f in msg, msg
    assert "supported options: ba, bs, bsrange, bssplit" in msg


def test_region_past_the_end_is_refused():
    cap = capacity()
    refused(f"[j]\noffset={cap - 4096}\nsize=8k\n", "past the end")


def test_refusal_through_cli_is_one_line(tmp_path):
    p = tmp_path / "bad.fio"
    p.write_text("[global]\nioengine=libaio\n[job1]\nrw=randread\nthinktime=5\n")
    r = cli("run", "--fio", str(p), "--no-progress")
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error: "), r.stderr
    assert f"{p}:5: [job1] option `thinktime`" in lines[0]


# --- overrides and the CLI ----------------------------------------------------------------------


def test_overrides_shape_capacity_and_are_applied():
    small = capacity()
    text = fio_to_toml("[j]\n", TINY_DEVICE, overrides=["flash.channels=1", "flow.0.requests=7"])
    doc = tomllib.loads(text)
    assert doc["flash"]["channels"] == 1
    assert doc["flow"][0]["range_bytes"] < small
    assert doc["flow"][0]["requests"] == 7
    assert "Overrides applied: flash.channels=1 flow.0.requests=7" in text


def test_default_base_is_mqsim_paper():
    doc = tomllib.loads(fio_to_toml("[j]\nrw=randread\n"))
    assert doc["flash"]["page_size_bytes"] == 8192 and [f["name"] for f in doc["flow"]] == ["j"]


def test_fio2toml_cli(tmp_path):
    dev = tmp_path / "dev.toml"
    dev.write_text(TINY_DEVICE)
    r = cli("fio2toml", os.path.join(DATA, "example.fio"), "--preset", "mqsim-paper")
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads(r.stdout)
    assert [f["name"] for f in doc["flow"]] == ["writers.0", "writers.1", "mixed", "stream"]
    out = tmp_path / "out.toml"
    r = cli("fio2toml", os.path.join(DATA, "equivalence.fio"), str(dev), "-o", str(out), "--seed", "9")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    doc = tomllib.loads(out.read_text())
    assert doc["run"]["seed"] == 9 and doc["flash"]["channels"] == 2


def test_example_jobs_convert():
    for name in sorted(os.listdir(DATA)):
        if name.endswith(".fio"):
            assert tomllib.loads(fio_to_toml(os.path.join(DATA, name)))["flow"]


# --- end to end: a fio job and its hand-written TOML give identical results ----------------------

# tests/data/fio/equivalence.fio written out by hand: ranges, limits, sizes and patterns as
# docs/fio.md says fio means them.
EQUIVALENT_TOML = (
    TINY_DEVICE
    + """
[[flow]]
name = "writer"
queue_depth = 4
read_fraction = 0.0
request_bytes = 4096
pattern = "random"
start_bytes = 0
range_bytes = 8388608
requests = 400
io_bytes = 8388608

[[flow]]
name = "reader"
queue_depth = 2
read_fraction = 1.0
size = "list"
size_list = [{ bytes = 4096, weight = 75 }, { bytes = 16384, weight = 25 }]
align_bytes = 4096
pattern = "zipf"
zipf_theta = 1.2
scramble = true
start_bytes = 8388608
range_bytes = 8388608
requests = 300
io_bytes = 8388608

[[flow]]
name = "seq"
arrival = "exponential"
rate_iops = 2000.0
read_fraction = 0.0
request_bytes = 65536
pattern = "sequential"
start_bytes = 16777216
range_bytes = 4194304
requests = 0
io_bytes = 4194304
start_ms = 10.0
"""
)

WALL_CLOCK = ("wall_time_s", "events_per_wall_s", "requests_per_wall_s")


def _strip(doc):
    for k in WALL_CLOCK:
        doc.pop(k, None)
    doc.get("device", {}).get("precondition", {}).pop("wall_time_s", None)
    for k in ("config_origin", "origin", "config_path"):
        doc.pop(k, None)
    return doc


def test_fio_run_equals_handwritten_toml(tmp_path):
    dev = tmp_path / "device.toml"
    dev.write_text(TINY_DEVICE)
    hand = tmp_path / "equivalent.toml"
    hand.write_text(EQUIVALENT_TOML)
    job = os.path.join(DATA, "equivalence.fio")
    a = cli("run", "--fio", job, str(dev), "--json", "--no-progress")
    assert a.returncode == 0, a.stderr
    b = cli("run", str(hand), "--json", "--no-progress")
    assert b.returncode == 0, b.stderr
    ja, jb = _strip(json.loads(a.stdout)), _strip(json.loads(b.stdout))
    assert json.dumps(ja, sort_keys=True) == json.dumps(jb, sort_keys=True)
    assert [f["name"] for f in ja["flows"]] == ["writer", "reader", "seq"]
    assert sum(f["completed"] for f in ja["flows"]) > 0


def test_fsync_becomes_flush_every():
    # fio syncs after every N writes: a write-only job's flows flush every N requests.
    f = flow("[j]\nrw=randwrite\nbs=4k\nsize=1m\nfsync=32\n")
    assert f["flush_every"] == 32
    assert flow("[j]\nrw=write\nbs=4k\nsize=1m\nfdatasync=8\n")["flush_every"] == 8
    assert "flush_every" not in flow("[j]\nrw=randwrite\nbs=4k\nsize=1m\nfsync=0\n")
