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


def test_two_unpinned_flows_equal_mqsims():
    # Seeds 5 and 99, the second with a 37 % working set and 8-sector alignment: MQSim printed
    # 162300928 and 648422696.
    ranges = mr.flow_lha_ranges(GEOMETRY, [[None] * 4, [None] * 4], *SHIPPED)
    assert ranges == [(0, 499289855), (499289856, 998579711)]
    assert mr.streaming_start(5, *ranges[0], 1.0, 256) == 162300928
    assert mr.streaming_start(99, *ranges[1], 0.37, 8) == 648422696


def test_seeds_outside_a_c_int_are_refused():
    for bad in (-1, 2**31):
        with pytest.raises(ValueError, match="C ints"):
            mr.MqsimRandom(bad)


def _flow(seed_tag, wsp=100, align=256, avg=256, extra=""):
    return f"""<IO_Flow_Parameter_Set_Synthetic>
  <Priority_Class>HIGH</Priority_Class>
  <Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
  {extra}
  <Working_Set_Percentage>{wsp}</Working_Set_Percentage>
  <Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type>
  <Read_Percentage>100</Read_Percentage>
  <Address_Distribution>STREAMING</Address_Distribution>
  <Generated_Aligned_Addresses>true</Generated_Aligned_Addresses>
  <Address_Alignment_Unit>{align}</Address_Alignment_Unit>
  <Request_Size_Distribution>FIXED</Request_Size_Distribution>
  <Average_Request_Size>{avg}</Average_Request_Size>
  <Variance_Request_Size>0</Variance_Request_Size>
  {seed_tag}
  <Average_No_of_Reqs_in_Queue>32</Average_No_of_Reqs_in_Queue>
  <Stop_Time>0</Stop_Time>
  <Total_Requests_To_Generate>100</Total_Requests_To_Generate>
</IO_Flow_Parameter_Set_Synthetic>"""


def _workload(*flows):
    body = "".join(f if f.startswith("<IO_Flow") else _flow(f) for f in flows)
    return f'<?xml version="1.0"?>\n<MQSim_IO_Scenarios><IO_Scenario>{body}</IO_Scenario></MQSim_IO_Scenarios>\n'


def _first_sectors(sc):
    """Each flow's first logical sector as the import begins it."""
    return [(f["start_bytes"] + f.get("first_offset_bytes", 0)) // SECTOR for f in sc.doc["flow"]]


def _notes(sc):
    return "\n".join(e.line() for e in sc.unmapped)


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


def test_import_of_two_flows_begins_each_at_mqsims_address():
    # The second flow's range starts at ssdkit's equal split (sector 499290432), MQSim's at
    # 499289856: the absolute address is kept, which decides the stripe and translation page.
    (sc,) = import_mqsim(
        SSDCONFIG, _workload(_flow("<Seed>5</Seed>"), _flow("<Seed>99</Seed>", wsp=37, align=8, avg=8))
    )
    assert _first_sectors(sc) == [162300928, 648422696]
    assert "STREAMING: MQSim" not in _notes(sc)


def test_sata_splits_the_space_as_if_no_flow_were_pinned(tmp_path):
    # MQSim's SATA device gives every flow the whole device when it splits the logical space
    # (SSD_Device.cpp), so the second flow's pins do not move the first flow's address.
    dev = tmp_path / "sata.xml"
    with open(SSDCONFIG, encoding="utf-8") as f:
        dev.write_text(f.read().replace("<HostInterface_Type>NVME<", "<HostInterface_Type>SATA<"))
    pinned = _flow("<Seed>99</Seed>", wsp=37, align=8, avg=8, extra="<Channel_IDs>0,1,2</Channel_IDs>")
    (sc,) = import_mqsim(str(dev), _workload(_flow("<Seed>5</Seed>"), pinned))
    assert _first_sectors(sc) == [162300928, 648422696]
    # The same flows on NVMe: the pins shrink the second flow's share, which moves both.
    (sc,) = import_mqsim(SSDCONFIG, _workload(_flow("<Seed>5</Seed>"), pinned))
    assert _first_sectors(sc)[0] == 263739136  # as MQSim printed for this split


def test_an_address_before_the_flows_start_is_not_a_negative_offset():
    # Aligned down to 2^26 sectors, MQSim's draw for the second flow (seed 0) lies before its
    # space's first sector, 499289856; ssdkit rounds the flow's start up to the alignment.
    (sc,) = import_mqsim(SSDCONFIG, _workload(_flow("<Seed>5</Seed>"), _flow("<Seed>0</Seed>", align=2**26)))
    f = sc.doc["flow"][1]
    assert mr.streaming_start(0, 499289856, 998579711, 1.0, 2**26) < 499289856
    assert f.get("first_offset_bytes", 0) >= 0 and f["start_bytes"] % (2**26 * SECTOR) == 0
    assert "MQSim begins this STREAMING flow at sector" in _notes(sc)


@pytest.mark.parametrize(("seed", "wraps"), [(1, False), (2, True)])
def test_a_first_request_past_the_working_set_end_begins_at_the_start(seed, wraps):
    # 1 % of the device is 9,985,798 sectors; requests of 5,000,000 sectors: seed 2 draws
    # 6,820,320, whose request would pass the end, so MQSim begins at the flow's start
    # (IO_Flow_Synthetic.cpp, Generate_next_request); seed 1 draws 1,487,016.
    (sc,) = import_mqsim(SSDCONFIG, _workload(_flow(f"<Seed>{seed}</Seed>", wsp=1, align=8, avg=5_000_000)))
    assert _first_sectors(sc) == [0 if wraps else 1487016]
    assert "STREAMING: MQSim" not in _notes(sc)


def test_seed_minus_one_is_reproduced_and_below_it_refused():
    # MQSim gives the address generator seed + 1: -1 gives it 0; below, its `Advance` would
    # square its matrix about 2^32 times.
    # 555091200: MQSim's RandomGenerator(0), compiled from its sources, drew it.
    (sc,) = import_mqsim(SSDCONFIG, _workload("<Seed>-1</Seed>"))
    assert _first_sectors(sc) == [555091200]
    (sc,) = import_mqsim(SSDCONFIG, _workload("<Seed>-2</Seed>"))
    assert "first_offset_bytes" not in sc.doc["flow"][0]
    assert "reproduced for seeds -1..2147483646" in _notes(sc)
    assert "reproduced from it" not in _notes(sc)


# The jump's matrix products against CMRRandomGenerator's as written (int64_t wraps, C's
# remainder): crates/ssdkit-core/src/workload/mqsim_random.rs, `products_wrap_as_mqsims_written_out`.
