"""The cached mapping table from Python: its typed result views match the result document,
and its summary line; the ideal map has no cmt section (docs/ftl.md)."""

import ssdkit
import tomllib


def test_cmt_result_views_and_summary():
    r = ssdkit.run(
        "mqsim-paper",
        overrides={
            "precondition.mode": "sequential",
            "ftl.cmt.mode": "shared",
            "ftl.cmt.capacity_bytes": 1 << 20,
            # No write cache: the writes reach the FTL and dirty the mapping cache.
            "cache.mode": "off",
            "flow.0.queue_depth": 8,
            "flow.0.read_fraction": 0.5,
            "flow.0.requests": 3000,
        },
    )
    m = r.device.cmt
    assert isinstance(m, ssdkit.CmtResult) and isinstance(m.lookups, ssdkit.CmtLookups)
    raw = r.raw["device"]["cmt"]
    assert m.lookups.read_hits == raw["lookups"]["read_hits"]
    assert m.eviction_writebacks == raw["eviction_writebacks"] > 0
    # One lookup per page transaction of a 4 KiB request: 3000 lookups in all.
    lk = m.lookups
    assert lk.read_hits + lk.read_misses + lk.write_hits + lk.write_misses == 3000
    assert r.flows[0].cmt == lk
    assert m.capacity_entries == (1 << 20) // 9 and m.entries_per_translation_page == 8192 // 9
    line = next(x for x in r.summary().splitlines() if "mapping cache" in x)
    assert f"{m.capacity_entries:,} entries" in line and f"hit rate {lk.hit_rate:.1%}" in line
    assert f"writes {m.mapping_page_writes:,}  moved by GC {m.gc_translation_moves:,}" in line


def test_the_preset_has_table_3s_mapping_cache():
    # The MQSim paper (FAST'18), Table 3: a 4 MiB mapping cache and a 256 MiB write cache.
    c = tomllib.loads(ssdkit.resolve_config("mqsim-paper"))
    assert c["ftl"]["cmt"]["mode"] == "shared" and c["ftl"]["cmt"]["capacity_bytes"] == 4 << 20
    assert c["cache"]["mode"] == "write" and c["cache"]["capacity_bytes"] == 256 << 20


def test_ideal_map_has_no_cmt_section():
    r = ssdkit.run(
        "mqsim-paper",
        overrides={"ftl.cmt.mode": "ideal", "precondition.mode": "sequential", "flow.0.requests": 200},
    )
    assert r.device.cmt is None and r.flows[0].cmt is None
    assert "cmt" not in r.raw["device"]
    assert "mapping cache" not in r.summary()
