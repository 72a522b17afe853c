"""The host's side of completions from Python (docs/host.md): typed views of app_stats and
device.host, and the summary lines."""

import ssdkit

QD1 = {
    "ftl.cmt.mode": "ideal",
    "cache.mode": "off",
    "flash.blocks_per_plane": 128,
    "precondition.mode": "sequential",
    "flow.0.queue_depth": 1,
    "flow.0.requests": 300,
}


def test_interrupt_views_and_summary():
    r = ssdkit.run("mqsim-paper", overrides={**QD1, "host.completion": "interrupt"})
    h = r.device.host
    assert isinstance(h, ssdkit.HostResult) and h.completion == "interrupt"
    assert h.interrupts == h.completions == h.cq_doorbells == 300
    assert h.completions_per_interrupt == 1.0 and len(h.core_busy_us) == h.cores == 1
    app, cq = r.device.app_stats.read.latency, r.device.stats.read.latency
    # ISR 1.0 + scan 0.1 + DPC 0.5 us, and the MSI on the link, after each completion entry.
    assert 1.6 < app.mean - cq.mean < 1.61
    assert r.flows[0].app_stats.read.count == 300
    text = r.summary()
    assert "interrupts 300 (1.00 completions each, 0 by the timer)" in text
    assert "app read latency" in text


def test_polled_and_none():
    r = ssdkit.run("mqsim-paper", overrides={**QD1, "host.completion": "polled"})
    assert r.device.host.polls == 300 and r.device.host.vectors == 0
    assert abs(r.device.app_stats.read.latency.mean - r.device.stats.read.latency.mean - 0.7) < 1e-3
    plain = ssdkit.run("mqsim-paper", overrides=QD1)
    assert plain.device.host is None and plain.device.app_stats is None and plain.flows[0].app_stats is None
    assert "app read latency" not in plain.summary()
