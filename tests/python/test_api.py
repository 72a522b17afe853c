import concurrent.futures
import json
import pathlib

import pytest
import ssdkit
from conftest import SMALL
from ssdkit.api import toml_literal
from ssdkit.result import Result

COLUMNS = [
    "config_hash",
    "seed",
    "scope",
    "flow",
    "op",
    "count",
    "bytes",
    "iops",
    "bandwidth_MBps",
    "latency_mean_us",
    "latency_min_us",
    "latency_p50_us",
    "latency_p90_us",
    "latency_p99_us",
    "latency_p99_9_us",
    "latency_p99_99_us",
    "latency_max_us",
]
# Fields that measure the host running the simulation, not the simulated device.
WALL_CLOCK_KEYS = {"wall_time_s", "events_per_wall_s", "requests_per_wall_s"}


# The same inside the preconditioning record (device.precondition).
PRECONDITION_WALL_CLOCK_KEYS = {"wall_time_s", "snapshot_load_s"}


def without_wall_clock(r):
    doc = {k: v for k, v in r.raw.items() if k not in WALL_CLOCK_KEYS}
    rec = doc["device"]["precondition"]
    doc["device"] = {
        **doc["device"],
        "precondition": {k: v for k, v in rec.items() if k not in PRECONDITION_WALL_CLOCK_KEYS},
    }
    return doc


def test_result_attributes(small_result):
    r = small_result
    assert r.schema_version == 1
    assert r.ssdkit_version == ssdkit.__version__
    assert r.seed == 1
    assert len(r.config_hash) == 16 and int(r.config_hash, 16) >= 0
    assert r.config["flash"]["blocks_per_plane"] == 128
    assert r.simulated_time_s > 0 and r.wall_time_s >= 0
    assert r.events > 0 and r.events_per_wall_s >= 0 and r.requests_per_wall_s >= 0
    assert r.stopped_by_time_cap is False

    [flow] = r.flows
    assert (flow.index, flow.name, flow.completed) == (0, "randread-qd32", 2000)
    assert 1 <= flow.max_in_device <= 32
    assert flow.stats.read.count == 2000 and flow.stats.write.count == 0
    assert flow.stats.read.bytes == 2000 * 4096
    assert flow.stats.all.count == 2000

    d = r.device
    assert d.capacity_bytes > 0
    assert d.stats.all.count == 2000
    assert d.flash.page_reads >= 2000 and d.flash["page_reads"] == d.flash.page_reads
    assert d.flash.page_programs == 0 and d.ftl.gc_runs == 0
    lat = d.stats.read.latency
    assert 0 < lat.min <= lat.p50 <= lat.p90 <= lat.p99 <= lat.p99_9 <= lat.p99_99
    # Percentiles come from an HDR histogram with 3 significant digits: within 0.1 % of max.
    assert lat.p99_99 <= lat.max * 1.001
    assert lat.min <= lat.mean <= lat.max
    assert d.stats.read.bandwidth_MBps == pytest.approx(d.stats.read.bandwidth_bytes_per_s / 1e6)
    assert r.completed == 2000


def test_to_json_is_the_core_document(small_result):
    text = small_result.to_json()
    assert json.loads(text) == small_result.raw
    assert list(json.loads(text)) == list(small_result.raw)  # key order kept
    again = Result.from_json(text)
    assert again.to_json() == text
    assert "raw=" not in repr(small_result)


def test_to_pandas(small_result):
    df = small_result.to_pandas()
    assert list(df.columns) == COLUMNS
    assert df.shape == (6, len(COLUMNS))
    assert list(df["scope"]) == ["randread-qd32"] * 3 + ["device"] * 3
    assert list(df["op"]) == ["read", "write", "all"] * 2
    assert df["flow"].tolist()[:3] == [0, 0, 0] and df["flow"].isna().tolist() == [False] * 3 + [True] * 3
    dev_all = df[(df.scope == "device") & (df.op == "all")].iloc[0]
    assert dev_all["count"] == 2000
    assert dev_all["latency_p50_us"] == small_result.device.stats.all.latency.p50


def test_summary(small_result):
    s = small_result.summary()
    for word in [
        "randread-qd32",
        "device",
        "IOPS",
        "MB/s",
        "p99.9",
        "GC runs",
        "GC page moves",
        "write amplification",
        "flash page reads",
        "flash page programs",
        "flash block erases",
        "simulated time",
        "wall time",
        "events/s",
    ]:
        assert word in s
    assert str(small_result) == s


def test_keyword_override_changes_config(small_result):
    r = ssdkit.run("mqsim-paper", overrides=SMALL, flash__channels=4)
    assert r.config["flash"]["channels"] == 4
    assert small_result.config["flash"]["channels"] == 8
    assert r.config_hash != small_result.config_hash


def test_dict_overrides_keep_python_types():
    name = 'odd "name" \\ with\ttab'
    r = ssdkit.run(
        "mqsim-paper",
        overrides={
            **SMALL,
            "flow.0.queue_depth": 4,
            "flow.0.name": name,
            "flow.0.read_fraction": 0.5,
            "ftl.placement": "dynamic",
            "flash.multiplane": False,
        },
    )
    flow = r.config["flow"][0]
    assert (flow["queue_depth"], flow["name"], flow["read_fraction"]) == (4, name, 0.5)
    assert r.config["ftl"]["placement"] == "dynamic"
    assert r.config["flash"]["multiplane"] is False
    assert r.flows[0].name == name
    assert r.flows[0].stats.write.count > 0


def test_list_overrides_and_seed():
    toml = ssdkit.resolve_config("mqsim-paper", overrides=["flash.channels=2", "flash.read_us=[50, 60]"], seed=9)
    assert "channels = 2" in toml and "read_us = [50.0, 60.0]" in toml and "seed = 9" in toml


def test_same_seed_same_result_other_seed_other_latency():
    a = ssdkit.run("mqsim-paper", overrides=SMALL, seed=5)
    b = ssdkit.run("mqsim-paper", overrides=SMALL, seed=5)
    c = ssdkit.run("mqsim-paper", overrides=SMALL, seed=6)
    assert without_wall_clock(a) == without_wall_clock(b)
    assert a.seed == 5 and c.seed == 6
    assert a.device.stats.read.latency != c.device.stats.read.latency


def test_runs_in_threads_match_serial_runs(small_result):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: ssdkit.run("mqsim-paper", overrides=SMALL), range(2)))
    for r in results:
        assert without_wall_clock(r) == without_wall_clock(small_result)


def test_config_from_toml_text_and_files(tmp_path, small_result):
    text = ssdkit.preset_toml("mqsim-paper")
    from_text = ssdkit.run(text, overrides=SMALL)
    path = tmp_path / "dev.toml"
    path.write_text(text)
    from_str_path = ssdkit.run(str(path), overrides=SMALL)
    from_pathlib = ssdkit.run(pathlib.Path(path), overrides=SMALL)
    for r in (from_text, from_str_path, from_pathlib):
        assert without_wall_clock(r) == without_wall_clock(small_result)


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(ssdkit.SsdkitError, match="nope.toml"):
        ssdkit.run(str(missing))


def test_errors():
    with pytest.raises(ssdkit.ConfigError, match="no configuration"):
        ssdkit.run()
    with pytest.raises(ssdkit.PresetError, match="mqsim-paper") as e:
        ssdkit.run(preset="no-such-preset")
    assert "no-such-preset" in str(e.value)
    with pytest.raises(ssdkit.PresetError, match="x25m"):
        ssdkit.run("no-such-preset")
    with pytest.raises(ssdkit.ConfigError, match=r"flash\.channels"):
        ssdkit.run("mqsim-paper", flash__channels=0)
    with pytest.raises(ssdkit.ConfigError, match="invalid TOML"):
        ssdkit.run("[flash\nchannels = 4\n")
    with pytest.raises(TypeError):
        ssdkit.run("mqsim-paper", overrides="flash.channels=4")
    # A bad value is a ConfigError naming the key (tests/python/test_api_contract.py).
    with pytest.raises(ssdkit.ConfigError, match="flash.channels"):
        ssdkit.run("mqsim-paper", flash__channels=None)
    assert issubclass(ssdkit.ConfigError, ssdkit.SsdkitError)
    assert issubclass(ssdkit.SimulationError, ssdkit.SsdkitError)
    with pytest.raises(ssdkit.SsdkitError, match="schema version"):
        Result.from_json('{"schema_version": 99}')


def test_presets_and_schema():
    names = [n for n, _ in ssdkit.presets()]
    assert {"mqsim-paper", "x25m"} <= set(names)
    assert all(desc for _, desc in ssdkit.presets())
    assert "channels = 10" in ssdkit.preset_toml("x25m")
    with pytest.raises(ssdkit.PresetError, match="mqsim-paper"):
        ssdkit.preset_toml("nope")
    assert json.loads(ssdkit.config_schema())["title"] == "Config"


@pytest.mark.parametrize(
    "value, literal",
    [
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.5, "0.5"),
        (1e-5, "1e-05"),
        ("a", '"a"'),
        ('q"\\\n', '"q\\"\\\\\\n"'),
        ([1, 2.5, "x"], '[1, 2.5, "x"]'),
        ({"a b": 1}, '{ "a b" = 1 }'),
    ],
)
def test_toml_literal(value, literal):
    assert toml_literal(value) == literal


LATENCY_COLUMNS = [f"latency_{s}_us" for s in ("mean", "min", "p50", "p90", "p99", "p99_9", "p99_99", "max")]
#: The one name of each figure: a column about latency or bandwidth is one of these.
ONE_NAME = {*LATENCY_COLUMNS, "latency_ns", "bandwidth_MBps"}


def test_shared_figures_have_one_column_name(tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    over = {**SMALL, "flow.0.requests": 400, "flow.0.read_fraction": 0.7, "run.timeseries_window_ms": 2}
    log = tmp_path / "lat.parquet"
    r = ssdkit.run("mqsim-paper", overrides=over, latency_log=str(log), steady_state={"round_ms": 5, "max_rounds": 5})
    summary = r.to_pandas()
    table = ssdkit.sweep("mqsim-paper", {"flow.0.queue_depth": [32]}, overrides=over, workers=1, progress=False)
    lat = pd.read_parquet(log)
    frames = {
        "summary": summary,
        "timeseries": r.to_pandas(kind="timeseries"),
        "rounds": r.to_pandas(kind="rounds"),
        "sweep": table,
        "latency log": lat,
    }
    for name, df in frames.items():
        odd = [c for c in df.columns if ("latency" in c or "bandwidth" in c or c.endswith("_us")) and c not in ONE_NAME]
        assert not odd, (name, odd)
        assert "flow" in df.columns and not {"flow_index", "flow_name"} & set(df.columns), name
    shared = ["flow", "scope", "op", "count", "iops", "bandwidth_MBps", *LATENCY_COLUMNS]
    assert set(shared) <= set(summary.columns) and set(shared) <= set(table.columns)
    # The same figure under the same name holds the same value: the sweep's row and the
    # to_pandas() row of that point's own result.
    point = Result.from_json(table["result_json"].iloc[0]).to_pandas()
    joined = table.merge(point[point.scope != "device"], on=["flow", "op"], suffixes=("", "_own"))
    assert len(joined) == len(table) == 3  # read, write, all
    for c in shared[1:2] + shared[3:]:  # all but the join keys
        assert (joined[c] == joined[f"{c}_own"]).all(), c
    # The latency log: per request, the figures the summary gathers.
    assert {"flow", "op", "bytes", "latency_ns"} <= set(lat.columns)
    flow_rows = summary[summary.flow == 0].set_index("op")
    for op, rows in lat.groupby("op"):
        assert len(rows) == flow_rows.loc[op, "count"] and rows["bytes"].sum() == flow_rows.loc[op, "bytes"]
        # The log floors each latency to whole nanoseconds.
        assert abs(rows["latency_ns"].mean() / 1e3 - flow_rows.loc[op, "latency_mean_us"]) < 1e-3
