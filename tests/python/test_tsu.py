"""The [tsu] section from Python: suspension counts in the typed result and the summary."""

import ssdkit
from conftest import TINY

READER_BESIDE_WRITER = {
    **TINY,
    "precondition.mode": "sequential",
    "flow.0.queue_depth": 1,
    "flow.0.read_fraction": 1.0,
    "flow.0.requests": 1000,
    "flow.1.queue_depth": 4,
    "flow.1.read_fraction": 0.0,
    "flow.1.requests": 1000,
}


def test_suspension_is_typed_and_summarised():
    r = ssdkit.run("mqsim-paper", overrides={**READER_BESIDE_WRITER, "tsu.suspension": "program"})
    su = r.device.suspension
    assert isinstance(su, ssdkit.SuspensionResult)
    assert su.program_suspensions > 0 and su.erase_suspensions == 0
    assert su.suspended_us == r.raw["device"]["suspension"]["suspended_us"] > 0
    assert "suspensions" in r.summary() and f"programs {su.program_suspensions:,}" in r.summary()
    off = ssdkit.run("mqsim-paper", overrides=READER_BESIDE_WRITER)
    assert off.device.suspension is None and "suspensions" not in off.summary()
    # The reader's tail falls with suspension.
    assert r.flows[0].stats.read.latency.p99 < off.flows[0].stats.read.latency.p99
