"""MQSim's first STREAMING address, reproduced by the import, against MQSim itself.

The expected addresses were printed by MQSim (CMU-SAFARI/MQSim at 7ec40e3, built with its
Makefile, one `fprintf` of each request's Start_LBA where Host_Interface_NVMe receives it) on
its shipped ssdconfig.xml with 128 KiB STREAMING reads aligned to 256 sectors; the first request
of each run starts where the flow begins."""

import os

import pytest
from ssdkit import _mqsim_random as mr
from ssdkit.mqsim import import_mqsim

DATA = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "data", "mqsim"))
SSDCONFIG = os.path.join(DATA, "ssdconfig.xml")
SECTOR = 512
# The shipped device: 8 channels x 4 chips x 2 dies x 2 planes, 2048 blocks of 256 pages of
# 16 sectors, 7 % over-provisioning.
GEOMETRY = (8, 4, 2, 2)
SHIPPED = (2048, 256, 16, 0.07)

# Flow <Seed> -> MQSim's first Start_LBA (one flow on the whole device, working set 100 %).
MEASURED = {7: 971518208, 199: 14184448, 200: 148701952, 12344: 238209536, 54321: 241656576, 2000000000: 383703040}


def test_one_flow_space_is_mqsims():
    # MQSim's Logical_Address_Partitioning_Unit: trunc(2048 * 256 * 16 * 0.93) sectors per plane.
    assert mr.flow_lha_ranges(GEOMETRY, [[None] * 4], *SHIPPED) == [(0, 7801405 * 128 - 1)]


@pytest.mark.parametrize("seed", sorted(MEASURED))
def test_first_streaming_address_equals_mqsims(seed):
    ((first, last),) = mr.flow_lha_ranges(GEOMETRY, [[None] * 4], *SHIPPED)
    assert mr.streaming_start(seed, first, last, 1.0, 256) == MEASURED[seed]


def test_two_flows_one_pinned_equal_mqsims():
    # Flow 0: seed 5, all planes; flow 1: seed 99, channels 0-2, working set 50 %, 4 KiB
    # requests aligned to 8 sectors. MQSim printed 263739136 and 886920168.
    ranges = mr.flow_lha_ranges(GEOMETRY, [[None] * 4, [[0, 1, 2], None, None, None]], *SHIPPED)
    # The 48 planes of channels 0-2 are shared: half of theirs to each flow.
    assert ranges == [(0, 811346095), (811346096, 998579791)]
    assert mr.streaming_start(5, *ranges[0], 1.0, 256) == 263739136
    assert mr.streaming_start(99, *ranges[1], 0.5, 8) == 886920168


def test_seeds_outside_a_c_int_are_refused():
    for bad in (-1, 2**31):
        with pytest.raises(ValueError, match="C ints"):
            mr.MqsimRandom(bad)


def _workload(seed_tag):
    return f"""<?xml version="1.0"?>
<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Synthetic>
  <Priority_Class>HIGH</Priority_Class>
  <Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
  <Working_Set_Percentage>100</Working_Set_Percentage>
  <Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type>
  <Read_Percentage>100</Read_Percentage>
  <Address_Distribution>STREAMING</Address_Distribution>
  <Generated_Aligned_Addresses>true</Generated_Aligned_Addresses>
  <Address_Alignment_Unit>256</Address_Alignment_Unit>
  <Request_Size_Distribution>FIXED</Request_Size_Distribution>
  <Average_Request_Size>256</Average_Request_Size>
  <Variance_Request_Size>0</Variance_Request_Size>
  {seed_tag}
  <Average_No_of_Reqs_in_Queue>32</Average_No_of_Reqs_in_Queue>
  <Stop_Time>0</Stop_Time>
  <Total_Requests_To_Generate>100</Total_Requests_To_Generate>
</IO_Flow_Parameter_Set_Synthetic></IO_Scenario></MQSim_IO_Scenarios>
"""


@pytest.mark.parametrize("compat", [False, True])
def test_import_begins_the_stream_where_mqsim_does(compat):
    (sc,) = import_mqsim(SSDCONFIG, _workload("<Seed>12344</Seed>"), mqsim_compat=compat)
    (f,) = sc.doc["flow"]
    assert (f["pattern"], f["start_bytes"], f["first_offset_bytes"]) == ("sequential", 0, 238209536 * SECTOR)
    assert sc.sources["flow.0.first_offset_bytes"].endswith(
        "IO_Flow_Parameter_Set_Synthetic[1]/Seed> = 12344: MQSim's first STREAMING address, sector 238209536"
    )
    text = "\n".join(e.line() for e in sc.unmapped)
    assert "STREAMING: MQSim starts" not in text


def test_import_without_a_seed_begins_at_the_start_and_says_why():
    (sc,) = import_mqsim(SSDCONFIG, _workload(""))
    (f,) = sc.doc["flow"]
    assert "first_offset_bytes" not in f
    text = "\n".join(e.line() for e in sc.unmapped)
    assert "MQSim leaves the seed of a flow without <Seed> uninitialised" in text
