"""Sweeps: grids, seeds from the point, the local process pool, resume after an interrupt."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import ssdkit
from conftest import TINY
from ssdkit.sweep import WALL_CLOCK_COLUMNS, load_sweep_file, points

BASE = {**TINY, "flow.0.requests": 400, "flow.0.read_fraction": 0.5}
GRID = {"flow.0.queue_depth": [1, 4, 16], "flow.0.request_bytes": [4096, 8192]}


def comparable(t: pd.DataFrame) -> pd.DataFrame:
    t = t.drop(columns=list(WALL_CLOCK_COLUMNS))

    # The result JSON holds the wall-clock figures too.
    def strip(s):
        if not isinstance(s, str):  # a failed point has no result
            return None
        d = json.loads(s)
        for k in WALL_CLOCK_COLUMNS:
            d.pop(k, None)
        for k in ("wall_time_s", "snapshot_load_s"):
            d["device"]["precondition"].pop(k, None)
        return json.dumps(d, sort_keys=True)

    return t.assign(result_json=t["result_json"].map(strip))


def test_grids_and_point_seeds():
    cart = points(GRID, repeats=2, seed=7)
    assert len(cart) == 3 * 2 * 2
    assert len({p.id for p in cart}) == len(cart) and len({p.seed for p in cart}) == len(cart)
    # A point's id and seed depend on the point, not on the grid's order or other points.
    rev = points({k: list(reversed(v)) for k, v in reversed(GRID.items())}, repeats=2, seed=7)
    assert {(p.id, p.seed) for p in rev} == {(p.id, p.seed) for p in cart}
    one = points({"flow.0.queue_depth": [4], "flow.0.request_bytes": [8192]}, seed=7)[0]
    assert (one.id, one.seed) in {(p.id, p.seed) for p in cart}
    assert points(GRID, seed=8)[0].seed != points(GRID, seed=7)[0].seed
    z = points({"a": [1, 2, 3], "b": [4, 5, 6]}, mode="zip")
    assert [dict(p.settings) for p in z] == [{"a": 1, "b": 4}, {"a": 2, "b": 5}, {"a": 3, "b": 6}]
    r1 = points(GRID, mode="random", samples=4, seed=3)
    assert [p.id for p in r1] == [p.id for p in points(GRID, mode="random", samples=4, seed=3)]
    wl = points({"a": [1]}, workloads=[{"x": 1}, {"x": 2}])
    assert [p.workload for p in wl] == [0, 1] and wl[1].overrides == {"x": 2, "a": 1}


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"mode": "diagonal"}, "cartesian, zip, random"),
        ({"mode": "zip", "grid": {"a": [1], "b": [1, 2]}}, "one length"),
        ({"mode": "random"}, "samples"),
        ({"samples": 3}, "random"),
        ({"grid": {"a": []}}, "`a` must list"),
        ({"grid": {"a": "16"}}, "`a` must list"),
        ({"repeats": 0}, "repeats"),
    ],
)
def test_bad_sweeps_are_refused(kw, msg):
    kw = {"grid": GRID, **kw}
    with pytest.raises(ssdkit.ConfigError, match=msg):
        points(kw.pop("grid"), **kw)


def test_local_pool_equals_serial_and_records_failures(tmp_path):
    grid = {"flow.0.queue_depth": [1, 4, 0]}  # 0: refused, recorded
    serial = ssdkit.sweep("mqsim-paper", grid, overrides=BASE, workers=1, progress=False)
    pool = ssdkit.sweep("mqsim-paper", grid, overrides=BASE, workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(serial), comparable(pool))
    bad = serial[serial["flow.0.queue_depth"] == 0]
    assert len(bad) == 1 and "flow.0.queue_depth" in bad["error"].iloc[0]
    good = serial[serial["error"].isna()]
    assert set(good["op"]) == {"read", "write", "all"}
    for _, row in good.iterrows():
        raw = json.loads(row["result_json"])
        assert raw["seed"] == row["seed"]
        assert raw["config"]["flow"][0]["queue_depth"] == row["flow.0.queue_depth"]
        s = raw["flows"][row["flow"]]["stats"][row["op"]]
        assert row["count"] == s["count"] and row["latency_p99_us"] == s["latency_us"]["p99"]
    # Every row's table values come from its own point's result.
    assert good.groupby("point")["seed"].nunique().max() == 1


def test_interrupted_sweep_resumes_to_the_same_table(tmp_path):
    spec = tmp_path / "sweep.toml"
    grid = {"flow.0.queue_depth": [1, 2, 4, 8], "flow.0.request_bytes": [4096, 8192]}
    lines = ['config = "mqsim-paper"', "seed = 5", "[set]"]
    # Points long enough (a few tenths of a second) for the kill to land between them.
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in {**BASE, "flow.0.requests": 20000}.items()]
    lines += ["[grid]"] + [f'"{k}" = {json.dumps(v)}' for k, v in grid.items()]
    spec.write_text("\n".join(lines) + "\n")
    whole = ssdkit.sweep(**_spec(spec), workers=1, progress=False)
    out = tmp_path / "r.parquet"
    cmd = [sys.executable, "-m", "ssdkit", "sweep", str(spec), "-o", str(out), "--workers", "1", "--no-progress"]
    p = subprocess.Popen(cmd, start_new_session=True)
    parts = tmp_path / "r.parquet.parts"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(parts.glob("*.parquet")) if parts.exists() else []) < 2:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    got = len(list(parts.glob("*.parquet")))
    assert 2 <= got < 8, f"interrupted after {got} of 8 points"
    assert not out.exists()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "8 points" in r.stdout
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(out)), comparable(whole))


def without_snapshot_names(t: pd.DataFrame) -> pd.DataFrame:
    """The table with the snapshot file each point loaded left out of its result."""

    def strip(s):
        if not isinstance(s, str):
            return None
        d = json.loads(s)
        d["device"]["precondition"].pop("snapshot", None)
        return json.dumps(d, sort_keys=True)

    t = comparable(t)
    return t.assign(result_json=t["result_json"].map(strip))


def test_points_on_one_device_share_one_snapshot(tmp_path):
    # Write preconditioning (random overwrites: the state depends on its seed) of TINY; queue
    # depth leaves the device alone, the written range does not; two repeats.
    base = {**BASE, "precondition.mode": "write", "flow.0.read_fraction": 0.0}
    grid = {"flow.0.queue_depth": [1, 4, 8], "flow.0.range_bytes": [0, 16 << 20]}
    snaps = tmp_path / "snaps"
    kw = {"overrides": base, "repeats": 2, "seed": 11, "workers": 2, "progress": False}
    shared = ssdkit.sweep("mqsim-paper", grid, snapshot_dir=snaps, **kw)
    alone = ssdkit.sweep("mqsim-paper", grid, share_snapshots=False, **kw)
    assert shared["error"].isna().all()
    # Sharing changes nothing but the time taken.
    pd.testing.assert_frame_equal(without_snapshot_names(shared), without_snapshot_names(alone))
    per_point = shared.drop_duplicates("point")
    devices = per_point.groupby(["flow.0.range_bytes", "repeat"])["device"].agg(set)
    assert all(len(d) == 1 for d in devices), "queue depth leaves the device alone"
    assert per_point["device"].nunique() == 4, "two ranges x two repeats"
    assert per_point.groupby("device")["device_seed"].nunique().max() == 1
    assert per_point["seed"].nunique() == len(per_point), "each point's workload has its own seed"
    # One snapshot per device, made once; every point loaded its device's.
    assert sorted(f.name for f in snaps.iterdir()) == sorted(f"{d}.snap" for d in per_point["device"].unique())
    for _, row in per_point.iterrows():
        rec = json.loads(row["result_json"])["device"]["precondition"]
        assert rec["snapshot"] == f"{row['device']}.snap" and rec["mode"] == "write"
        assert (
            "snapshot"
            not in json.loads(alone.loc[alone["point"] == row["point"], "result_json"].iloc[0])["device"][
                "precondition"
            ]
        )
    # The snapshots are kept in a directory given, and reused as they are.
    stamps = {f.name: f.stat().st_mtime_ns for f in snaps.iterdir()}
    again = ssdkit.sweep("mqsim-paper", grid, snapshot_dir=snaps, **kw)
    assert {f.name: f.stat().st_mtime_ns for f in snaps.iterdir()} == stamps
    pd.testing.assert_frame_equal(comparable(again), comparable(shared))
    # A point is reproduced by one run: its configuration, seed and device seed.
    row = per_point.iloc[3]
    direct = ssdkit.run(
        "mqsim-paper",
        overrides={**base, **{k: row[k] for k in grid}, "precondition.seed": row["device_seed"]},
        seed=row["seed"],
    )
    got = json.loads(row["result_json"])
    assert direct.raw["device"]["ftl"] == got["device"]["ftl"]
    assert direct.raw["flows"][0]["stats"] == got["flows"][0]["stats"]


def test_snapshot_directories_of_a_sweep_are_removed(tmp_path):
    out = tmp_path / "r.parquet"
    grid = {"flow.0.queue_depth": [1, 4]}
    t = ssdkit.sweep("mqsim-paper", grid, overrides=BASE, output=out, workers=1, progress=False)
    assert json.loads(t["result_json"].iloc[0])["device"]["precondition"]["snapshot"].endswith(".snap")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]


def _spec(path):
    spec = load_sweep_file(path)
    return {"config": spec.pop("config"), **spec}


def test_sweep_file_errors(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('config = "mqsim-paper"\ngird = 1\n')
    with pytest.raises(ssdkit.ConfigError, match="unknown key `gird`"):
        load_sweep_file(f)
    for bad, msg in [
        ("grid = [1, 2]", "key `grid` must be a table"),
        ('seed = "7"', "key `seed` must be an integer"),
        ("workload = [1]", "key `workload` must be an array of tables"),
        ("share_snapshots = 1", "key `share_snapshots` must be true or false"),
        ("snapshot_dir = false", "key `snapshot_dir` must be a string"),
    ]:
        f.write_text(f'config = "mqsim-paper"\n{bad}\n')
        with pytest.raises(ssdkit.ConfigError, match=msg):
            load_sweep_file(f)
    f.write_text("[grid]\n")
    with pytest.raises(ssdkit.ConfigError, match="missing key `config`"):
        load_sweep_file(f)
    with pytest.raises(ssdkit.ConfigError, match="no such sweep file"):
        load_sweep_file(tmp_path / "none.toml")


def test_dask_local_cluster_equals_the_local_pool():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (extra ssdkit[dask])")
    grid = {"flow.0.queue_depth": [1, 4, 16], "flow.0.read_fraction": [1.0, 0.5]}
    local = ssdkit.sweep("mqsim-paper", grid, overrides=BASE, workers=2, seed=3, progress=False)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        on_dask = ssdkit.sweep("mqsim-paper", grid, overrides=BASE, executor=client, seed=3, progress=False)
        pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2, "two worker processes"
    pd.testing.assert_frame_equal(comparable(on_dask), comparable(local))
    with pytest.raises(TypeError, match="dask.distributed.Client or a scheduler address"):
        ssdkit.sweep("mqsim-paper", grid, overrides=BASE, executor=3, progress=False)


def test_a_missing_extra_is_named(monkeypatch):
    from ssdkit import plot

    # pyarrow and matplotlib come with every install: a missing one is named with its pip command;
    # dask is an extra.
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"dependency of ssdkit missing here: `pip install pyarrow`"):
        ssdkit.sweep("mqsim-paper", GRID, overrides=BASE, progress=False)
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"ssdkit\[dask\]"):
        ssdkit.sweep(
            "mqsim-paper", {"flow.0.queue_depth": [1]}, overrides=BASE, executor="tcp://nowhere:1", progress=False
        )
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"dependency of ssdkit missing here: `pip install matplotlib`"):
        plot.erase_counts({"device": {"erase_counts": {"histogram": {"bin_start": [0], "count": [1], "bin_width": 1}}}})


SMALL_SWEEP = {**TINY, "flow.0.requests": 300}


def _write_sweep(path, config, fixed, grid, workloads=()):
    lines = [f"config = {json.dumps(config)}", "seed = 3", "[set]"]
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in fixed.items()]
    lines += ["[grid]"] + [f'"{k}" = {json.dumps(v)}' for k, v in grid.items()]
    for w in workloads:
        lines += ["[[workload]]"] + [f'"{k}" = {json.dumps(v)}' for k, v in w.items()]
    path.write_text("\n".join(lines) + "\n")


def _configs(t: pd.DataFrame) -> list[dict]:
    return [json.loads(s)["config"] for s in t.drop_duplicates("point")["result_json"]]


def test_editing_set_or_the_base_config_gives_new_results(tmp_path):
    base = tmp_path / "base.toml"
    preset = ssdkit.resolve_config("mqsim-paper")
    assert "read_us = [75.0, 75.0]" in preset
    base.write_text(preset.replace("read_us = [75.0, 75.0]", "read_us = [50.0, 50.0]"))
    spec = tmp_path / "s.toml"
    out = tmp_path / "r.parquet"
    grid = {"flow.0.queue_depth": [1, 4]}
    _write_sweep(spec, "base.toml", SMALL_SWEEP, grid)
    first = ssdkit.sweep(**_spec(spec), output=out, workers=1, progress=False)
    assert all(c["flash"]["read_us"] == [50.0, 50.0] for c in _configs(first))
    assert not (tmp_path / "r.parquet.parts").exists(), "the part files go once the table is written"
    # [set] edited: every point runs again with the new value.
    _write_sweep(spec, "base.toml", {**SMALL_SWEEP, "flow.0.request_bytes": 16384}, grid)
    second = ssdkit.sweep(**_spec(spec), output=out, workers=1, progress=False)
    assert all(c["flow"][0]["request_bytes"] == 16384 for c in _configs(second))
    assert not second["iops"].equals(first["iops"])
    # The base configuration edited, the sweep file not: again new results.
    base.write_text(preset.replace("read_us = [75.0, 75.0]", "read_us = [20.0, 20.0]"))
    third = ssdkit.sweep(**_spec(spec), output=out, workers=1, progress=False)
    assert all(c["flash"]["read_us"] == [20.0, 20.0] for c in _configs(third))
    reads = third[third.op == "read"]
    assert (reads["latency_mean_us"].values < second[second.op == "read"]["latency_mean_us"].values).all()


_RUN_POINT = sys.modules["ssdkit.sweep"]._run_point


def _interrupt_after(monkeypatch, n: int) -> list:
    """Makes the sweep's serial loop stop (as Ctrl-C would) before its point number ``n``;
    returns the list of points run."""
    mod = sys.modules["ssdkit.sweep"]
    real = _RUN_POINT
    ran: list = []

    def run(config, fixed, point, *rest):
        if len(ran) == n:
            raise KeyboardInterrupt
        ran.append(point.id)
        return real(config, fixed, point, *rest)

    monkeypatch.setattr(mod, "_run_point", run)
    return ran


def test_resume_reuses_only_the_part_files_of_matching_points(tmp_path, monkeypatch, capfd):
    grid = {"flow.0.queue_depth": [1, 2, 4, 8]}
    kw = {"overrides": SMALL_SWEEP, "seed": 2, "workers": 1, "progress": False}
    whole = ssdkit.sweep("mqsim-paper", grid, **kw)
    out = tmp_path / "r.parquet"
    parts = tmp_path / "r.parquet.parts"
    ran = _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        ssdkit.sweep("mqsim-paper", grid, output=out, **kw)
    files = sorted(parts.glob("*.parquet"))
    assert len(files) == 3 and not out.exists()
    # One part file from another configuration (its identity differs) and one named as
    # ssdkit wrote them before identities: both stale.
    point, _ = files[0].stem.split("-")
    files[0].rename(parts / f"{point}-{'0' * 16}.parquet")
    (parts / f"{files[1].stem.split('-')[0]}.parquet").write_bytes(files[1].read_bytes())
    capfd.readouterr()
    ran_again = _interrupt_after(monkeypatch, 99)
    t = ssdkit.sweep("mqsim-paper", grid, output=out, **kw)
    err = capfd.readouterr().err
    assert err.count("ignoring 2 part files") == 1 and "run again" in err, err
    # The point whose file was stale and the one never run: two of four.
    assert len(ran_again) == 2 and point in ran_again
    pd.testing.assert_frame_equal(comparable(t), comparable(whole))
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(out)), comparable(whole))
    assert not parts.exists()
    # An interrupted sweep resumed after [set] changed reuses nothing.
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        ssdkit.sweep("mqsim-paper", grid, output=out, **kw)
    ran = _interrupt_after(monkeypatch, 99)
    capfd.readouterr()
    changed = {**kw, "overrides": {**SMALL_SWEEP, "flow.0.read_fraction": 0.0}}
    t = ssdkit.sweep("mqsim-paper", grid, output=out, **changed)
    assert len(ran) == 4 and "ignoring 2 part files" in capfd.readouterr().err
    assert set(t["op"]) == {"write", "all"}


def test_identity_covers_configuration_seed_traces_and_version(tmp_path, monkeypatch):
    from ssdkit.sweep import devices, identities

    mod = sys.modules["ssdkit.sweep"]
    trace = tmp_path / "t.trace"
    trace.write_text("0 0 0 8 1\n100 0 8 8 0\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[flash]\nblocks_per_plane = 128\n[[flow]]\ntrace = "t.trace"\n')
    pts = points({"flow.0.queue_depth": [1, 2]}, seed=1)

    def ids(config=str(cfg), fixed=None):
        fixed = fixed or {}
        return identities(config, fixed, pts, devices(config, fixed, pts, 1))

    first = ids()
    assert len(set(first.values())) == 2
    assert ids() == first
    assert ids(fixed={"flash.erase_us": 1000.0}) != first
    cfg.write_text('[flash]\nblocks_per_plane = 128\nerase_us = 1000.0\n[[flow]]\ntrace = "t.trace"\n')
    assert ids() != first
    edited = ids()
    trace.write_text("0 0 0 8 1\n100 0 8 8 0\n200 0 16 8 0\n")
    assert ids() != edited
    traced = ids()
    monkeypatch.setattr(mod, "__version__", "0.0.0-other")
    assert ids() != traced
    monkeypatch.undo()
    other_seed = identities(str(cfg), {}, points({"flow.0.queue_depth": [1, 2]}, seed=2), {})
    assert set(other_seed.values()).isdisjoint(traced.values())


# The core's message follows, as `--set` gives it: the key and the allowed ones or values.
UNKNOWN = "unknown field `{}`, expected one of"


@pytest.mark.parametrize(
    "grid, fixed, workloads, named, core",
    [
        ({"flow.0.queue_dept": [1, 4]}, {}, None, "sweep grid key `flow.0.queue_dept`", UNKNOWN.format("queue_dept")),
        ({"flsh.channels": [1, 2]}, {}, None, "sweep grid key `flsh.channels`", UNKNOWN.format("flsh")),
        ({"flow.0.queue_depth": [1, 4]}, {"flow.0.requets": 100}, None, "sweep [set]", UNKNOWN.format("requets")),
        ({"flow.0.queue_depth": [1, 4]}, {"flow.0.requests": -1}, None, "sweep [set]", "key `flow.0.requests`"),
        (
            {"flow.0.queue_depth": [1]},
            {},
            [{"flow.0.read_fraction": 1.0}, {"flow.0.read_fracton": 1.0}],
            "sweep workload 1 key `flow.0.read_fracton`",
            UNKNOWN.format("read_fracton"),
        ),
    ],
)
def test_unknown_keys_stop_the_sweep_before_any_point_runs(tmp_path, monkeypatch, grid, fixed, workloads, named, core):
    ran = _interrupt_after(monkeypatch, 0)
    out = tmp_path / "r.parquet"
    with pytest.raises(ssdkit.ConfigError) as e:
        ssdkit.sweep(
            "mqsim-paper", grid, overrides={**SMALL_SWEEP, **fixed}, workloads=workloads, output=out, progress=False
        )
    msg = str(e.value)
    assert msg.startswith(named) and core in msg, msg
    assert ran == [] and list(tmp_path.iterdir()) == []


def test_cli_names_a_misspelled_grid_key_before_running(tmp_path):
    spec = tmp_path / "s.toml"
    _write_sweep(spec, "mqsim-paper", SMALL_SWEEP, {"flow.0.queue_dept": [1, 4, 16]})
    out = tmp_path / "r.parquet"
    cmd = [sys.executable, "-m", "ssdkit", "sweep", str(spec), "-o", str(out), "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ssdkit: error: {spec}: sweep grid key `flow.0.queue_dept`:"), (
        r.stderr
    )
    assert "`queue_depth`" in lines[0] and r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]
