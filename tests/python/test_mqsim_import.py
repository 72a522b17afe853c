"""MQSim ssdconfig.xml / workload.xml import: mapped values, the unmapped list, bad input, the
CLI, and runs of every scenario of the shipped files."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import ssdkit
from ssdkit import mqsim
from ssdkit.mqsim import MqsimError, import_mqsim, mqsim_to_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of ssdkit on Python < 3.11
    import tomli as tomllib

DATA = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "data", "mqsim"))
SSDCONFIG = os.path.join(DATA, "ssdconfig.xml")
WORKLOAD = os.path.join(DATA, "workload.xml")
TRACE = os.path.join(DATA, "traces", "tpcc-small.trace")
with open(SSDCONFIG, encoding="utf-8") as _f:
    SSDCONFIG_TEXT = _f.read()
SMALL = ["flash.blocks_per_plane=128"]  # 16x fewer blocks: fast set-up, same timing


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=600
    )


def one_error_line(p):
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error: "), p.stderr
    return lines[0]


def resolved(toml_text):
    doc = tomllib.loads(toml_text)
    if not doc.get("flow"):
        toml_text += "\n[[flow]]\nrequests = 1\n"
    return tomllib.loads(ssdkit.resolve_config(toml_text))


def walk(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from walk(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def get(d, dotted):
    for part in dotted.split("."):
        d = d[part]
    return d


SYNTH = """
<IO_Flow_Parameter_Set_Synthetic>
  <Priority_Class>{prio}</Priority_Class>
  <Device_Level_Data_Caching_Mode>{caching}</Device_Level_Data_Caching_Mode>
  <Working_Set_Percentage>{wsp}</Working_Set_Percentage>
  <Synthetic_Generator_Type>{gen}</Synthetic_Generator_Type>
  <Read_Percentage>{read}</Read_Percentage>
  <Address_Distribution>{dist}</Address_Distribution>
  <Percentage_of_Hot_Region>{hot}</Percentage_of_Hot_Region>
  <Generated_Aligned_Addresses>{aligned}</Generated_Aligned_Addresses>
  <Address_Alignment_Unit>{unit}</Address_Alignment_Unit>
  <Request_Size_Distribution>{sizes}</Request_Size_Distribution>
  <Average_Request_Size>{avg}</Average_Request_Size>
  <Variance_Request_Size>{var}</Variance_Request_Size>
  <Average_No_of_Reqs_in_Queue>{qd}</Average_No_of_Reqs_in_Queue>
  {extra}
  <Stop_Time>{stop}</Stop_Time>
  <Total_Requests_To_Generate>{total}</Total_Requests_To_Generate>
</IO_Flow_Parameter_Set_Synthetic>
"""
DEFAULTS = {
    "caching": "TURNED_OFF",
    "prio": "HIGH",
    "wsp": 100,
    "gen": "QUEUE_DEPTH",
    "read": 100,
    "dist": "RANDOM_UNIFORM",
    "hot": 0,
    "aligned": "true",
    "unit": 8,
    "sizes": "FIXED",
    "avg": 8,
    "var": 0,
    "qd": 4,
    "extra": "",
    "stop": 0,
    "total": 1000,
}


def workload(*flows):
    body = "".join(SYNTH.format(**{**DEFAULTS, **f}) for f in flows)
    return f'<?xml version="1.0"?>\n<MQSim_IO_Scenarios><IO_Scenario>{body}</IO_Scenario></MQSim_IO_Scenarios>\n'


def convert(*flows, ssdconfig=SSDCONFIG):
    (sc,) = import_mqsim(ssdconfig, workload(*flows))
    return sc


# --- device -------------------------------------------------------------------------------------


def test_converted_file_says_which_host_costs_mqsim_does_not_model():
    (dev,) = import_mqsim(SSDCONFIG)
    head = "\n".join(line for line in dev.toml.splitlines() if line.startswith("#"))
    assert "no MSI, ISR or polling" in head and 'host.completion = "interrupt"' in head
    got = resolved(dev.toml)
    assert got["host"]["completion"] == "none" and got["pcie"]["ack_every_tlps"] == 0


def test_device_equals_the_mqsim_paper_preset():
    (dev,) = import_mqsim(SSDCONFIG)
    assert dev.index == 0 and "flow" not in dev.doc
    got = resolved(dev.toml)
    want = resolved(ssdkit.preset_toml("mqsim-paper"))
    preset_keys = [k for k, _ in walk(tomllib.loads(ssdkit.preset_toml("mqsim-paper"))) if not k.startswith("flow")]
    assert len(preset_keys) > 25
    for key in preset_keys:
        if key == "interface.io_queue_depth":
            # The shipped ssdconfig.xml says 65535; the preset uses MQSim's built-in 1024.
            assert get(got, key) == 65535
            continue
        if key == "ftl.cmt.capacity_bytes":
            # The shipped ssdconfig.xml has a 2 MiB mapping cache (checked below); the preset
            # the paper's Table 3's 4 MiB.
            assert get(want, key) == 4 << 20
            continue
        assert get(got, key) == get(want, key), key
    # MQSim-specific settings the preset leaves at ssdkit's defaults.
    assert got["ftl"]["gc_policy"] == {"type": "d_choices", "d": 11}  # RGA, log2(2048)
    assert got["ftl"]["gc_preemptible"] is False and got["ftl"]["gc_copyback"] is False
    # Enabled_Preconditioning = false: MQSim starts empty and maps a page on its first read.
    assert got["precondition"]["mode"] == "empty"
    assert got["ftl"]["unmapped_reads"] == "read_flash"
    # Ideal_Mapping_Table = false: MQSim's shipped 2 MiB shared mapping cache.
    cmt = got["ftl"]["cmt"]
    assert (cmt["mode"], cmt["capacity_bytes"]) == ("shared", 2097152)
    # Its translation pages hold MQSim's GTD entries: 2^26 physical pages (8 x 4 x 2 x 2 x 2048
    # x 256) and 16 sectors per 8 KiB page take ceil((26 + 16) / 8) = 6 bytes: 1,365 a page.
    assert cmt["translation_entry_bytes"] == 6
    # The shipped 256 MiB data cache with its DRAM (row 8192 B, 100 MT/s, 1 B bursts, 13 ns),
    # a write cache as MQSim's flows default to.
    c = got["cache"]
    assert (c["mode"], c["capacity_bytes"], c["sharing"]) == ("write", 268435456, "shared")
    assert (c["dram_row_bytes"], c["dram_data_rate_mts"], c["dram_burst_bytes"]) == (8192, 100, 1)
    assert (c["dram_trcd_ns"], c["dram_tcl_ns"], c["dram_trp_ns"]) == (13.0, 13.0, 13.0)


def test_unmapped_list_has_the_known_parameters():
    scs = import_mqsim(SSDCONFIG, WORKLOAD)
    assert [s.index for s in scs] == [1, 2, 3]
    lines = [e.line() for s in scs for e in s.unmapped]
    text = "\n".join(lines)
    for frag in [
        "Device_Parameter_Set/Seed = 321",
        "CMT_Capacity = 2097152: ssdkit caches whole translation pages",
        "CMD_Suspension_Support = ERASE",
        "Block_PE_Cycles_Limit = 10000",
        "Page_Metadat_Capacity = 448",
        "Static_Wearleveling_Enabled = true",
        "Preferred_suspend_erase_time_for_read = 700000: MQSim's parser reads `Prefered_",
        "IO_Scenario[1]/IO_Flow_Parameter_Set_Synthetic[1]/Initial_Occupancy_Percentage = 75",
        "IO_Scenario[1]/IO_Flow_Parameter_Set_Synthetic[2]/Seed = 6533",
        "IO_Scenario[1]/IO_Flow_Parameter_Set_Synthetic[1]/Intensity = 32768: not read by MQSim",
        "IO_Scenario[3]/IO_Flow_Parameter_Set_Trace_Based[1]/Time_Unit = NANOSECOND",
        "IO_Scenario[3]/IO_Flow_Parameter_Set_Trace_Based[1]/Initial_Occupancy_Percentage = 70",
    ]:
        assert frag in text, frag
    for s in scs:
        head = s.toml.split("\n\n", 1)[0]
        for e in s.unmapped:
            assert f"#   {e.line()}" in head  # under the heading of its cause
    # Parameters that map are not listed.
    for tag in ("Flash_Channel_Count", "Page_Capacity", "GC_Exec_Threshold", "Average_Request_Size"):
        assert f"/{tag} =" not in text


def test_scenario_flows():
    s1, s2, s3 = import_mqsim(SSDCONFIG, WORKLOAD)
    cap = s1.capacity_bytes
    share = (cap // 512 // 2) * 512
    f0, f1 = s1.doc["flow"]
    for f, qd in ((f0, 16), (f1, 2)):
        assert f["read_fraction"] == 0.0 and f["queue_depth"] == qd
        assert f["request_bytes"] == 4096 and f["align_bytes"] == 8192 and f["pattern"] == "random"
        assert f["requests"] == 0 and f["duration_ms"] == 10000.0  # Stop_Time 10 s wins
        assert "priority" not in f
    assert f0["start_bytes"] == 0 and f0["range_bytes"] == (cap // 512 // 2 * 50 // 100) * 512
    assert f1["start_bytes"] % 8192 == 0 and share <= f1["start_bytes"] < share + 8192
    assert "arbitration" not in s1.doc["interface"]  # one class (HIGH) for both flows
    # Scenario 2: URGENT and HIGH under PRIORITY_OUT_OF_ORDER: the classes go to the die
    # queues, as in MQSim; fetch stays round robin.
    assert s2.doc["tsu"]["policy"] == "priority_out_of_order"
    assert "arbitration" not in s2.doc["interface"]
    assert [f["priority"] for f in s2.doc["flow"]] == ["urgent", "high"]
    assert all(f["read_fraction"] == 1.0 for f in s2.doc["flow"])
    # Scenario 3: the trace flow covers the whole space and folds addresses into it.
    (t,) = s3.doc["flow"]
    assert t["trace"] == TRACE and t["trace_format"] == "mqsim"
    assert (t["replay"], t["fold"], t["start_bytes"], t["range_bytes"]) == ("timed", "modulo", 0, cap)


def test_synthetic_variants():
    sc = convert(
        {"gen": "BANDWIDTH", "extra": "<Bandwidth>10000000</Bandwidth>", "read": 30, "avg": 16, "stop": 5000000},
        {"dist": "RANDOM_HOTCOLD", "hot": 20, "sizes": "NORMAL", "avg": 8, "var": 4, "aligned": "false"},
        {"dist": "STREAMING", "aligned": "true", "unit": 16, "avg": 8, "wsp": 0},
    )
    bw, hc, st = sc.doc["flow"]
    per_s = (10000000 // 512) // 16  # MQSim's integer arithmetic
    assert bw["arrival"] == "exponential" and bw["rate_iops"] == 1e9 / (1_000_000_000 // per_s)
    assert "queue_depth" not in bw and bw["read_fraction"] == 0.3
    assert bw["duration_ms"] == 5.0 and bw["requests"] == 0
    assert (hc["pattern"], hc["hot_space_fraction"], hc["hot_access_fraction"]) == ("hotcold", 0.2, 0.8)
    assert (hc["size"], hc["request_bytes"], hc["size_stdev_bytes"]) == ("normal", 4096, 2048)
    assert hc["align_bytes"] == 512 and hc["requests"] == 1000
    assert st["pattern"] == "sequential" and st["stride_bytes"] == 8192 and st["align_bytes"] == 8192
    cap = sc.capacity_bytes
    per = cap // 512 // 3
    assert st["start_bytes"] + st["range_bytes"] == (2 * per + per) * 512  # Working_Set_Percentage 0 -> 100
    text = "\n".join(e.line() for e in sc.unmapped)
    assert "Address_Distribution = STREAMING: MQSim starts a STREAMING flow at a random address" in text
    assert "Working_Set_Percentage = 0" in text


def test_pinning_and_unknown_tags():
    extra = "<Channel_IDs>0,1</Channel_IDs><Chip_IDs>3,2,1,0</Chip_IDs><Plane_Idz>0</Plane_Idz>"
    sc = convert({"extra": extra})
    (f,) = sc.doc["flow"]
    assert f["channels"] == [0, 1] and "chips" not in f  # all chips listed -> no pinning
    text = "\n".join(e.line() for e in sc.unmapped)
    assert "Plane_Idz = 0: unknown tag: MQSim silently ignores it" in text
    with pytest.raises(MqsimError, match=r"Channel_IDs.*0\.\.7"):
        convert({"extra": "<Channel_IDs>0,9</Channel_IDs>"})


def test_priorities_without_effect_are_listed(tmp_path):
    cfg = tmp_path / "ssd.xml"
    cfg.write_text(SSDCONFIG_TEXT.replace("PRIORITY_OUT_OF_ORDER", "OUT_OF_ORDER").replace("<Seed>321</Seed>", ""))
    sc = convert({"prio": "URGENT"}, {"prio": "LOW"}, ssdconfig=str(cfg))
    assert "arbitration" not in sc.doc["interface"] and all("priority" not in f for f in sc.doc["flow"])
    assert "Priority_Class = URGENT: no effect with Transaction_Scheduling_Policy OUT_OF_ORDER" in "\n".join(
        e.line() for e in sc.unmapped
    )


def test_flin_maps_to_ssdkits_flin(tmp_path):
    cfg = tmp_path / "ssd.xml"
    cfg.write_text(SSDCONFIG_TEXT.replace("PRIORITY_OUT_OF_ORDER", "FLIN").replace("<Seed>321</Seed>", ""))
    sc = convert({"prio": "URGENT"}, {"prio": "LOW"}, ssdconfig=str(cfg))
    assert sc.doc["tsu"]["policy"] == "flin"
    # The classes go to the die queues, as FLIN's second stage uses them; fetch stays round robin.
    assert [f["priority"] for f in sc.doc["flow"]] == ["urgent", "low"]
    assert "arbitration" not in sc.doc["interface"]
    lines = "\n".join(e.line() for e in sc.unmapped)
    assert 'Transaction_Scheduling_Policy = FLIN: converted to tsu.policy = "flin"' in lines
    assert resolved(sc.toml)["tsu"]["policy"]["type"] == "flin"


def test_suspension_keys_map_to_tsu(tmp_path):
    text = (
        SSDCONFIG_TEXT.replace("<CMD_Suspension_Support>ERASE<", "<CMD_Suspension_Support>PROGRAM_ERASE<")
        .replace("<Suspend_Program_Time>100000<", "<Suspend_Program_Time>20000<")
        .replace("<Preferred_suspend_write_time_for_read>100000<", "<Preferred_suspend_write_time_for_read>10000<")
    )
    assert text.count("PROGRAM_ERASE") == 1 and "20000" in text
    cfg = tmp_path / "ssd.xml"
    cfg.write_text(text)
    (dev,) = import_mqsim(str(cfg))
    t = dev.doc["tsu"]
    assert t["suspension"] == "program_erase" and t["max_suspensions"] == 255
    assert t["suspend_program_us"] == 20.0 and t["suspend_erase_us"] == 700.0
    # A threshold below the cost is raised to it, and listed.
    assert t["program_suspend_above_us"] == 20.0
    assert t["erase_suspend_above_us"] == 700.0 and t["writes_suspend_erase"] is True
    lines = "\n".join(e.line() for e in dev.unmapped)
    assert "Preferred_suspend_write_time_for_read = 10000: below the suspension cost (20.0 us)" in lines
    assert "CMD_Suspension_Support = PROGRAM_ERASE: stock MQSim never suspends" in lines
    got = resolved(dev.toml)
    assert got["tsu"]["suspension"] == "program_erase"
    # NONE: nothing of it in the file, and its times are listed as without effect.
    cfg.write_text(SSDCONFIG_TEXT.replace("<CMD_Suspension_Support>ERASE<", "<CMD_Suspension_Support>NONE<"))
    (dev,) = import_mqsim(str(cfg))
    assert dev.doc["tsu"] == {"policy": "priority_out_of_order"}  # the shipped file's policy
    assert "Suspend_Erase_Time = 700000: no effect with CMD_Suspension_Support NONE" in "\n".join(
        e.line() for e in dev.unmapped
    )


def test_absent_tags_take_mqsim_defaults(tmp_path):
    cfg = tmp_path / "min.xml"
    cfg.write_text("<Execution_Parameter_Set><Device_Parameter_Set/></Execution_Parameter_Set>")
    (dev,) = import_mqsim(str(cfg))
    assert dev.doc["flash"]["bus"]["rate_mts"] == 300.0  # built-in Channel_Transfer_Rate
    assert dev.doc["interface"]["io_queue_depth"] == 1024
    assert dev.doc["ftl"]["gc_preemptible"] is True and dev.doc["precondition"]["mode"] == "fast"
    text = "\n".join(e.line() for e in dev.unmapped)
    assert "PCIe_Lane_Bandwidth = 0.4 (tag absent: MQSim's built-in default): no PCIe generation" in text


def test_sata_device_maps_the_hba_processing_delay(tmp_path):
    # The shipped ssdconfig.xml with a SATA host interface: the NCQ depth is capped at 32, and
    # the HBA's SATA_Processing_Delay (400000 ns there) becomes interface.sata_processing_delay_us.
    text = pathlib.Path(SSDCONFIG).read_text().replace("<HostInterface_Type>NVME<", "<HostInterface_Type>SATA<")
    assert "<HostInterface_Type>SATA<" in text
    cfg = tmp_path / "sata.xml"
    cfg.write_text(text)
    (dev,) = import_mqsim(str(cfg))
    got = resolved(dev.toml)
    assert got["interface"]["type"] == "sata" and got["interface"]["ncq_depth"] == 32
    assert got["interface"]["sata_processing_delay_us"] == 400.0
    assert "SATA_Processing_Delay" not in "\n".join(e.line() for e in dev.unmapped)


def test_trace_lookup(tmp_path):
    # Default: beside workload.xml. With --trace-dir: there, or its basename there.
    (s,) = [x for x in import_mqsim(SSDCONFIG, WORKLOAD) if x.index == 3]
    assert s.doc["flow"][0]["trace"] == TRACE
    d = tmp_path / "t"
    d.mkdir()
    shutil.copy(TRACE, d / "tpcc-small.trace")
    s = import_mqsim(SSDCONFIG, WORKLOAD, trace_dir=str(d))[2]
    assert s.doc["flow"][0]["trace"] == str(d / "tpcc-small.trace")
    s = import_mqsim(SSDCONFIG, WORKLOAD, relative_to=str(tmp_path))[2]
    assert s.doc["flow"][0]["trace"] == os.path.relpath(TRACE, tmp_path)
    w = tmp_path / "workload.xml"
    shutil.copy(WORKLOAD, w)
    with pytest.raises(MqsimError, match=r"traces/tpcc-small.trace.*not found.*--trace-dir"):
        import_mqsim(SSDCONFIG, str(w))


def test_overrides_shape_the_device_before_ranges():
    (s,) = import_mqsim(SSDCONFIG, workload({}), overrides=["flash.blocks_per_plane=128", "flow.0.requests=5"])
    assert s.doc["flash"]["blocks_per_plane"] == 128 and s.doc["flow"][0]["requests"] == 5
    assert s.doc["flow"][0]["range_bytes"] == s.capacity_bytes // 512 * 512
    assert s.capacity_bytes < import_mqsim(SSDCONFIG)[0].capacity_bytes


def test_mqsim_to_toml_needs_a_scenario_when_there_are_several():
    with pytest.raises(MqsimError, match=r"3 scenarios.*--scenario 1\.\.3"):
        mqsim_to_toml(SSDCONFIG, WORKLOAD)
    doc = tomllib.loads(mqsim_to_toml(SSDCONFIG, WORKLOAD, scenario=2))
    assert len(doc["flow"]) == 2


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "which, text, fragments",
    [
        ("ssd", "<Execution_Parameter_Set><Host_Parameter_Set>", ["malformed XML", "line 1"]),
        ("ssd", "<Device_Parameter_Set/>", ["root element is <Device_Parameter_Set>", "<Execution_Parameter_Set>"]),
        (
            "ssd",
            (
                "<Execution_Parameter_Set><Device_Parameter_Set><Flash_Channel_Count>eight</Flash_Channel_Count>"
                "</Device_Parameter_Set></Execution_Parameter_Set>"
            ),
            ["<Execution_Parameter_Set/Device_Parameter_Set/Flash_Channel_Count>", "`eight`", "an integer >= 1"],
        ),
        (
            "ssd",
            (
                "<Execution_Parameter_Set><Device_Parameter_Set><Flash_Parameter_Set><Flash_Technology>QLC"
                "</Flash_Technology></Flash_Parameter_Set></Device_Parameter_Set></Execution_Parameter_Set>"
            ),
            ["Flash_Parameter_Set/Flash_Technology>", "`QLC`", "SLC, MLC, TLC"],
        ),
        (
            "ssd",
            (
                "<Execution_Parameter_Set><Device_Parameter_Set><Plane_Allocation_Scheme>CWDX"
                "</Plane_Allocation_Scheme></Device_Parameter_Set></Execution_Parameter_Set>"
            ),
            ["Plane_Allocation_Scheme", "permutation"],
        ),
        ("wl", "<IO_Scenarios/>", ["root element is <IO_Scenarios>", "<MQSim_IO_Scenarios>"]),
        (
            "wl",
            workload({"dist": "ZIPF"}),
            ["IO_Scenario[1]/IO_Flow_Parameter_Set_Synthetic[1]/Address_Distribution>", "STREAMING, RANDOM_UNIFORM"],
        ),
        ("wl", workload({"read": "lots"}), ["Read_Percentage>", "`lots`", "0..100"]),
        ("wl", workload({"gen": "BANDWIDTH"}), ["Bandwidth> is missing", "Intensity"]),
        ("wl", workload({"aligned": "yes"}), ["Generated_Aligned_Addresses>", "TRUE, FALSE"]),
        ("wl", workload({"total": 0}), ["never stop"]),
    ],
)
def test_bad_input_is_one_line(tmp_path, which, text, fragments):
    bad = tmp_path / ("ssd.xml" if which == "ssd" else "wl.xml")
    bad.write_text(text)
    args = [str(bad)] if which == "ssd" else [SSDCONFIG, str(bad)]
    line = one_error_line(cli("import", "mqsim", *args))
    assert str(bad) in line
    for f in fragments:
        assert f in line, line
    line = one_error_line(cli("run", "--mqsim", *args, *([WORKLOAD] if which == "ssd" else []), "--no-progress"))
    assert str(bad) in line


def test_missing_files_and_option_mixups(tmp_path):
    assert "no such file" in one_error_line(cli("import", "mqsim", str(tmp_path / "nope.xml")))
    assert "--mqsim" in one_error_line(cli("run", "mqsim-paper", "--scenario", "1"))
    assert "scenarios" in one_error_line(cli("run", "--mqsim", SSDCONFIG, WORKLOAD, "--no-progress"))
    assert "workload.xml" in one_error_line(cli("run", "--mqsim", SSDCONFIG, "--no-progress"))
    assert "scenarios" in one_error_line(cli("import", "mqsim", SSDCONFIG, WORKLOAD))


# --- CLI ----------------------------------------------------------------------------------------


def test_import_cli_writes_one_file_per_scenario(tmp_path):
    out = tmp_path / "mq.toml"
    p = cli("import", "mqsim", SSDCONFIG, WORKLOAD, "-o", str(out))
    assert p.returncode == 0, p.stderr
    names = sorted(os.listdir(tmp_path))
    assert names == ["mq_scenario_1.toml", "mq_scenario_2.toml", "mq_scenario_3.toml"]
    assert p.stderr.startswith("ssdkit: warning: ") and "unmapped: " in p.stderr and "approximated: " in p.stderr
    assert p.stderr.count("Device_Parameter_Set/Seed = 321") == 1  # one block, no repeats
    t3 = tomllib.loads((tmp_path / "mq_scenario_3.toml").read_text())
    assert t3["flow"][0]["trace"] == os.path.relpath(TRACE, tmp_path)
    p = cli("import", "mqsim", SSDCONFIG, WORKLOAD, "--scenario", "2")
    assert p.returncode == 0 and tomllib.loads(p.stdout)["tsu"]["policy"] == "priority_out_of_order"
    assert p.stdout.startswith("# Converted by ssdkit from MQSim's")


# --- runs ---------------------------------------------------------------------------------------

CAPS = {
    1: ["flow.0.duration_ms=0", "flow.0.requests=400", "flow.1.duration_ms=0", "flow.1.requests=200"],
    2: ["flow.0.duration_ms=0", "flow.0.requests=400", "flow.1.duration_ms=0", "flow.1.requests=400"],
    3: ["flow.0.requests=300"],
}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_shipped_scenario_runs(k):
    sets = [a for kv in SMALL + CAPS[k] for a in ("--set", kv)]
    p = cli("run", "--mqsim", SSDCONFIG, WORKLOAD, "--scenario", str(k), *sets, "--json", "--no-progress")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    want = {1: [400, 200], 2: [400, 400], 3: [300]}[k]
    assert [f["completed"] for f in doc["flows"]] == want
    assert "ssdkit: warning:" in p.stderr


def test_imported_file_runs_and_equals_run_mqsim(tmp_path):
    out = tmp_path / "s1.toml"
    p = cli(
        "import",
        "mqsim",
        SSDCONFIG,
        WORKLOAD,
        "--scenario",
        "1",
        "-o",
        str(out),
        *[a for kv in SMALL for a in ("--set", kv)],
    )
    assert p.returncode == 0, p.stderr
    sets = [a for kv in CAPS[1] for a in ("--set", kv)]
    a = cli("run", str(out), *sets, "--json", "--no-progress")
    b = cli(
        "run", "--mqsim", SSDCONFIG, WORKLOAD, "--scenario", "1", "--set", SMALL[0], *sets, "--json", "--no-progress"
    )
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    for d in (ja, jb):
        for k in ("wall_time_s", "events_per_wall_s", "requests_per_wall_s"):
            d.pop(k, None)
        d["device"]["precondition"].pop("wall_time_s", None)
    assert ja == jb


def test_mqsim_device_with_fio_flows(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nioengine=libaio\nrw=randread\niodepth=8\nnumber_ios=500\n")
    p = cli("run", "--mqsim", SSDCONFIG, "--fio", str(job), "--set", SMALL[0], "--json", "--no-progress")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["flows"][0]["completed"] == 500 and doc["config"]["ftl"]["gc_policy"] == {"type": "d_choices", "d": 11}


def test_validate_names_the_mqsim_element(tmp_path):
    cfg = tmp_path / "ssd.xml"
    cfg.write_text(SSDCONFIG_TEXT.replace("<Flash_Channel_Count>8<", "<Flash_Channel_Count>999<"))
    with pytest.raises(MqsimError, match=r"flash.channels.*Flash_Channel_Count> = 999"):
        import_mqsim(str(cfg))
    line = one_error_line(cli("import", "mqsim", str(cfg)))
    assert "(converted from <Execution_Parameter_Set/Device_Parameter_Set/Flash_Channel_Count> = 999)" in line
    (dev,) = import_mqsim(SSDCONFIG)
    dev.doc["flash"]["page_size_bytes"] = 3000
    with pytest.raises(MqsimError, match=r"page_size_bytes.*Page_Capacity> = 8192"):
        mqsim.validate(dev)


@pytest.mark.parametrize(
    "text, where",
    [
        ("<Execution_Parameter_Set><Host_Parameter_Set>", (1, 46, "<Execution_Parameter_Set/Host_Parameter_Set>")),
        (
            "<Execution_Parameter_Set>\n  <Device_Parameter_Set>\n    <Seed>1</Sed>\n",
            (3, 14, "<Execution_Parameter_Set/Device_Parameter_Set/Seed>"),
        ),
        ("<Execution_Parameter_Set>\n<A x=1/></Execution_Parameter_Set>", (2, 6, "<Execution_Parameter_Set>")),
        ("not xml at all", (1, 1, "before the root element")),
        ("", (1, 1, "before the root element")),
    ],
)
def test_malformed_xml_names_file_line_column_and_element(tmp_path, text, where):
    line, col, path = where
    bad = tmp_path / "ssd.xml"
    bad.write_text(text)
    with pytest.raises(MqsimError) as e:
        import_mqsim(str(bad))
    msg = str(e.value)
    assert msg.startswith(f"{bad}:{line}:{col}: malformed XML"), msg
    assert path in msg
    assert path in one_error_line(cli("import", "mqsim", str(bad)))


def test_malformed_xml_deep_in_a_large_file_names_its_element(tmp_path):
    # Past the parser's first chunk, so the open-element path is tracked across chunks.
    broken = SSDCONFIG_TEXT.replace("<Page_Capacity>8192</Page_Capacity>", "<Page_Capacity>8192</Page_Capacit>")
    bad = tmp_path / "ssd.xml"
    head, rest = broken.split("\n", 1)  # the XML declaration stays first
    bad.write_text(head + "\n<!--" + "x" * 10000 + "-->\n" + rest)
    with pytest.raises(
        MqsimError,
        match=r"inside <Execution_Parameter_Set/Device_Parameter_Set/Flash_Parameter_Set/"
        r"Page_Capacity>: mismatched tag",
    ):
        import_mqsim(str(bad))


@pytest.mark.parametrize("ratio", ["0.005", "0", "0.95", "1.5", "-0.1", "nan"])
def test_overprovisioning_ratio_outside_the_spare_factor_range_is_an_error(tmp_path, ratio):
    cfg = tmp_path / "ssd.xml"
    text = SSDCONFIG_TEXT.replace("<Overprovisioning_Ratio>0.07<", f"<Overprovisioning_Ratio>{ratio}<")
    assert text != SSDCONFIG_TEXT
    cfg.write_text(text)
    with pytest.raises(MqsimError) as e:
        import_mqsim(str(cfg))
    msg = str(e.value)
    assert str(cfg) in msg and "<Execution_Parameter_Set/Device_Parameter_Set/Overprovisioning_Ratio>" in msg
    assert f"`{ratio}`" in msg and "0.01..0.9" in msg and "spare_factor" in msg
    out = tmp_path / "out.toml"
    line = one_error_line(cli("import", "mqsim", str(cfg), "-o", str(out)))
    assert "Overprovisioning_Ratio" in line and "0.01..0.9" in line
    assert not out.exists()


@pytest.mark.parametrize("ratio", ["0.9", "0.3", "0.1"])
def test_overprovisioning_ratio_at_the_ends_of_the_range_converts(tmp_path, ratio):
    cfg = tmp_path / "ssd.xml"
    cfg.write_text(SSDCONFIG_TEXT.replace("<Overprovisioning_Ratio>0.07<", f"<Overprovisioning_Ratio>{ratio}<"))
    (dev,) = import_mqsim(str(cfg))  # full size: 1 % of 128 blocks would not cover the GC reserve
    assert dev.doc["ftl"]["spare_factor"] == float(ratio)
    assert not any("Overprovisioning_Ratio" in e.path for e in dev.unmapped)


def _preconditioned_config() -> str:
    text = SSDCONFIG_TEXT.replace(
        "<Enabled_Preconditioning>false</Enabled_Preconditioning>",
        "<Enabled_Preconditioning>true</Enabled_Preconditioning>",
    )
    assert text != SSDCONFIG_TEXT
    return text


def test_occupancy_is_mapped_when_mqsim_preconditions():
    """With preconditioning on, the flows' Initial_Occupancy_Percentage becomes
    precondition.occupancy (the shipped scenario 1 has two synthetic flows at 75 %), and
    Enabled_Preconditioning is listed as approximated (a mean-field state, not MQSim's)."""
    sc = import_mqsim(_preconditioned_config(), WORKLOAD)[0]
    assert sc.doc["precondition"] == {"mode": "fast", "occupancy": 0.75}
    assert sc.doc["ftl"]["unmapped_reads"] == "read_flash"
    (e,) = [e for e in sc.unmapped if e.path.endswith("Enabled_Preconditioning")]
    assert e.cause == "approximated"
    assert not [e for e in sc.unmapped if "Initial_Occupancy_Percentage" in e.path]
    assert "<" in sc.sources["precondition.occupancy"]
    mqsim.validate(sc)


def test_zero_occupancy_starts_the_device_empty():
    """MQSim takes Initial_Occupancy_Percentage 0 (its range is 0-100) and preconditions
    nothing: the device starts empty, not refused."""
    text = _preconditioned_config()
    wl = pathlib.Path(WORKLOAD).read_text()
    zero, n = re.subn(
        r"<Initial_Occupancy_Percentage>\d+</Initial_Occupancy_Percentage>",
        "<Initial_Occupancy_Percentage>0</Initial_Occupancy_Percentage>",
        wl,
    )
    assert n >= 2
    sc = import_mqsim(text, zero, trace_dir=pathlib.Path(WORKLOAD).parent)[0]
    assert sc.doc["precondition"] == {"mode": "empty"}
    assert "Initial_Occupancy_Percentage" in sc.sources["precondition.mode"]
    mqsim.validate(sc)


def test_mqsim_compat_turns_on_each_listed_behaviour_and_overrides_win(tmp_path):
    plain = import_mqsim(SSDCONFIG, WORKLOAD)[0]
    compat = import_mqsim(SSDCONFIG, WORKLOAD, mqsim_compat=True)[0]

    def table(doc, key):
        *path, name = key.split(".")
        for part in path:
            doc = doc[part]
        return doc, name

    assert plain.doc["ftl"]["cmt"]["mode"] == "shared", "the shipped file caches the map"
    for key, value, _why in mqsim.MQSIM_COMPAT:
        t, name = table(compat.doc, key)
        assert t[name] == value, key
        t, name = table(plain.doc, key)
        assert t.get(name) != value, key
        assert f"{key} = {str(value).lower()}" in compat.toml
    # Everything else is the same import, but for the suspension times and thresholds, which
    # go with suspension. (A plain import sets some of the keys to ssdkit's own values, e.g.
    # the firmware times.)
    for key, _v, _w in mqsim.MQSIM_COMPAT:
        t, name = table(compat.doc, key)
        del t[name]
        if key.startswith("ftl.firmware_"):
            t, name = table(plain.doc, key)
            assert t.pop(name) > 0, key
    assert compat.doc["tsu"] == {"policy": plain.doc["tsu"]["policy"]}
    assert plain.doc["tsu"]["suspension"] == "erase" and plain.doc["tsu"]["max_suspensions"] == 255
    del compat.doc["tsu"], plain.doc["tsu"]
    assert compat.doc == plain.doc
    # --set switches one back off.
    again = import_mqsim(SSDCONFIG, WORKLOAD, mqsim_compat=True, overrides=["flash.die_interleaving=true"])[0]
    assert again.doc["flash"]["die_interleaving"] is True
    # The CLI lists each behaviour on stderr, and refuses the flag without --mqsim.
    r = cli("import", "mqsim", SSDCONFIG, WORKLOAD, "--scenario", "1", "--mqsim-compat")
    assert r.returncode == 0, r.stderr
    for key, _v, _w in mqsim.MQSIM_COMPAT:
        assert key in r.stderr
    assert "die_interleaving = false" in r.stdout
    r = cli("run", "mqsim-paper", "--mqsim-compat")
    assert r.returncode != 0 and "--mqsim-compat goes with --mqsim" in r.stderr
    # An ideal mapping table has no cache: the cache's behaviours are left out, and the
    # configuration stays valid.
    ideal = tmp_path / "ideal.xml"
    ideal.write_text(
        pathlib.Path(SSDCONFIG).read_text().replace("<Ideal_Mapping_Table>false<", "<Ideal_Mapping_Table>true<")
    )
    sc = import_mqsim(str(ideal), WORKLOAD, mqsim_compat=True)[0]
    assert sc.doc["ftl"].get("cmt", {}).get("mode", "ideal") == "ideal"
    assert "granularity" not in sc.doc["ftl"].get("cmt", {})
    assert sc.doc["flash"]["die_interleaving"] is False
    mqsim.validate(sc)
    # Without a write cache MQSim's write-back has nothing to do: left out, still valid.
    off = tmp_path / "off.xml"
    wl = pathlib.Path(WORKLOAD).read_text()
    off.write_text(
        wl.replace("<Device_Level_Data_Caching_Mode>WRITE_CACHE<", "<Device_Level_Data_Caching_Mode>TURNED_OFF<")
    )
    assert "WRITE_CACHE" in wl
    sc = import_mqsim(str(ideal), str(off), trace_dir=pathlib.Path(WORKLOAD).parent, mqsim_compat=True)[0]
    assert sc.doc["cache"]["mode"] == "off" and "write_back" not in sc.doc["cache"]
    mqsim.validate(sc)
    # An override that removes what a behaviour acts on leaves the behaviour out (unless it
    # names the behaviour's key itself, which is then checked as any key).
    sc = import_mqsim(SSDCONFIG, WORKLOAD, mqsim_compat=True, overrides=["cache.mode=off", "flash.multiplane=false"])[0]
    assert "write_back" not in sc.doc["cache"] and "write_offsets" not in sc.doc["tsu"]
    mqsim.validate(sc)
    with pytest.raises(MqsimError, match="tsu.write_offsets"):
        import_mqsim(
            SSDCONFIG, WORKLOAD, mqsim_compat=True, overrides=["flash.multiplane=false", "tsu.write_offsets=at_queue"]
        )
    # Suspension turned back on: the data-first channel order, which does not go with it, is
    # left out; named too, the pair is refused with both keys.
    back = ["tsu.suspension=erase", "flash.die_interleaving=true"]
    sc = import_mqsim(SSDCONFIG, WORKLOAD, mqsim_compat=True, overrides=back)[0]
    assert "arbitration" not in sc.doc["flash"].get("bus", {})
    mqsim.validate(sc)
    with pytest.raises(MqsimError, match="data_first"):
        import_mqsim(
            SSDCONFIG,
            WORKLOAD,
            mqsim_compat=True,
            overrides=[*back, "flash.bus.arbitration=data_first"],
        )
    # One plane per die has no multi-plane program for MQSim's page offsets to pair into.
    one = tmp_path / "one-plane.xml"
    one.write_text(re.sub(r"<Plane_No_Per_Die>\d+<", "<Plane_No_Per_Die>1<", pathlib.Path(SSDCONFIG).read_text()))
    one_wl = tmp_path / "one-plane-workload.xml"
    one_wl.write_text(wl.replace("<Plane_IDs>0,1<", "<Plane_IDs>0<"))
    sc = import_mqsim(str(one), str(one_wl), trace_dir=pathlib.Path(WORKLOAD).parent, mqsim_compat=True)[0]
    assert sc.doc["flash"]["planes_per_die"] == 1 and "write_offsets" not in sc.doc["tsu"]
    mqsim.validate(sc)


def test_caching_mode_is_the_flows_and_off_drops_the_cache_keys(tmp_path):
    sc = convert({}, {})
    assert sc.doc["cache"]["mode"] == "off"
    assert "capacity_bytes" not in sc.doc["cache"] and "sharing" not in sc.doc["cache"]
    path = tmp_path / "off.toml"
    path.write_text(sc.toml)
    ssdkit.resolve_config(str(path))  # the cache's own keys would be refused with it off
    sc = convert({"caching": "WRITE_READ_CACHE"}, {"caching": "WRITE_READ_CACHE"})
    assert sc.doc["cache"]["mode"] == "read_write"
    assert not [e for e in sc.unmapped if "Device_Level_Data_Caching_Mode" in e.path]
    # Flows that differ: one mode for the device, the first flow's, listed.
    sc = convert({"caching": "WRITE_CACHE"}, {"caching": "READ_CACHE"})
    assert sc.doc["cache"]["mode"] == "write"
    (e,) = [e for e in sc.unmapped if "Device_Level_Data_Caching_Mode" in e.path]
    assert e.kind == "approximated" and "write, read" in e.reason, e.line()


def test_compat_firmware_takes_no_time():
    """MQSim splits, translates and queues a request the instant its command arrives
    (Host_Interface_NVMe.cpp:69-82, Data_Cache_Manager_Flash_Advanced.cpp:187-197): under
    --mqsim-compat each QD1 read completes exactly the firmware times of a plain import
    sooner (1 µs a request, 0.25 µs its one page), every request alike."""
    sc = import_mqsim(SSDCONFIG, mqsim_compat=True)[0]
    assert sc.doc["ftl"]["firmware_request_us"] == 0 and sc.doc["ftl"]["firmware_transaction_us"] == 0
    flows = (
        '\n[[flow]]\npattern = "random"\nread_fraction = 1.0\nrequest_bytes = 4096\nqueue_depth = 1\nrequests = 300\n'
    )
    text = sc.toml + flows
    logs = [
        ssdkit.run(text, overrides=[*SMALL, *ov], request_log=True).request_log
        for ov in ([], ["ftl.firmware_request_us=1.0", "ftl.firmware_transaction_us=0.25"])
    ]
    zero, plain = (log.sort_index() for log in logs)
    assert list(zero["offset_bytes"]) == list(plain["offset_bytes"])
    assert set(plain["latency_ns"] - zero["latency_ns"]) == {1250}


def _tree(el):
    """(tag, text, children) of an element, ElementTree's or the converter's."""
    return (el.tag, el.text, [_tree(c) for c in el])


@pytest.mark.parametrize(
    "text",
    [
        SSDCONFIG_TEXT,
        "workload",
        "<A>1<!-- a comment -->2<B>x&amp;y</B>tail<C/><D> <![CDATA[<7>]]> </D>after</A>",
        "<?xml version='1.0' encoding='ISO-8859-1'?><A><B>caf\xe9</B><?pi data?><C>&#65;&lt;</C></A>",
        "<A>\n  <B>\n    <C>3</C>\n  </B>\n  <B/>\n</A>",
        '<A xmlns="urn:a" xmlns:p="urn:p"><p:B>1</p:B><C xmlns="">2</C></A>',
    ],
)
def test_the_xml_reader_gives_elementtrees_tags_and_texts(text):
    """The converter reads XML with expat alone (ElementTree's import was a tenth of a run's
    start-up); every tag and text it sees is ElementTree's (comments, processing instructions
    and tails dropped, entities and CDATA resolved, texts split by a comment joined)."""
    import xml.etree.ElementTree as ET

    from ssdkit.mqsim import _parse_xml

    if text == "workload":
        with open(WORKLOAD, encoding="utf-8") as f:
            text = f.read()
    data = text.encode("latin-1") if "ISO-8859-1" in text else text.encode("utf-8")
    assert _tree(_parse_xml(data, "x.xml")) == _tree(ET.fromstring(data))


@pytest.mark.parametrize(
    "text",
    [
        # An entity an external DTD would declare: expat leaves it unexpanded.
        '<!DOCTYPE A SYSTEM "a.dtd"><A>\n<B>1&e;</B></A>',
        "<A><p:B>1</p:B></A>",  # an unbound namespace prefix
        "<A><B>1</C></A>",
        "<A>&undefined;</A>",
    ],
)
def test_the_xml_reader_refuses_what_elementtree_refuses_at_its_position(text):
    """Where ElementTree stops with an error, so does the converter, at the same line and
    column, naming ElementTree's reason (a value is never read with an entity left out)."""
    import xml.etree.ElementTree as ET

    from ssdkit.mqsim import _parse_xml

    p = ET.XMLPullParser(events=("start", "end"))
    with pytest.raises(ET.ParseError) as want:
        p.feed(text.encode())
        list(p.read_events())  # where the pull parser raises the error it met in `feed`
        p.close()
    line, col = want.value.position
    reason = str(want.value).split(":")[0]
    with pytest.raises(MqsimError) as got:
        _parse_xml(text.encode(), "x.xml")
    assert str(got.value).startswith(f"x.xml:{line}:{col + 1}: malformed XML at line {line}, column {col + 1}")
    assert str(got.value).endswith(f": {reason}")
