"""ssdkit.models and `ssdkit model`: the papers' analytical models against the papers' printed
values, against independent implementations (scipy's linregress for the fit), and against the
simulator (IBM's linear model fitted to simulated X25-M runs)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest
import ssdkit
from scipy import stats
from ssdkit import models

SIZES = [4096 << k for k in range(8)]


def test_x25m_tables_4_and_5_from_the_preset_to_the_printed_digit():
    rows = {(r["op"], r["request_bytes"]): r for r in models.x25m("x25m", request_bytes=[4096, 512 * 1024])}
    # Table 4 (single page, Eq. 1-2) and Table 5 (512 KiB records, Eq. 6-7; MiB/s printed as MB/s).
    assert f"{rows['write', 4096]['iops']:.1f}" == "947.9"
    assert f"{rows['read', 4096]['iops']:.1f}" == "4201.7"
    assert f"{rows['read', 512 * 1024]['mib_per_s']:.1f}" == "220.3"
    assert f"{rows['write', 512 * 1024]['mib_per_s']:.1f}" == "65.7"
    assert rows["write", 512 * 1024]["pages"] == 128 and rows["write", 512 * 1024]["cycles"] == 7


def test_x25m_params_follow_the_configuration():
    p = models.X25mParams.from_config("x25m", write=False, overrides={"flash.bus.channel_switch_read_us": 20})
    assert (p.ch_us, p.cell_us, p.rho, p.page_bytes) == (20, 140, 20, 4096)
    assert p.reg_us == pytest.approx(82.0, rel=1e-12)
    # Eq. 2, then Eq. 7 with no wait (reads are short): R_ch (N - 1) + R_page.
    assert p.page_us() == pytest.approx(20 + 82 + 140, rel=1e-12)
    assert p.t_wait_us() == 0
    assert p.record_us(50) == pytest.approx(20 * 49 + p.page_us(), rel=1e-12)
    w = models.X25mParams(ch_us=33, reg_us=82, cell_us=940, rho=20, page_bytes=4096)
    # Eq. 3-4: the next cycle waits for the first chip; Eq. 6 over 3 cycles.
    assert w.t_wait_us() == 1055 - 33 * 20 and w.t_cycle_us() == 1055
    assert w.record_us(41) == 33 * 40 + 395 * 2 + 1055


def test_nvme_terms_on_a_pcie_3_x4_link_by_hand():
    ov = {"pcie.generation": 3, "pcie.lanes": 4, "pcie.packet_overhead_bytes": 24, "pcie.max_payload_bytes": 256}
    ov["pcie.max_read_request_bytes"] = 512
    rows = {(r["op"], r["request_bytes"]): r for r in models.nvme("nvmesim-block", overrides=ov, request_bytes=[4096])}
    # Table I: PCIe 3.0 is 8 GT/s per lane with 128b/130b coding; every TLP carries 24 bytes more.
    us = lambda n: n / (4 * 8e9 * 128 / 130 / 8) * 1e6
    read, write = rows["read", 4096], rows["write", 4096]
    assert read["db_write_us"] == pytest.approx(us(4 + 24), rel=1e-12)
    assert read["io_req_us"] == pytest.approx(us(24), rel=1e-12)
    assert read["io_fetch_us"] == pytest.approx(us(64 + 24), rel=1e-12)
    assert read["dma_us"] == pytest.approx(us(4096 + 16 * 24), rel=1e-12)
    assert write["dma_us"] == pytest.approx(8 * us(24) + us(4096 + 16 * 24), rel=1e-12)
    assert read["cpl_submit_us"] == pytest.approx(us(16 + 24), rel=1e-12) and read["stall_us"] == 0
    eq3 = sum(read[k] for k in ("db_write_us", "io_req_us", "io_fetch_us", "cpl_submit_us", "msi_us"))
    assert read["overhead_us"] == pytest.approx(eq3, rel=1e-12)
    assert read["latency_us"] == pytest.approx(eq3 + read["dma_us"] + read["nvm_us"], rel=1e-12)


def test_nvme_stall_bound_and_the_simulator_above_it():
    [r] = [r for r in models.nvme("nvmesim-dram", request_bytes=[64], queue_depth=16) if r["op"] == "read"]
    # A read's request header, data and completion and the MSI go up; the doorbell and the
    # command come down.
    up = r["io_req_us"] + r["dma_us"] + r["cpl_submit_us"] + r["msi_us"]
    assert r["up_us"] == pytest.approx(up, rel=1e-12)
    assert r["down_us"] == pytest.approx(r["db_write_us"] + r["io_fetch_us"], rel=1e-12)
    assert r["stall_bound_us"] == pytest.approx(16 * up - r["latency_us"], rel=1e-12) and r["stall_bound_us"] > 0
    assert models.nvme("nvmesim-dram", request_bytes=[64])[0]["stall_bound_us"] == 0
    # 16 DRAM-like reads in flight on PCIe 2.0 x1: the link carries one read per `up`, so each
    # takes at least 16 x up. Little's law needs the whole loop inside the latency: the host
    # handles completions at once (its interrupt service would otherwise hold the next request).
    n = 20000
    ov = {"flow.0.queue_depth": 16, "flow.0.requests": n, "host.completion": "none"}
    res = ssdkit.run("nvmesim-dram", overrides=ov)
    lat = res.flows[0].stats.read.latency.mean
    # With no MSI the unloaded latency is Eq. 1-2's less the MSI's packet, and so is `up`.
    bound = 16 * (up - r["msi_us"])
    assert lat >= bound * (1 - 16 / n), (lat, bound)
    assert lat <= bound * 1.01, (lat, bound)  # the link saturated: within 1 % of the bound
    with pytest.raises(ValueError, match="queue_depth must be an integer of at least 1"):
        models.nvme("nvmesim-dram", queue_depth=0)


def test_nvme_overhead_shares_as_nvmesim_finds():
    # NVMeSim Figure 3a: the NVMe information is 0.15 % of a 4 KiB read on the Block NVM and
    # 0.03 % of a write; Figure 3b (PCIe 2.0 x1, 64 B): 44 % of a DRAM-like read, 4 % of a
    # write. With ssdkit's packets (the whole 64-byte command) the DRAM-like shares come out
    # higher, but the order holds: negligible for blocks, dominant for small DRAM-like reads.
    block = {r["op"]: r["overhead_share"] for r in models.nvme("nvmesim-block", request_bytes=[4096])}
    assert block["read"] < 0.005 and block["write"] < block["read"]
    dram = {r["op"]: r["overhead_share"] for r in models.nvme("nvmesim-dram", request_bytes=[64])}
    assert dram["read"] > 0.4 and dram["write"] < dram["read"] / 2


def test_write_amplification_closed_forms():
    # A random victim holds the mean valid count: WA = 1 / spare, exactly.
    for spare in (0.125, 0.25, 0.5):
        r = models.write_amplification(gc_policy="random", spare_factor=spare, pages_per_block=64)
        assert r["wa"] == pytest.approx(1 / spare, rel=1e-9)
    # The configuration's own keys give the same figure as naming them.
    by_config = models.write_amplification("mqsim-paper", overrides={"ftl.gc_policy": "greedy"})
    named = models.write_amplification(
        gc_policy="greedy", spare_factor=by_config["spare_factor"], pages_per_block=by_config["pages_per_block"]
    )
    assert by_config["wa"] == named["wa"] and "greedy" in by_config["model"]
    # Greedy below FIFO, which has the closed form 1 / (1 - u), u = exp(-alpha (1 - u)).
    fifo = models.write_amplification(gc_policy="fifo", spare_factor=0.1, pages_per_block=256)["wa"]
    greedy = models.write_amplification(gc_policy="greedy", spare_factor=0.1, pages_per_block=256)["wa"]
    u, alpha = 1 - 1 / fifo, 1 / 0.9
    assert abs(u - math.exp(-alpha * (1 - u))) < 1e-12
    assert 1 < greedy < fifo


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"gc_policy": "lru", "spare_factor": 0.1, "pages_per_block": 64}, "unknown gc_policy 'lru'"),
        ({"gc_policy": "greedy", "spare_factor": 1.5, "pages_per_block": 64}, "spare factor must be in (0, 1)"),
        ({"gc_policy": "greedy"}, "give a configuration, or all of"),
    ],
)
def test_write_amplification_refuses_bad_parameters(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        models.write_amplification(**kw)


def test_linear_fit_agrees_with_scipy_linregress():
    rng = random.Random(7)
    xs = [rng.choice(SIZES) for _ in range(40)]
    ys = [150 + 0.004 * x + rng.gauss(0, 20) for x in xs]
    f = models.fit_linear(xs, ys, pattern="rand-read", confidence=0.9)
    ref = stats.linregress(xs, ys)
    assert f.a_us == pytest.approx(ref.intercept, rel=1e-10)
    assert f.b_us_per_byte == pytest.approx(ref.slope, rel=1e-10)
    assert f.se_b_us_per_byte == pytest.approx(ref.stderr, rel=1e-10)
    assert f.se_a_us == pytest.approx(ref.intercept_stderr, rel=1e-10)
    assert f.r2 == pytest.approx(ref.rvalue**2, rel=1e-10)
    t = stats.t.ppf(0.95, len(xs) - 2)
    assert f.ci_b_us_per_byte == pytest.approx((ref.slope - t * ref.stderr, ref.slope + t * ref.stderr), rel=1e-10)
    assert f.predict_us(8192) == pytest.approx(ref.intercept + 8192 * ref.slope, rel=1e-12)
    assert f.throughput_bytes_per_s(8192) == pytest.approx(8192 / f.predict_us(8192) * 1e6, rel=1e-12)


def test_linear_fit_refuses_too_few_points():
    with pytest.raises(ValueError, match="at least 3 points at 2 or more sizes, got 2"):
        models.fit_linear([4096, 8192], [1.0, 2.0], pattern="seq-read")
    with pytest.raises(ValueError, match="got 3 at 1"):
        models.fit_linear([4096] * 3, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="point 1: needs pattern, request_bytes and latency_us"):
        models.fit_ibm([{"pattern": "a", "request_bytes": 1, "latency_us": 1}, {"pattern": "a"}])


def _simulated_points() -> list[dict]:
    """QD1 mean latency of the x25m preset for IBM's four patterns at 4 KiB to 512 KiB, with the
    host link ideal and no firmware time, as the X25-M model assumes; freshly filled (no GC)."""
    points = []
    for pattern in ("sequential", "random"):
        for op, rf in (("read", 1), ("write", 0)):
            for size in SIZES:
                r = ssdkit.run(
                    "x25m",
                    overrides={
                        "interface.link_model": "ideal",
                        "precondition.mode": "sequential",
                        "flow.0.queue_depth": 1,
                        "flow.0.read_fraction": rf,
                        "flow.0.request_bytes": size,
                        "flow.0.pattern": pattern,
                        "flow.0.requests": 30,
                    },
                )
                points.append(
                    {
                        "pattern": f"{'seq' if pattern == 'sequential' else 'rand'}-{op}",
                        "request_bytes": size,
                        "latency_us": r.device.stats.all.latency.mean,
                    }
                )
    return points


def test_ibm_linear_model_on_simulated_x25m_matches_eq_6_7():
    fits = models.fit_ibm(_simulated_points())
    assert sorted(fits) == ["rand-read", "rand-write", "seq-read", "seq-write"]
    rows = models.x25m("x25m", request_bytes=SIZES)
    for pattern, f in fits.items():
        op = pattern.split("-")[1]
        line = models.fit_linear(
            [r["request_bytes"] for r in rows if r["op"] == op], [r["latency_us"] for r in rows if r["op"] == op]
        )
        assert f.r2 > 0.99, (pattern, f.r2)
        # A and B of the simulated runs are the X25-M model's intercept and slope (the line
        # through Eq. 6-7 at the same sizes; for reads Eq. 7 is that line exactly). With the
        # link ideal every QD1 request takes Eq. 6-7 to the picosecond, so the fits agree to
        # rounding (the issue asks for 2 %).
        assert f.a_us == pytest.approx(line.a_us, rel=1e-6), (pattern, f, line)
        assert f.b_us_per_byte == pytest.approx(line.b_us_per_byte, rel=1e-6), (pattern, f, line)


def test_cli_model_prints_the_tables_and_json():
    run = lambda *a: subprocess.run(
        [sys.executable, "-m", "ssdkit", "model", *a], capture_output=True, text=True, check=False
    )
    p = run("x25m", "x25m")
    assert p.returncode == 0, p.stderr
    assert "W_page 1055 us (Eq. 1)" in p.stdout and "R_page 238 us (Eq. 2)" in p.stdout
    assert "947.9" in p.stdout and "220.3" in p.stdout
    p = run("x25m", "x25m", "--request-bytes", "4k,1m", "--json")
    rows = json.loads(p.stdout)
    assert [r["request_bytes"] for r in rows] == [4096, 1 << 20] * 2
    p = run("nvme", "nvmesim-dram", "--request-bytes", "64", "--queue-depth", "16")
    assert p.returncode == 0 and "Eq. 1-2" in p.stdout and len(p.stdout.splitlines()) == 7, p.stdout + p.stderr
    assert "T_stall at queue depth 16" in p.stdout and "T_stall >= 4.6508" in p.stdout
    p = run("wa", "mqsim-paper", "--set", "ftl.gc_policy=random", "--json")
    [r] = json.loads(p.stdout)
    assert r["wa"] == pytest.approx(1 / r["spare_factor"], rel=1e-3)
    for args, message in [
        (("x25m", "x25m", "--request-bytes", "4q"), "--request-bytes: '4q' is not a size"),
        (("wa", "x25m", "--request-bytes", "4k"), "applies to the x25m and nvme models only"),
        (("x25m",), "give a configuration"),
        (("x25m", "x25m", "--set", "flash.channels=0"), "flash.channels"),
    ]:
        p = run(*args)
        assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
