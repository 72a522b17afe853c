import pytest
import ssdkit

# A few thousand requests on a shrunken mqsim-paper device: 128 blocks per plane instead of
# 2048 cuts the mapping tables (and device set-up time) sixteen-fold without changing timing.
SMALL = {"flow.0.requests": 2000, "flash.blocks_per_plane": 128}
SMALL_SET = [f"{k}={v}" for k, v in SMALL.items()]

# The controller without its memories: the whole map in DRAM (the MQSim paper's "perfect CMT")
# and no data cache. The mqsim-paper preset has Table 3's 4 MiB mapping cache and 256 MiB write
# cache; checks of the back end take them away.
BARE = {"ftl.cmt.mode": "ideal", "cache.mode": "off"}
BARE_SET = [f"{k}={v}" for k, v in BARE.items()]

# A 64 MiB device (2 planes x 128 blocks x 64 pages x 4 KiB) for preconditioning and
# snapshots: every mode, `write` included, takes milliseconds, and a few thousand writes keep
# GC busy. The mqsim-paper timing is unchanged; the controller is bare (a 256 MiB write cache
# would hold the whole device).
TINY = {
    **BARE,
    "flash.channels": 2,
    "flash.chips_per_channel": 1,
    "flash.dies_per_chip": 1,
    "flash.planes_per_die": 1,
    "flash.blocks_per_plane": 128,
    "flash.pages_per_block": 64,
    "flash.page_size_bytes": 4096,
}
TINY_SET = [f"{k}={v}" for k, v in TINY.items()]

# 4 KiB random writes on TINY, with the default GC settings (preemptible GC); that they finish
# is test_snapshot.py::test_sustained_writes_on_a_small_device_complete.
TINY_WRITES = {**TINY, "flow.0.read_fraction": 0.0, "flow.0.requests": 3000}


@pytest.fixture(scope="session")
def small_result():
    return ssdkit.run("mqsim-paper", overrides=SMALL)
