"""Fairness runs (the MQSim paper, FAST'18, section 3.1): each flow alone on the same starting
device, then together; slowdown S = RT_shared / RT_alone, F = min S / max S, WS = sum 1 / S."""

import json
import os
import subprocess
import sys

import pytest
import ssdkit
from conftest import TINY

# Two read flows on the 64 MiB device, filled: a light one (QD2) and a heavy one (QD64) that
# floods the two dies' queues.
TWO = {
    **TINY,
    "precondition.mode": "sequential",
    "flow.0.queue_depth": 2,
    "flow.0.read_fraction": 1.0,
    "flow.0.requests": 1500,
    "flow.1.queue_depth": 64,
    "flow.1.read_fraction": 1.0,
    "flow.1.requests": 6000,
}


@pytest.fixture(scope="module")
def fair():
    return ssdkit.run("mqsim-paper", overrides=TWO, fairness=True)


def test_slowdowns_fairness_and_speedup_follow_their_definitions(fair):
    f = fair.fairness
    assert [x.index for x in f.flows] == [0, 1]
    for x in f.flows:
        assert x.slowdown == pytest.approx(x.rt_shared_us / x.rt_alone_us, rel=1e-12)
        # The shared figure is the returned result's own.
        assert x.rt_shared_us == fair.flows[x.index].stats.all.latency.mean
    s = [x.slowdown for x in f.flows]
    assert f.fairness == pytest.approx(min(s) / max(s), rel=1e-12)
    assert f.weighted_speedup == pytest.approx(sum(1 / x for x in s), rel=1e-12)
    # The light flow suffers from the heavy one far more than the other way round.
    assert s[0] > 3 and s[0] > 2 * s[1] and f.fairness < 0.5 and f.weighted_speedup < 2
    print(*f.summary(), sep="\n")


def test_alone_runs_equal_runs_with_the_other_flows_off(fair, tmp_path):
    # An alone run is the same run as one made by hand from the same preconditioned device.
    snap = tmp_path / "dev.snap"
    ssdkit.precondition("mqsim-paper", snap, overrides=TWO)
    for k in (0, 1):
        off = {f"flow.{1 - k}.enabled": False}
        alone = ssdkit.run("mqsim-paper", overrides={**TWO, **off}, snapshot=snap)
        assert alone.flows[k].stats.all.latency.mean == fair.fairness.flows[k].rt_alone_us
        assert alone.flows[1 - k].completed == 0
        assert alone.flows[k].completed == TWO[f"flow.{k}.requests"]


def test_a_switched_off_flow_changes_nothing_for_the_others():
    # Flow 0 beside a switched-off flow 1 runs as flow 0 alone in a one-flow configuration:
    # its random streams and queue do not depend on the flows after it.
    one = {k: v for k, v in TWO.items() if not k.startswith("flow.1.")}
    a = ssdkit.run("mqsim-paper", overrides=one)
    b = ssdkit.run("mqsim-paper", overrides={**TWO, "flow.1.enabled": False})
    assert a.flows[0].stats.all.latency.mean == b.flows[0].stats.all.latency.mean
    assert a.flows[0].completed == b.flows[0].completed == 1500
    assert a.simulated_time_ps == b.simulated_time_ps


def test_fairness_is_in_the_json_and_survives_a_round_trip(fair):
    d = json.loads(fair.to_json())
    assert d["fairness"]["fairness"] == fair.fairness.fairness
    again = ssdkit.Result.from_json(fair.to_json())
    assert again.fairness.flows == fair.fairness.flows
    assert "fairness F" in fair.summary()


def test_bad_fairness_requests_are_refused():
    with pytest.raises(ssdkit.ConfigError, match="at least two flows"):
        ssdkit.run("mqsim-paper", overrides=TINY, fairness=True)
    with pytest.raises(ssdkit.ConfigError, match="`latency_log` does not go with fairness"):
        ssdkit.run("mqsim-paper", overrides=TWO, fairness=True, latency_log="x.csv")
    with pytest.raises(ssdkit.ConfigError, match="`workers` goes with fairness"):
        ssdkit.run("mqsim-paper", overrides=TWO, workers=2)
    with pytest.raises(ssdkit.ConfigError, match="flow.1.enabled"):
        ssdkit.run("mqsim-paper", overrides={**TWO, "flow.1.enabled": False}, fairness=True)


def test_cli_fairness(tmp_path):
    sets = [a for k, v in TWO.items() for a in ("--set", f"{k}={json.dumps(v)}")]
    out = tmp_path / "r.json"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "run", "mqsim-paper", *sets, "--fairness", "--workers", "2", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert "weighted speedup WS" in p.stdout
    assert json.loads(out.read_text())["fairness"]["flows"][1]["index"] == 1
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "run", "mqsim-paper", *sets, "--workers", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode != 0 and "--workers goes with --fairness" in p.stderr


def _many_flows(n: int) -> str:
    """n small closed-loop flows (20 requests each at QD1 or QD2, reads or a 70/30 mix) on
    the 64 MiB device of TINY."""
    dev = {k: v for k, v in TINY.items() if not k.startswith("flow.")}
    lines = [f"{k} = {json.dumps(v)}" for k, v in dev.items()]
    for k in range(n):
        lines += ["[[flow]]", f"queue_depth = {1 + k % 2}", f"read_fraction = {0.7 if k % 2 else 1.0}", "requests = 20"]
    return "\n".join(lines) + "\n"


def _cli_peak_rss_kb(args: list[str]) -> int:
    """Runs `ssdkit ARGS` and returns its peak resident memory (kB), from the kernel's
    accounting of that one process."""
    p = subprocess.Popen([sys.executable, "-m", "ssdkit", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    assert p.returncode == 0, err.decode()
    return usage.ru_maxrss


def test_many_flows_keep_the_memory_of_a_plain_run(tmp_path):
    # Each alone run of n flows used to come back as a whole result document (n flow entries
    # and the configuration's n flow tables), all kept: n^2 in memory (200 flows: 540 MB
    # against a plain run's 41 MB). Only each flow's mean response time is kept now.
    n = 200
    cfg = tmp_path / "flows.toml"
    cfg.write_text(_many_flows(n))
    snap = tmp_path / "dev.snap"
    ssdkit.precondition(str(cfg), snap)
    common = ["run", str(cfg), "--snapshot", str(snap), "--no-progress"]
    plain = _cli_peak_rss_kb([*common, "-o", str(tmp_path / "plain.json")])
    fair = _cli_peak_rss_kb([*common, "--fairness", "--workers", "2", "-o", str(tmp_path / "fair.json")])
    print(f"{n} flows: peak RSS plain {plain / 1024:.1f} MiB, fairness {fair / 1024:.1f} MiB")
    assert fair < 2 * plain, f"fairness run peak {fair} kB against a plain run's {plain} kB"

    # The figures are those of the alone runs and of the shared (plain) run.
    shared = json.loads((tmp_path / "plain.json").read_text())
    fa = json.loads((tmp_path / "fair.json").read_text())["fairness"]
    assert [f["index"] for f in fa["flows"]] == list(range(n))
    for f in fa["flows"]:
        k = f["index"]
        assert f["name"] == shared["flows"][k]["name"]
        assert f["rt_shared_us"] == shared["flows"][k]["stats"]["all"]["latency_us"]["mean"]
        assert f["slowdown"] == f["rt_shared_us"] / f["rt_alone_us"]
    s = [f["slowdown"] for f in fa["flows"]]
    assert fa["fairness"] == min(s) / max(s)
    assert fa["weighted_speedup"] == sum(1 / x for x in s)
    # 200 flows on two dies slow each other down, unevenly.
    assert min(s) > 10 and fa["fairness"] < 0.9
    for k in (0, 1, n - 1):
        off = {f"flow.{j}.enabled": False for j in range(n) if j != k}
        alone = ssdkit.run(str(cfg), overrides=off, snapshot=snap)
        assert alone.flows[k].completed == 20
        assert fa["flows"][k]["rt_alone_us"] == alone.flows[k].stats.all.latency.mean
