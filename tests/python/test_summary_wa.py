"""Write amplification where there is none to measure, and the mean-field prediction beside the
measured figure (issue 31): the summary, Python and sweep tables agree on a missing value, and
the summary says what fast preconditioning's predicted WA leaves out. Also that docs/results.md
agrees with docs/host.md and docs/cache.md on interrupts and flushes."""

import json
import math
import pathlib

import pytest
import ssdkit
from conftest import BARE, SMALL

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"

# 2,618 4 KiB random writes: the mqsim-paper write cache (32,768 pages) holds them all.
CACHED_WRITES = {**SMALL, "flow.0.read_fraction": 0.0, "flow.0.requests": 2618}


def _line(text: str, label: str) -> str:
    return next(x for x in text.splitlines() if x.startswith(label))


def test_writes_all_in_the_write_cache_have_no_flash_writes_yet():
    r = ssdkit.run("mqsim-paper", overrides=CACHED_WRITES)
    assert r.device.stats.write.count == 2618 and r.device.ftl.user_page_writes == 0
    assert r.device.ftl.write_amplification is None
    assert r.raw["device"]["ftl"]["write_amplification"] == 0.0, "the document keeps its 0"
    line = _line(r.summary(), "write amplification")
    assert line.split(None, 2)[2] == "- (no flash writes yet: 2,618 writes in the write cache)"
    assert "no user writes" not in r.summary()


def test_a_read_only_run_has_no_writes_and_no_ratio(small_result, tmp_path):
    ftl = small_result.device.ftl
    assert ftl.user_page_writes == 0 and ftl.write_amplification is None
    assert _line(small_result.summary(), "write amplification").split(None, 2)[2] == "- (no writes)"
    p = tmp_path / "r.json"
    p.write_text(small_result.to_json())
    assert ssdkit.load(p).device.ftl.write_amplification is None
    assert "write amplification -" in small_result._repr_html_()


def test_measured_wa_is_a_number():
    r = ssdkit.run("mqsim-paper", overrides={**BARE, **SMALL, "flow.0.read_fraction": 0.0, "flow.0.requests": 3000})
    ftl = r.device.ftl
    assert ftl.user_page_writes > 0
    assert ftl.write_amplification == r.raw["device"]["ftl"]["write_amplification"] >= 1.0
    assert _line(r.summary(), "write amplification").split()[2] == f"{ftl.write_amplification:.3f}"


def test_the_sweep_table_has_nan_not_zero_without_flash_writes():
    pytest.importorskip("pandas")
    t = ssdkit.sweep(
        "mqsim-paper",
        {"flow.0.read_fraction": [1.0, 0.0]},
        overrides={**BARE, **SMALL, "flow.0.requests": 1500},
        workers=1,
        progress=False,
    )
    wa = t.groupby("flow.0.read_fraction")["write_amplification"].first()
    assert math.isnan(wa[1.0]), "a read-only point has no write amplification"
    assert wa[0.0] >= 1.0
    raw = json.loads(t[t["flow.0.read_fraction"] == 0.0]["result_json"].iloc[0])
    assert wa[0.0] == raw["device"]["ftl"]["write_amplification"]


def test_the_prediction_is_labelled_ftl_only_and_says_what_it_leaves_out():
    r = ssdkit.run("mqsim-paper", overrides=CACHED_WRITES)
    lines = r.summary().splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("precondition"))
    predicted = r.device.precondition["predicted_write_amplification"]
    assert f"predicted WA {predicted:.3f} (FTL-only steady state)" in lines[at]
    assert (
        lines[at + 1].startswith(" ")
        and lines[at + 1].strip() == "the prediction leaves out this run's write cache and mapping cache"
    )
    # Only what is on is named; a bare controller has nothing the prediction leaves out.
    no_cache = ssdkit.run("mqsim-paper", overrides={**CACHED_WRITES, "cache.mode": "off"})
    assert "leaves out this run's mapping cache\n" in no_cache.summary()
    bare = ssdkit.run("mqsim-paper", overrides={**CACHED_WRITES, **BARE})
    assert "(FTL-only steady state)" in bare.summary() and "leaves out" not in bare.summary()


def test_results_doc_agrees_with_host_and_cache_docs():
    text = " ".join((DOCS / "results.md").read_text().split())
    assert "not modelled yet" not in text
    assert "(MSI) is not modelled" not in text
    assert "only a host program driving `ssdkit.Device` issues them" not in text
    assert "no volatile write cache is modelled" not in text
    for said in ['host.completion = "interrupt"', "MSI-X", "`flush_every`", "`cache.flush_scope`", "app_stats"]:
        assert said in text, said
    # And the Python docstring of Stats says the same.
    assert "only a :class:`ssdkit.Device` program" not in (ssdkit.Stats.__doc__ or "")
