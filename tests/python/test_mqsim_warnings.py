"""The MQSim importer's list of what it cannot reproduce, grouped by cause with the causes that
change results first (ssdkit.mqsim.CAUSES): in MqsimScenario.unmapped, in the converted TOML's
header and in the CLI's warning block. Inputs: MQSim's default ssdconfig.xml / workload.xml in
tests/data/mqsim, and variants of them written to tmp_path."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ssdkit.mqsim import CAUSES, group_by_cause, import_mqsim, warning_lines

DATA = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "data", "mqsim"))
SSDCONFIG = os.path.join(DATA, "ssdconfig.xml")
WORKLOAD = os.path.join(DATA, "workload.xml")
RANK = {c: i for i, c in enumerate(CAUSES)}
ENTRY_PREFIXES = ("unmapped: ", "approximated: ")


def test_causes_that_change_results_come_first():
    assert list(CAUSES) == ["not_modelled", "value_changed", "approximated", "random_seed", "output_only", "no_effect"]
    for cause in ("not_modelled", "value_changed", "approximated"):
        assert "results can differ" in CAUSES[cause]
    for cause in ("random_seed", "output_only", "no_effect"):
        assert "results can differ" not in CAUSES[cause]


@pytest.mark.parametrize(
    "path_end, cause",
    [
        ("Device_Parameter_Set/CMT_Capacity", "approximated"),  # whole translation pages
        ("Flash_Parameter_Set/CMD_Suspension_Support", "approximated"),  # stock MQSim never suspends
        ("Flash_Parameter_Set/Block_PE_Cycles_Limit", "not_modelled"),
        # The shipped ssdconfig.xml disables preconditioning, and MQSim uses the occupancy only
        # to precondition.
        ("IO_Flow_Parameter_Set_Synthetic[1]/Initial_Occupancy_Percentage", "no_effect"),
        ("Host_Parameter_Set/PCIe_Lane_Bandwidth", "approximated"),
        ("Device_Parameter_Set/Seed", "random_seed"),
        ("IO_Flow_Parameter_Set_Synthetic[1]/Seed", "random_seed"),
        ("Host_Parameter_Set/Enable_ResponseTime_Logging", "output_only"),
        ("Device_Parameter_Set/Static_Wearleveling_Enabled", "no_effect"),
        ("Device_Parameter_Set/Preferred_suspend_erase_time_for_read", "no_effect"),  # misspelled: MQSim ignores it
        ("Flash_Parameter_Set/Page_Read_Latency_CSB", "no_effect"),  # MLC
        ("Host_Parameter_Set/SATA_Processing_Delay", "no_effect"),  # NVMe device
        ("IO_Flow_Parameter_Set_Synthetic[1]/Intensity", "no_effect"),  # not read by MQSim
    ],
)
def test_default_files_classify_each_parameter(path_end, cause):
    sc = import_mqsim(SSDCONFIG, WORKLOAD)[0]
    (e,) = [e for e in sc.unmapped if e.path.endswith(path_end)]
    assert e.cause == cause, e.line()


def test_every_scenario_lists_most_consequential_first():
    for sc in import_mqsim(SSDCONFIG, WORKLOAD):
        ranks = [RANK[e.cause] for e in sc.unmapped]
        assert ranks == sorted(ranks), sc.index
        # The default files have something of each cause but "value ssdkit cannot take".
        assert {e.cause for e in sc.unmapped} == set(CAUSES) - {"value_changed"}


def test_warning_lines_group_by_cause():
    sc = import_mqsim(SSDCONFIG, WORKLOAD)[0]
    lines = warning_lines(sc.unmapped)
    headings = [ln for ln in lines if not ln.startswith("  ")]
    causes = [c for c, _ in group_by_cause(sc.unmapped)]
    assert headings == [f"{CAUSES[c]}: {len(es)}" for c, es in group_by_cause(sc.unmapped)]
    assert [RANK[c] for c in causes] == sorted(RANK[c] for c in causes)
    assert causes[0] == "not_modelled" and causes[-1] == "no_effect"
    # Each entry once, under the heading of its cause, indented.
    by_line = {e.line(): e for e in sc.unmapped}
    assert len(lines) == len(headings) + len(by_line)
    current = None
    for ln in lines:
        if not ln.startswith("  "):
            current = next(c for c in CAUSES if ln.startswith(CAUSES[c]))
            continue
        assert ln.startswith("  ") and ln.strip().startswith(ENTRY_PREFIXES)
        assert by_line[ln.strip()].cause == current, ln


def test_repeated_lines_are_listed_once():
    scs = import_mqsim(SSDCONFIG, WORKLOAD)
    everything = [e for sc in scs for e in sc.unmapped]  # the device's parameters, three times
    lines = [ln.strip() for ln in warning_lines(everything) if ln.startswith("  ")]
    assert len(lines) == len(set(lines)) == len({e.line() for e in everything})
    assert sum(1 for ln in lines if "Device_Parameter_Set/Seed = 321" in ln) == 1


def test_values_ssdkit_cannot_take_come_right_after_what_it_does_not_model(tmp_path):
    text = Path(SSDCONFIG).read_text(encoding="utf-8")
    for tag, old, new in [("PCIe_Lane_Count", "4", "3"), ("Flash_Channel_Width", "1", "4")]:
        before = f"<{tag}>{old}</{tag}>"
        assert before in text, before
        text = text.replace(before, f"<{tag}>{new}</{tag}>")
    cfg = tmp_path / "ssdconfig.xml"
    cfg.write_text(text, encoding="utf-8")
    (sc,) = import_mqsim(str(cfg))
    groups = dict(group_by_cause(sc.unmapped))
    assert [e.path.rsplit("/", 1)[1] for e in groups["value_changed"]] == ["PCIe_Lane_Count", "Flash_Channel_Width"]
    causes = [c for c, _ in group_by_cause(sc.unmapped)]
    assert causes[:3] == ["not_modelled", "value_changed", "approximated"]


def test_toml_header_is_grouped():
    for sc in import_mqsim(SSDCONFIG, WORKLOAD):
        header = sc.toml.split("\n\n", 1)[0].splitlines()
        intro = [i for i, ln in enumerate(header) if "not reproduced exactly; by cause, most consequential first" in ln]
        assert len(intro) == 1
        n = len({e.line() for e in sc.unmapped})
        assert (
            header[intro[0]]
            == f"# {n} MQSim parameters are not reproduced exactly; by cause, most consequential first:"
        )
        assert header[intro[0] + 1 :] == [f"# {ln}" for ln in warning_lines(sc.unmapped)]


def _cli_stderr() -> str:
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "import", "mqsim", SSDCONFIG, WORKLOAD, "--scenario", "1"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("ssdkit: warning: ")
    return p.stderr


def test_cli_warning_lists_most_consequential_first():
    sc = import_mqsim(SSDCONFIG, WORKLOAD)[0]
    entries = [ln.strip() for ln in _cli_stderr().splitlines()[1:] if ln.strip().startswith(ENTRY_PREFIXES)]
    assert entries == [e.line() for _, es in group_by_cause(sc.unmapped) for e in es]


def test_cli_warning_has_a_heading_per_cause():
    sc = import_mqsim(SSDCONFIG, WORKLOAD)[0]
    body = _cli_stderr().splitlines()[1:]
    assert body == [f"  {ln}" for ln in warning_lines(sc.unmapped)]
