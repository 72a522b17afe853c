"""The DRAM data cache from Python: its typed result views, and that a run with the cache off
has no cache section (docs/cache.md)."""

import ssdkit
from conftest import TINY_WRITES


def test_write_cache_result_views():
    r = ssdkit.run(
        "mqsim-paper",
        overrides={**TINY_WRITES, "cache.mode": "write", "cache.capacity_bytes": 262144, "flow.0.queue_depth": 8},
    )
    c = r.device.cache
    assert isinstance(c, ssdkit.CacheResult)
    assert c.mode == "write" and c.capacity_pages == 64
    t = c.totals
    assert isinstance(t, ssdkit.CacheCounts)
    assert t.write_page_hits + t.write_page_misses == 3000
    assert t.write_sectors == t.write_back_sectors + t.write_absorbed_sectors + 8 * t.dirty_pages_at_end
    assert t.dirty_evictions == t.write_back_pages > 0
    assert r.flows[0].cache == t
    assert r.raw["device"]["cache"]["totals"]["writes_waited"] == t.writes_waited
    line = next(x for x in r.summary().splitlines() if "data cache" in x)
    assert "write, 64 pages" in line and f"write-backs {t.write_back_pages:,}" in line


def test_cache_off_has_no_cache_section():
    r = ssdkit.run("mqsim-paper", overrides={**TINY_WRITES, "flow.0.requests": 200})
    assert r.device.cache is None and r.flows[0].cache is None
    assert "cache" not in r.raw["device"]
    assert "data cache" not in r.summary()
