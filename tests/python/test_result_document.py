"""The result document as a contract: the JSON Schema generated from the Rust types
(docs/result.schema.json) accepts a real result, docs/results.md names every field, the Python
reader takes every field the core writes, and the exported latency histograms give back the
result's own percentiles and hold every request's latency."""

import json
import pathlib

import numpy as np
import pytest
import ssdkit
from conftest import TINY_WRITES

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"

MIX = {
    **TINY_WRITES,
    "flow.0.read_fraction": 0.6,
    "flow.0.trim_fraction": 0.1,
    "flow.0.requests": 3000,
}


@pytest.fixture(scope="module")
def mixed():
    return ssdkit.run("mqsim-paper", overrides=MIX)


def _result_fields(schema):
    """Every property name of the result document, following references, except inside
    `config` (the configuration has its own schema, docs/config.schema.json)."""
    seen, names = set(), set()

    def walk(node):
        if isinstance(node, list):
            for v in node:
                walk(v)
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if ref and ref not in seen:
            seen.add(ref)
            walk(schema["definitions"][ref.rsplit("/", 1)[1]])
        for name, sub in node.get("properties", {}).items():
            if name != "config":
                names.add(name)
                walk(sub)
        for k in ("allOf", "anyOf", "oneOf", "items"):
            walk(node.get(k))

    walk(schema)
    return names


def test_a_real_result_validates_against_the_generated_schema(mixed):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extras: pip install '.[test]'")
    schema = json.loads((DOCS / "result.schema.json").read_text())
    jsonschema.validate(mixed.raw, schema)
    # And the schema would notice a wrong type.
    bad = json.loads(mixed.to_json())
    bad["device"]["ftl"]["gc_runs"] = "many"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_docs_name_every_result_field():
    schema = json.loads((DOCS / "result.schema.json").read_text())
    names = _result_fields(schema)
    assert {"latency_histogram", "upper_ps", "gc_runs", "bin_width"} <= names
    text = (DOCS / "results.md").read_text()
    missing = sorted(n for n in names if f"`{n}" not in text and f"{n}`" not in text and f".{n}" not in text)
    assert not missing, f"docs/results.md does not mention {missing}"


def test_python_reader_takes_every_field_the_core_writes(mixed):
    def check(obj, d, where):
        for key in d:
            py = {"latency_us": "latency", "latency_histogram": "histogram"}.get(key, key)
            assert hasattr(obj, py), f"{where}.{key} is in the document but not on {type(obj).__name__}"

    r = mixed
    check(r, r.raw, "result")
    check(r.device, r.raw["device"], "device")
    check(r.device.ftl, r.raw["device"]["ftl"], "device.ftl")
    check(r.device.flash, r.raw["device"]["flash"], "device.flash")
    check(r.flows[0], r.raw["flows"][0], "flows[0]")
    check(r.device.stats.read, r.raw["device"]["stats"]["read"], "device.stats.read")


def test_results_come_first_and_the_configuration_last(mixed):
    keys = list(json.loads(mixed.to_json()))
    assert keys[0] == "schema_version"
    assert keys[-1] == "config"


def test_load_reads_a_result_file_back(mixed, tmp_path):
    p = tmp_path / "out.json"
    p.write_text(mixed.to_json())
    back = ssdkit.load(p)
    assert back.raw == mixed.raw
    assert back.device.stats.read.histogram == mixed.device.stats.read.histogram
    assert back.to_json() == mixed.to_json()


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(ssdkit.SsdkitError, match=r"missing\.json: cannot read"):
        ssdkit.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1,\n  oops}')
    with pytest.raises(ssdkit.SsdkitError, match=r"bad\.json: line 2, column 3: not a JSON result"):
        ssdkit.load(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(ssdkit.SsdkitError, match=r"arr\.json: not a result document \(a JSON list"):
        ssdkit.load(arr)
    old = tmp_path / "old.json"
    old.write_text('{"schema_version": 99}')
    with pytest.raises(ssdkit.SsdkitError, match=r"old\.json: result schema version 99"):
        ssdkit.load(old)


def test_percentiles_from_the_histogram_equal_the_results_own(mixed):
    for scope in [mixed.device.stats, mixed.flows[0].stats]:
        for op in ("read", "write", "trim", "all"):
            s = getattr(scope, op)
            assert s.count > 0
            lat = s.latency
            own = [lat.p50, lat.p90, lat.p99, lat.p99_9, lat.p99_99]
            assert [s.quantile(q) for q in (0.5, 0.9, 0.99, 0.999, 0.9999)] == own, op
            assert list(s.percentile([50, 90, 99, 99.9, 99.99])) == own, op
            assert s.quantile(0.0) >= lat.min and s.quantile(1.0) == lat.max
            x, frac = s.latency_cdf()
            assert len(x) == len(s.histogram.count) and frac[-1] == 1.0
            assert np.all(np.diff(x) > 0) and np.all(np.diff(frac) > 0)
            assert s.histogram.total == s.count


def test_quantile_edge_cases(mixed, small_result):
    s = mixed.device.stats.read
    assert isinstance(s.quantile(0.5), float)
    assert s.quantile([0.5]).shape == (1,)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"quantile: q must lie in \[0, 1\]"):
            s.quantile(bad)
    with pytest.raises(ValueError, match=r"percentile: p must lie in \[0, 100\]"):
        s.percentile(101)
    # An op that never ran: NaN, and an empty CDF.
    w = small_result.device.stats.write
    assert w.count == 0 and np.isnan(w.quantile(0.5))
    x, frac = w.latency_cdf()
    assert x.size == 0 and frac.size == 0


def test_each_requests_latency_lies_in_the_histogram_with_the_same_counts():
    dev = ssdkit.Device("mqsim-paper", overrides=MIX)
    rng = np.random.default_rng(7)
    n = 4000
    times = np.sort(rng.integers(0, 40_000_000, n))
    ops = rng.choice(np.array(["read", "write", "trim"], dtype=object), n, p=[0.6, 0.3, 0.1])
    pages = dev.capacity_bytes // 4096
    dev.submit_many(times, ops, rng.integers(0, pages, n) * 4096, np.full(n, 4096))
    dev.run_to_idle()
    log = dev.drain_arrays()
    r = dev.result()
    for op in ("read", "write", "trim"):
        h = getattr(r.device.stats, op).histogram
        lat = (log["complete_ps"] - log["submit_ps"])[log["op"] == op].astype(np.uint64)
        lat = np.maximum(lat, 1)  # a latency of 0 is recorded as 1
        upper = np.asarray(h.upper_ps, dtype=np.uint64)
        idx = np.searchsorted(upper, lat, side="left")
        assert np.all(np.asarray(h.lower_ps, dtype=np.uint64)[idx] <= lat)
        counts = np.bincount(idx, minlength=len(upper))
        assert counts.tolist() == h.count, op
