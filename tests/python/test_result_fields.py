"""Typed access to the result fields added within schema version 1: TRIM statistics, the new
FTL and flash counters, erase counts and the preconditioning record."""

import copy

import pytest
import ssdkit
from conftest import TINY_WRITES
from ssdkit.result import EraseCounts, Result

# Half reads, 30 % TRIMs, 20 % writes of 16 KiB.
TRIM_MIX = {
    **TINY_WRITES,
    "flow.0.read_fraction": 0.5,
    "flow.0.trim_fraction": 0.3,
    "flow.0.request_bytes": 16384,
    "flow.0.requests": 2000,
}


@pytest.fixture(scope="module")
def trim_result():
    return ssdkit.run("mqsim-paper", overrides=TRIM_MIX)


def test_trim_stats(trim_result):
    r = trim_result
    [flow] = r.flows
    s = flow.stats
    assert s.trim.count > 0 and s.read.count > 0 and s.write.count > 0
    # `all` is reads and writes only; the flow completed all three kinds.
    assert s.all.count == s.read.count + s.write.count
    assert flow.completed == s.read.count + s.write.count + s.trim.count == 2000
    assert 0.2 < s.trim.count / 2000 < 0.4
    assert s.trim.bytes == s.trim.count * 16384
    assert s.trim.latency.min <= s.trim.latency.p50 <= s.trim.latency.max
    # One flow: the device's requests are the flow's; its rates are over the window to the
    # device going idle (GC after the last completion included), the flow's over its own.
    d = r.device.stats.trim
    assert (d.count, d.bytes, d.latency, d.histogram) == (s.trim.count, s.trim.bytes, s.trim.latency, s.trim.histogram)
    assert d.iops == d.count / r.simulated_time_s
    assert s.trim.iops == s.trim.count / flow.active_time_s
    ftl = r.device.ftl
    assert ftl.trim_requests == s.trim.count
    assert 0 < ftl.trimmed_pages <= ftl.trim_requests * 4  # 16 KiB = 4 pages of 4 KiB
    assert ftl["trimmed_pages"] == ftl.trimmed_pages


def test_trim_rows_in_pandas_and_summary(trim_result, small_result):
    df = trim_result.to_pandas()
    assert list(df["op"]) == ["read", "write", "all", "trim"] * 2
    trim = df[(df.scope == "device") & (df.op == "trim")].iloc[0]
    assert trim["count"] == trim_result.device.stats.trim.count
    assert trim["latency_p50_us"] == trim_result.device.stats.trim.latency.p50
    # Without TRIMs there are no trim rows.
    assert "trim" not in set(small_result.to_pandas()["op"])
    assert small_result.device.stats.trim.count == 0
    s = trim_result.summary()
    rows = [ln.split() for ln in s.splitlines()]
    assert ["device", "trim", f"{trim_result.device.stats.trim.count:,}"] in [r[:3] for r in rows]
    assert "TRIM requests" in s and "trimmed pages" in s
    assert "TRIM requests" not in small_result.summary()


def test_erase_counts_consistent(trim_result, small_result):
    for r, blocks in [(trim_result, 2 * 128), (small_result, 8 * 4 * 2 * 2 * 128)]:
        ec = r.device.erase_counts
        assert isinstance(ec, EraseCounts)
        assert ec.blocks == blocks
        assert ec.min <= ec.mean <= ec.max and ec.std >= 0
        h = ec.histogram
        assert sum(h.count) == ec.blocks
        assert len(h.bin_start) == len(h.count) >= 1 and h.bin_width >= 1
        assert h.bin_start[0] == ec.min
        assert all(b - a == h.bin_width for a, b in zip(h.bin_start, h.bin_start[1:]))
        assert h.bin_start[-1] <= ec.max < h.bin_start[-1] + h.bin_width
        assert ec.to_dict() == r.raw["device"]["erase_counts"]
    # A fast-preconditioned device under random writes carries its assumed history of wear;
    # a device preconditioned for reads only (no random-write footprint) has none.
    assert trim_result.device.erase_counts.mean > 1
    assert small_result.device.erase_counts.max == 0


def test_erase_counts_follow_erases():
    r = ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "precondition.mode": "empty", "flow.0.requests": 20000})
    ec = r.device.erase_counts
    # Starting from zero wear, every block erase during the run adds one to one block.
    assert ec.mean * ec.blocks == pytest.approx(r.device.flash.block_erases)
    assert r.device.flash.block_erases > 0


def test_precondition_record_and_mode(trim_result, small_result):
    rec = trim_result.device.precondition
    assert trim_result.device.precondition_mode == rec["mode"] == "fast"
    assert rec["predicted_write_amplification"] > 1 and "greedy" in rec["model"]
    assert rec["gc_start_free_pages"] >= 1 and rec["history_drive_writes"] == 10
    assert small_result.device.precondition_mode == "fast"
    for mode in ["write", "sequential", "empty"]:
        r = ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "precondition.mode": mode, "flow.0.requests": 200})
        assert r.device.precondition_mode == mode
        assert r.device.precondition["wall_time_s"] >= 0
    s = trim_result.summary()
    assert "precondition" in s and "fast" in s and "predicted WA" in s
    assert "erase count" in s and f"max {trim_result.device.erase_counts.max:,}" in s


def test_ftl_and_flash_counters():
    r = ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "ftl.gc_copyback": True})
    fl, ftl = r.device.flash, r.device.ftl
    assert ftl.gc_copyback_moves == ftl.gc_page_moves > 0
    assert fl.copyback_programs == ftl.gc_copyback_moves
    assert "GC copyback moves" in r.summary() and "copyback programs" in r.summary()
    plain = ssdkit.run("mqsim-paper", overrides=TINY_WRITES)
    assert plain.device.ftl.gc_copyback_moves == plain.device.flash.copyback_programs == 0
    assert "copyback" not in plain.summary()
    # 8,000 writes leave an erase-count spread of 5 on this device (with one collection per
    # block opened, no refill after the run): a threshold of 3 is crossed.
    wl_ov = {**TINY_WRITES, "ftl.wl_static": True, "ftl.wl_static_threshold": 3, "flow.0.requests": 8000}
    wl = ssdkit.run("mqsim-paper", overrides=wl_ov)
    assert wl.device.ftl.wl_migrations > 0 and "WL migrations" in wl.summary()
    for k in ["gc_background_runs", "gc_copyback_moves", "wl_migrations", "trim_requests", "trimmed_pages"]:
        assert getattr(r.device.ftl, k) == r.raw["device"]["ftl"][k]


def test_background_gc_counter():
    # A 20 % spare factor leaves room for a background threshold above the foreground one.
    ov = {
        **TINY_WRITES,
        "ftl.spare_factor": 0.2,
        "ftl.gc_background": True,
        "ftl.gc_background_threshold": 0.1,
        "flow.0.queue_depth": 1,
    }
    r = ssdkit.run("mqsim-paper", overrides=ov)
    assert 0 < r.device.ftl.gc_background_runs <= r.device.ftl.gc_runs
    assert "GC background runs" in r.summary()


def test_document_without_new_fields_still_reads(small_result):
    """Schema version 1 documents written before these fields were added still load."""
    old = copy.deepcopy(small_result.raw)
    dev = old["device"]
    for k in ["erase_counts", "precondition"]:
        del dev[k]
    for k in ["gc_background_runs", "gc_copyback_moves", "wl_migrations", "trim_requests", "trimmed_pages"]:
        del dev["ftl"][k]
    del dev["flash"]["copyback_programs"]
    for st in [dev["stats"], *(f["stats"] for f in old["flows"])]:
        del st["trim"]
    r = Result.from_dict(old)
    assert r.device.erase_counts is None and r.device.precondition == {} and r.device.precondition_mode is None
    assert r.device.stats.trim.count == 0 and r.device.ftl.wl_migrations == 0
    assert r.device.stats.read == small_result.device.stats.read
    assert "precondition" not in r.summary() and "erase count" not in r.summary()
    assert len(r.to_pandas()) == 6
    # A field that was always there is still required.
    del old["device"]["ftl"]["gc_runs"]
    with pytest.raises(ssdkit.SsdkitError, match="gc_runs"):
        Result.from_dict(old)
