"""Steady-state rounds without ``steady_state.round_ms`` (issue 31): the length is picked from
the run so that a round holds several hundred requests or more, counted after the write cache
has filled; the summary says how it was picked; request limits too small for a window are
refused before the run. The rules themselves are checked in
crates/ssdkit-core/tests/snia_steady_state.rs."""

import subprocess
import sys

import ssdkit
import tomllib


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args], check=False, capture_output=True, text=True, timeout=300
    )


def test_mqsim_paper_random_writes_get_rounds_of_several_hundred_requests(tmp_path):
    # Fixed 50 ms rounds (the old default) held no request from round 7 on: no verdict.
    out = tmp_path / "out.json"
    p = cli("run", "mqsim-paper", "--steady-state", "--set", "flow.0.read_fraction=0", "--no-progress", "-o", str(out))
    assert p.returncode == 0, p.stderr
    ss = ssdkit.load(out).steady_state
    picked = ss.round_picked
    assert picked["after_write_back"] and picked["requests"] == 1000 and picked["from_ps"] > 0
    assert ss.round_ps > picked["at_ps"]
    assert ss.verdict.complete_rounds >= 5 and ss.verdict.window is not None
    assert ss.verdict.ended_by in ("steady", "max_rounds")
    for r in ss.rounds:
        assert r.complete and r.completed >= 300, (r.round, r.completed)
    assert "round length picked from the run (steady_state.round_ms sets it):" in p.stdout
    assert "from the write cache's first write-back" in p.stdout


def test_mqsim_paper_reads_are_steady_in_rounds_of_about_a_thousand():
    r = ssdkit.run("mqsim-paper", steady_state=True)
    ss = r.steady_state
    assert not ss.round_picked["after_write_back"] and ss.round_picked["from_ps"] == 0
    assert all(x.completed >= 1000 for x in ss.rounds)
    assert ss.verdict.steady_round == 5
    assert "round_ms" not in r.config["steady_state"], "unset in the configuration"


def test_an_explicit_length_is_used_as_given():
    r = ssdkit.run("mqsim-paper", overrides={"flow.0.requests": 0}, steady_state={"round_ms": 5})
    ss = r.steady_state
    assert ss.round_ps == 5 * 10**9 and ss.round_picked is None
    assert "round_picked" not in r.raw["steady_state"]
    assert "picked" not in r.summary()


def test_a_flow_with_no_limit_runs_until_the_rounds_end(tmp_path):
    cfg = tmp_path / "steady.toml"
    cfg.write_text("[steady_state]\nenabled = true\n\n[[flow]]\nqueue_depth = 32\n")
    doc = tomllib.loads(ssdkit.resolve_config(str(cfg)))
    assert doc["flow"][0]["requests"] == 0
    assert doc["steady_state"].get("round_ms") is None


def test_too_few_requests_are_refused_with_the_figures():
    p = cli("run", "mqsim-paper", "--steady-state", "--set", "flow.0.requests=3000", "--no-progress")
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error:"), p.stderr
    assert "steady_state.round_ms" in lines[0] and "`flow.0.requests` = 3000" in lines[0] and "5000" in lines[0]
