import pytest
import ssdkit

# A few thousand requests on a shrunken mqsim-paper device: 128 blocks per plane instead of
# 2048 cuts the mapping tables (and device set-up time) sixteen-fold without changing timing.
SMALL = {"flow.0.requests": 2000, "flash.blocks_per_plane": 128}
SMALL_SET = [f"{k}={v}" for k, v in SMALL.items()]


@pytest.fixture(scope="session")
def small_result():
    return ssdkit.run("mqsim-paper", overrides=SMALL)
