"""Steady state by the SNIA Solid State Storage Performance Test Specification from Python and
the CLI: the ``steady_state`` keyword, the result's rounds and verdict (recomputed here from the
rounds), the tidy frame of rounds, the summary's table, and bad settings. The criteria
themselves and the device physics are checked in crates/ssdkit-core/tests/snia_steady_state.rs."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import ssdkit
from conftest import BARE, SMALL

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"

# Random reads on the shrunken mqsim-paper device, with no request limit of their own: about
# 1,200 reads per 5 ms round, flat from the start, so the first window is steady.
READS = {**SMALL, "flow.0.requests": 0}
ROUND_MS = 5


@pytest.fixture(scope="module")
def steady():
    return ssdkit.run("mqsim-paper", overrides=READS, steady_state={"round_ms": ROUND_MS})


def test_the_keyword_runs_rounds_until_steady(steady):
    ss = steady.steady_state
    assert isinstance(ss, ssdkit.SteadyState)
    assert (ss.track, ss.round_ps, ss.max_rounds, ss.stop_when_steady) == ("iops", ROUND_MS * 10**9, 25, True)
    assert (ss.window_rounds, ss.data_excursion_limit_fraction, ss.slope_excursion_limit_fraction) == (5, 0.2, 0.1)
    v = ss.verdict
    assert v.steady and ss.steady and v.steady_round == 5 == ss.steady_round
    assert v.ended_by == "steady" and v.complete_rounds == 5 and len(ss.rounds) == 5
    # The workload stopped at the end of round 5; what was in flight completed after it.
    assert 0 < v.after_rounds_completed <= 32
    assert sum(r.completed for r in ss.rounds) + v.after_rounds_completed == steady.completed


def test_rounds_tile_the_run_and_their_figures_follow_from_their_counts(steady):
    ss = steady.steady_state
    for i, r in enumerate(ss.rounds):
        assert isinstance(r, ssdkit.SteadyRound)
        assert r.round == i + 1 and r.complete
        assert (r.start_ps, r.end_ps) == (i * ss.round_ps, (i + 1) * ss.round_ps)
        secs = ss.round_ps / 1e12
        assert r.iops == r.completed / secs and r.bandwidth_bytes_per_s == r.bytes / secs
        assert r.bytes == 4096 * r.completed
        assert [f.completed for f in r.flows] == [r.completed]
        assert r.flows[0].p99_latency_us == r.p99_latency_us >= r.mean_latency_us > 0
        assert r.user_page_writes == 0 and r.write_amplification is None
        assert (r.window is None) == (r.round < 5)


def test_the_verdict_is_the_criteria_over_the_last_five_rounds(steady):
    ss = steady.steady_state
    w = ss.verdict.window
    assert isinstance(w, ssdkit.WindowCheck) and w == ss.rounds[4].window
    y = np.array([r.iops for r in ss.rounds])
    slope, intercept = np.polyfit(np.arange(1, 6), y, 1)
    assert (w.first_round, w.last_round) == (1, 5)
    assert w.average == pytest.approx(y.mean(), rel=1e-12)
    assert w.data_excursion == pytest.approx(y.max() - y.min(), rel=1e-12)
    assert w.slope == pytest.approx(slope, rel=1e-9, abs=1e-6)
    assert w.fit_first == pytest.approx(intercept + slope, rel=1e-9)
    assert w.fit_last == pytest.approx(intercept + 5 * slope, rel=1e-9)
    assert w.slope_excursion == pytest.approx(abs(4 * slope), rel=1e-9, abs=1e-6)
    assert (w.data_excursion_limit, w.slope_excursion_limit) == (0.2 * w.average, 0.1 * w.average)
    assert w.data_ok and w.slope_ok and w.steady


def test_rounds_as_a_tidy_frame(steady):
    df = steady.to_pandas(kind="rounds")
    assert list(df.columns[:2]) == ["config_hash", "seed"]
    assert len(df) == 2 * 5 and df["scope"].tolist() == ["randread-qd32"] * 5 + ["device"] * 5
    dev = df[df["scope"] == "device"]
    assert dev["round"].tolist() == [1, 2, 3, 4, 5]
    assert dev["iops"].tolist() == [r.iops for r in steady.steady_state.rounds]
    assert dev["start_ms"].tolist() == [0.0, 5.0, 10.0, 15.0, 20.0]
    assert dev["complete"].all() and str(dev["completed"].dtype) == "Int64"
    assert dev["window_average"].isna().tolist() == [True] * 4 + [False]
    assert dev["window_steady"].tolist()[4] is True and dev["window_steady"].isna().sum() == 4
    assert dev["window_average"].iloc[4] == steady.steady_state.verdict.window.average
    flow = df[df["scope"] == "randread-qd32"]
    assert flow["iops"].tolist() == dev["iops"].tolist()
    assert flow["free_blocks"].isna().all() and flow["window_average"].isna().all()
    combined = ssdkit.combine([steady, steady], kind="rounds")
    assert len(combined) == 2 * len(df)


def test_a_run_without_rounds_says_how_to_ask_for_them(small_result):
    assert small_result.steady_state is None and "steady_state" not in small_result.raw
    with pytest.raises(ssdkit.SsdkitError, match="steady_state=True"):
        small_result.to_pandas(kind="rounds")
    with pytest.raises(ValueError, match="'rounds'"):
        small_result.to_pandas(kind="round")


def test_the_keyword_forms_equal_the_override(steady):
    def strip(r):
        d = json.loads(r.to_json())
        for k in ("wall_time_s", "events_per_wall_s", "requests_per_wall_s"):
            d.pop(k)
        d["device"]["precondition"].pop("wall_time_s")
        return d

    by_key = ssdkit.run(
        "mqsim-paper", overrides={**READS, "steady_state.enabled": True, "steady_state.round_ms": ROUND_MS}
    )
    assert strip(by_key) == strip(steady), "same config and seed, same document"
    by_bool = ssdkit.run("mqsim-paper", overrides={**READS, "steady_state.round_ms": ROUND_MS}, steady_state=True)
    assert strip(by_bool) == strip(steady)
    with pytest.raises(TypeError, match="steady_state must be a bool or a dict"):
        ssdkit.run("mqsim-paper", overrides=READS, steady_state="yes")


def test_the_workload_own_limit_ends_the_rounds_and_is_reported():
    # A bare controller: 3000 reads then take two and a half rounds (mapping-cache misses
    # would stretch them).
    r = ssdkit.run(
        "mqsim-paper", overrides={**BARE, **SMALL, "flow.0.requests": 3000}, steady_state={"round_ms": ROUND_MS}
    )
    ss = r.steady_state
    v = ss.verdict
    assert v.ended_by == "workload" and not v.steady and v.window is None
    assert v.complete_rounds == 2 and len(ss.rounds) == 3 and not ss.rounds[-1].complete
    assert ss.rounds[-1].end_ps == r.last_completion_ps
    assert sum(x.completed for x in ss.rounds) == 3000 and v.after_rounds_completed == 0
    text = r.summary()
    assert "verdict: not steady: 2 complete rounds, the window needs 5" in text
    assert "rounds ended by the workload's own end" in text and "* incomplete round" in text


def test_bad_settings_raise_config_error_naming_the_key():
    with pytest.raises(ssdkit.ConfigError, match=r"steady_state\.track.*iops.*mean_latency"):
        ssdkit.run("mqsim-paper", overrides=READS, steady_state={"track": "bandwidth"})
    with pytest.raises(ssdkit.ConfigError, match=r"steady_state\.max_rounds.*5\.\.=1000000"):
        ssdkit.run("mqsim-paper", overrides=READS, steady_state={"max_rounds": 4})
    with pytest.raises(ssdkit.ConfigError, match=r"steady_state\.round_ms.*steady_state\.enabled"):
        ssdkit.run("mqsim-paper", overrides=SMALL, steady_state={"enabled": False, "round_ms": 10})
    with pytest.raises(ssdkit.ConfigError, match=r"flow\.0\.requests.*steady_state\.enabled"):
        ssdkit.run("mqsim-paper", overrides=READS)
    with pytest.raises(ssdkit.ConfigError, match="not to a step-by-step Device"):
        ssdkit.Device("mqsim-paper", overrides={**SMALL, "steady_state.enabled": True})


def test_the_document_validates_and_reads_back(steady, tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extras: pip install '.[test]'")
    jsonschema.validate(steady.raw, json.loads((DOCS / "result.schema.json").read_text()))
    raw = steady.raw["steady_state"]
    ss = steady.steady_state
    for obj, d in [(ss, raw), (ss.verdict, raw["verdict"]), (ss.rounds[4], raw["rounds"][4])]:
        assert set(d) <= set(obj.keys()), f"{type(obj).__name__} lacks {set(d) - set(obj.keys())}"
    assert set(raw["rounds"][0]["flows"][0]) <= set(ss.rounds[0].flows[0].keys())
    assert set(raw["verdict"]["window"]) == set(ss.verdict.window.keys())
    p = tmp_path / "out.json"
    p.write_text(steady.to_json())
    assert ssdkit.load(p).steady_state == ss


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args], check=False, capture_output=True, text=True, timeout=300
    )


def test_cli_prints_the_rounds_and_the_verdict():
    sets = [a for k, v in {**READS, "steady_state.round_ms": ROUND_MS}.items() for a in ("--set", f"{k}={v}")]
    p = cli("run", "mqsim-paper", "--steady-state", *sets, "--no-progress")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    at = lines.index("steady state (SNIA PTS criteria): IOPS in rounds of 5.000 ms, window of 5")
    head = lines[at + 2].split()
    assert head == ["round", "start", "ms", "requests", "IOPS", "mean", "us", "p99", "us", "WA", "data", "slope"]
    rows = [line.split() for line in lines[at + 3 : at + 8]]
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    assert rows[4][-1] == "steady" and rows[3][-1] == "-"
    assert lines[at + 8] == "verdict: steady from round 5 (window rounds 1-5)"
    assert "data excursion" in lines[at + 9] and "<= 20%" in lines[at + 9] and "<= 10%" in lines[at + 9]
    assert lines[at + 10].startswith("rounds ended at steady state")


def test_cli_runs_a_toml_file_that_asks_for_rounds(tmp_path):
    cfg = tmp_path / "steady.toml"
    cfg.write_text(
        "[flash]\nblocks_per_plane = 128\n\n[steady_state]\nenabled = true\nround_ms = 5\n"
        "max_rounds = 6\nstop_when_steady = false\n\n[[flow]]\nqueue_depth = 32\nrequests = 0\n"
    )
    out = tmp_path / "out.json"
    p = cli("run", str(cfg), "--no-progress", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "verdict: steady from round 5 (window rounds 1-5)" in p.stdout
    assert "rounds ended after the last round (max_rounds 6)" in p.stdout
    doc = json.loads(out.read_text())["steady_state"]
    assert len(doc["rounds"]) == 6 and doc["verdict"]["ended_by"] == "max_rounds"
    assert doc["rounds"][5]["window"]["first_round"] == 2


def test_cli_help_names_the_specification():
    p = cli("run", "--help")
    assert p.returncode == 0
    flat = " ".join(p.stdout.split())
    assert "--steady-state" in flat and "SNIA Solid State Storage Performance Test Specification" in flat
