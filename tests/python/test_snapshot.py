"""Preconditioning to a snapshot file and running from it (ssdkit.precondition, run(snapshot=))."""

import math
import os
import pathlib

import pytest
import ssdkit
from conftest import TINY, TINY_WRITES

MODES = ["fast", "write", "sequential", "empty"]
# Fields that measure the host running the simulation, not the simulated device.
WALL_CLOCK_KEYS = {"wall_time_s", "events_per_wall_s", "requests_per_wall_s"}
# Record keys about the host or the file, not the device state.
VOLATILE = {"wall_time_s", "snapshot", "snapshot_bytes", "snapshot_save_s", "snapshot_load_s"}


def simulated(r):
    """The result document without wall-clock fields and without device.precondition (which
    differs between a direct run and a run from a snapshot by design)."""
    doc = {k: v for k, v in r.raw.items() if k not in WALL_CLOCK_KEYS}
    doc["device"] = {k: v for k, v in doc["device"].items() if k != "precondition"}
    return doc


def assert_same_record(a, b):
    """Two preconditioning records describe the same state: equal keys and values, floats to
    1e-12 (a snapshot keeps its record as JSON text), host and file keys aside."""
    a = {k: v for k, v in a.items() if k not in VOLATILE}
    b = {k: v for k, v in b.items() if k not in VOLATILE}
    assert a.keys() == b.keys()
    for k, v in b.items():
        if isinstance(v, float) or (isinstance(v, list) and v and isinstance(v[0], float)):
            assert a[k] == pytest.approx(v, rel=1e-12), k
        else:
            assert a[k] == v, k


@pytest.fixture
def snap(tmp_path):
    """A fast-mode snapshot of TINY for 4 KiB random writes."""
    path = tmp_path / "device.snap"
    ssdkit.precondition("mqsim-paper", path, overrides=TINY_WRITES)
    return path


def test_precondition_returns_typed_record(tmp_path):
    path = tmp_path / "device.snap"
    p = ssdkit.precondition("mqsim-paper", path, overrides=TINY_WRITES)
    assert isinstance(p, ssdkit.Precondition)
    assert p.mode == "fast"
    assert p.snapshot == str(path)
    assert p.snapshot_bytes == os.path.getsize(path) > 0
    assert p.snapshot_save_s >= 0 and p.wall_time_s >= 0
    assert "greedy" in p.model
    # A 7 % spare factor under uniform random 4 KiB writes: write amplification well above 1.
    assert p.write_amplification == p.raw["predicted_write_amplification"] > 2
    assert p.raw["mode"] == "fast" and p.raw["snapshot"] == str(path)
    assert p.raw["footprint_pages"] == p.raw["hot_pages"] > 0
    assert os.listdir(tmp_path) == ["device.snap"]  # no temporary file left behind
    s = p.summary()
    assert str(p) == s
    for word in ["fast", p.model, str(path), f"{p.snapshot_bytes:,} bytes"]:
        assert word in s
    with pytest.raises(AttributeError):
        p.mode = "write"  # frozen


@pytest.mark.parametrize("mode, gc", [(m, "greedy") for m in MODES] + [("write", "d_choices"), ("fast", "random")])
def test_run_from_snapshot_equals_direct_run(tmp_path, mode, gc):
    # d-choices and random GC draw victims from the device's GC stream: write
    # preconditioning uses it, and a snapshot carries it into the run as preconditioning does.
    ov = {**TINY_WRITES, "precondition.mode": mode, "ftl.gc_policy": gc}
    path = tmp_path / f"{mode}.snap"
    p = ssdkit.precondition("mqsim-paper", path, overrides=ov)
    assert p.mode == mode
    direct = ssdkit.run("mqsim-paper", overrides=ov)
    from_snap = ssdkit.run("mqsim-paper", overrides=ov, snapshot=path)

    assert from_snap.device.stats == direct.device.stats
    assert from_snap.device.ftl == direct.device.ftl
    assert from_snap.device.flash == direct.device.flash
    assert from_snap.device.erase_counts == direct.device.erase_counts
    assert simulated(from_snap) == simulated(direct)  # and everything else too
    if mode != "empty":  # an empty device has all its blocks free: no GC in 3000 writes
        assert direct.device.ftl.gc_runs > 0

    assert direct.device.precondition_mode == from_snap.device.precondition_mode == mode
    rec, direct_rec = from_snap.device.precondition, direct.device.precondition
    assert rec["snapshot"] == str(path) and rec["snapshot_load_s"] >= 0
    assert set(rec) == set(direct_rec) | {"snapshot", "snapshot_load_s"}
    assert set(p.raw) == set(direct_rec) | {"snapshot", "snapshot_bytes", "snapshot_save_s"}
    assert_same_record(rec, direct_rec)
    assert_same_record(p.raw, direct_rec)


def test_snapshot_is_reusable_and_unchanged(snap):
    before = snap.read_bytes()
    a = ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=snap, seed=5)
    b = ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=str(snap), seed=5)
    c = ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=snap, seed=6)
    assert simulated(a) == simulated(b)
    assert a.device.stats.write.latency != c.device.stats.write.latency
    assert snap.read_bytes() == before
    # A different workload on the same device state: the snapshot fixes the device only.
    r = ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "flow.0.read_fraction": 1.0}, snapshot=snap)
    assert r.device.stats.read.count == 3000 and r.device.ftl.unmapped_page_reads == 0


def test_precondition_takes_run_argument_forms(tmp_path):
    text = ssdkit.preset_toml("mqsim-paper")
    toml_path = tmp_path / "dev.toml"
    toml_path.write_text(text)
    ref = ssdkit.precondition("mqsim-paper", tmp_path / "a.snap", overrides=TINY_WRITES, seed=3)
    kw = {k.replace(".", "__"): v for k, v in TINY_WRITES.items()}
    forms = [
        ssdkit.precondition(text, str(tmp_path / "b.snap"), overrides=TINY_WRITES, seed=3),
        ssdkit.precondition(
            str(toml_path),
            tmp_path / "c.snap",
            overrides=[f"{k}={v}" for k, v in TINY.items()] + ["flow.0.read_fraction=0.0", "run.seed=3"],
        ),
        ssdkit.precondition(pathlib.Path(toml_path), tmp_path / "d.snap", seed=3, **kw),
        ssdkit.precondition(preset="mqsim-paper", output=tmp_path / "e.snap", overrides=TINY_WRITES, seed=3),
    ]
    for p in forms:
        assert_same_record(p.raw, ref.raw)
    # Same configuration and seed: the same device. Runs from each snapshot agree.
    runs = [ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=p.snapshot) for p in [ref, *forms]]
    assert all(simulated(r) == simulated(runs[0]) for r in runs)
    other = ssdkit.precondition("mqsim-paper", tmp_path / "f.snap", overrides=TINY_WRITES, seed=4)
    r4 = ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=other.snapshot)
    assert r4.device.erase_counts != runs[0].device.erase_counts  # the seed shapes the state


def test_corrupt_snapshot(snap):
    data = bytearray(snap.read_bytes())
    data[len(data) // 2] ^= 0xFF
    snap.write_bytes(bytes(data))
    with pytest.raises(ssdkit.SsdkitIoError, match="corrupt|checksum") as e:
        ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=snap)
    assert str(snap) in str(e.value)


@pytest.mark.parametrize("cut", ["in the header", "in the tables", "in the checksum"])
def test_truncated_snapshot(snap, cut):
    data = snap.read_bytes()
    keep = {"in the header": 20, "in the tables": len(data) // 2, "in the checksum": len(data) - 2}[cut]
    snap.write_bytes(data[:keep])
    with pytest.raises(ssdkit.SsdkitIoError, match="truncated") as e:
        ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=snap)
    assert str(snap) in str(e.value)


def test_snapshot_of_another_device(snap):
    with pytest.raises(ssdkit.SsdkitIoError, match=r"flash\.blocks_per_plane") as e:
        ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "flash.blocks_per_plane": 256}, snapshot=snap)
    assert str(snap) in str(e.value) and "128" in str(e.value) and "256" in str(e.value)
    with pytest.raises(ssdkit.SsdkitIoError, match=r"ftl\.spare_factor"):
        ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "ftl.spare_factor": 0.2}, snapshot=snap)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "not an ssdkit snapshot"),
        (b"[flash]\nchannels = 4\n" * 20, "not an ssdkit snapshot"),
        (bytes(range(256)) * 16, "not an ssdkit snapshot"),
    ],
)
def test_not_a_snapshot(tmp_path, content, fragment):
    path = tmp_path / "x.snap"
    path.write_bytes(content)
    with pytest.raises(ssdkit.SsdkitIoError, match=fragment) as e:
        ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=path)
    assert str(path) in str(e.value)


def test_missing_snapshot_and_unwritable_output(tmp_path):
    missing = tmp_path / "nope.snap"
    with pytest.raises(ssdkit.SsdkitIoError, match="nope.snap"):
        ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=missing)
    with pytest.raises(ssdkit.SsdkitIoError, match="no/dir"):
        ssdkit.precondition("mqsim-paper", tmp_path / "no" / "dir" / "x.snap", overrides=TINY_WRITES)
    (tmp_path / "sub").mkdir()
    with pytest.raises(ssdkit.SsdkitIoError, match="directory"):
        ssdkit.precondition("mqsim-paper", tmp_path / "sub", overrides=TINY_WRITES)
    assert os.listdir(tmp_path) == ["sub"]  # nothing written beside it either


def test_precondition_errors(tmp_path):
    out = tmp_path / "x.snap"
    with pytest.raises(ssdkit.ConfigError, match=r"precondition\.mode"):
        ssdkit.precondition("mqsim-paper", out, overrides={**TINY, "precondition.mode": "warm"})
    with pytest.raises(ssdkit.ConfigError, match=r"flash\.channels"):
        ssdkit.precondition("mqsim-paper", out, flash__channels=0)
    with pytest.raises(ssdkit.PresetError, match="mqsim-paper"):
        ssdkit.precondition("no-such-preset", out)
    with pytest.raises(ssdkit.ConfigError, match="no configuration"):
        ssdkit.precondition(output=out)
    with pytest.raises(TypeError, match="output"):
        ssdkit.precondition("mqsim-paper")
    with pytest.raises(TypeError, match="snapshot"):
        ssdkit.run("mqsim-paper", overrides=TINY_WRITES, snapshot=3)
    assert os.listdir(tmp_path) == []


def test_precondition_modes_records(tmp_path):
    recs = {
        m: ssdkit.precondition("mqsim-paper", tmp_path / f"{m}.snap", overrides={**TINY_WRITES, "precondition.mode": m})
        for m in MODES
    }
    w = recs["write"].raw
    assert w["stable"] is True and w["drive_writes"] >= w["min_drive_writes"]
    assert w["write_amplification"] == w["window_write_amplification"][-1] > 2
    assert math.isclose(recs["write"].write_amplification, w["write_amplification"])
    assert recs["write"].model is None
    for m in ("sequential", "empty"):
        assert recs[m].write_amplification is None and set(recs[m].raw) >= {"mode", "wall_time_s", "snapshot"}
    # Ground truth (write mode) and the fast model agree on the order of magnitude.
    assert 0.5 < recs["fast"].write_amplification / recs["write"].write_amplification < 2


def test_sustained_writes_on_a_small_device_complete():
    """Default settings (preemptible GC), a small device, 4 KiB random writes: the run
    finishes with GC active, preemptible or not (an earlier core stalled here)."""
    for preemptible in (True, False):
        ov = {**TINY_WRITES, "ftl.gc_preemptible": preemptible, "flow.0.requests": 20000}
        r = ssdkit.run("mqsim-paper", overrides=ov)
        assert r.completed == 20000 and r.device.ftl.gc_runs > 0
