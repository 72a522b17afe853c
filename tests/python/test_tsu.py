"""The [tsu] section from Python: suspension counts in the typed result and the summary."""

import json

import pytest
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


def test_policy_parameters_by_override_and_sweep_grid():
    """A policy's parameters are keys of its table: set over the policy's name by an override
    or a sweep's grid, they reach the configuration the run echoes; an old flat key is refused
    with where it moved."""
    base = {**TINY, "flow.0.requests": 200, "tsu.policy": "priority_out_of_order"}
    r = ssdkit.run("mqsim-paper", overrides={**base, "tsu.policy.weight_high": 8})
    assert r.raw["config"]["tsu"]["policy"] == {
        "type": "priority_out_of_order",
        "weight_high": 8,
        "weight_medium": 2,
        "weight_low": 1,
    }
    t = ssdkit.sweep("mqsim-paper", {"tsu.policy.weight_high": [2, 8]}, overrides=base, workers=1, progress=False)
    assert t["error"].isna().all()
    for _, row in t.iterrows():
        policy = json.loads(row["result_json"])["config"]["tsu"]["policy"]
        assert policy["type"] == "priority_out_of_order" and policy["weight_high"] == row["tsu.policy.weight_high"]
    with pytest.raises(ssdkit.ConfigError, match=r"tsu.weight_high` moved"):
        ssdkit.run("mqsim-paper", overrides={**base, "tsu.weight_high": 8})
