#!/usr/bin/env python3
"""Runs MQSim and ssdkit side by side on MQSim's own input files and prints what each reports.

    python scripts/mqsim_compare.py --mqsim /path/to/MQSim -o compare.json
    python scripts/mqsim_compare.py --mqsim ~/MQSim/MQSim --workloads rr-4k-qd1,rw-4k-qd32 --repeat 3

MQSim is CMU-SAFARI/MQSim, built with its Makefile (`make` in its folder gives ./MQSim). Each
workload is a one-flow variant of MQSim's workload.xml (or the shipped file's trace scenario),
run on a device file (default: MQSim's shipped ssdconfig.xml, as in tests/data/mqsim/) and, with
`--ideal`, on the same device with an ideal mapping table and the data cache off. For every run
the script records the whole process's wall time (start to exit, output written) and peak
memory, and from each simulator's output the mean device response time, IOPS, and flash reads,
programs, mapping reads and mapping programs per host request. The three simulators (MQSim,
`ssdkit run --mqsim`, the same with `--mqsim-compat`) run one after the other, alternating, for
`--repeat` rounds; the table gives medians. CI does not run this script: it needs MQSim.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "tests" / "data" / "mqsim"

# name -> (read %, request sectors, QD, requests, address distribution); 512-byte sectors.
SYNTHETIC = {
    "rr-4k-qd1": (100, 8, 1, 100_000, "RANDOM_UNIFORM"),
    "rr-4k-qd32": (100, 8, 32, 1_000_000, "RANDOM_UNIFORM"),
    "rw-4k-qd32": (0, 8, 32, 1_000_000, "RANDOM_UNIFORM"),
    "mix-70r-4k-qd16": (70, 8, 16, 1_000_000, "RANDOM_UNIFORM"),
    "sr-128k-qd32": (100, 256, 32, 100_000, "STREAMING"),
}
TRACE = "tpcc"

FLOW = """<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
	<IO_Scenario>
		<IO_Flow_Parameter_Set_Synthetic>
			<Priority_Class>HIGH</Priority_Class>
			<Device_Level_Data_Caching_Mode>{caching}</Device_Level_Data_Caching_Mode>
			<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs>
			<Chip_IDs>0,1,2,3</Chip_IDs>
			<Die_IDs>0,1</Die_IDs>
			<Plane_IDs>0,1</Plane_IDs>
			<Initial_Occupancy_Percentage>{occupancy}</Initial_Occupancy_Percentage>
			<Working_Set_Percentage>100</Working_Set_Percentage>
			<Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type>
			<Read_Percentage>{read}</Read_Percentage>
			<Address_Distribution>{dist}</Address_Distribution>
			<Percentage_of_Hot_Region>0</Percentage_of_Hot_Region>
			<Generated_Aligned_Addresses>true</Generated_Aligned_Addresses>
			<Address_Alignment_Unit>{size}</Address_Alignment_Unit>
			<Request_Size_Distribution>FIXED</Request_Size_Distribution>
			<Average_Request_Size>{size}</Average_Request_Size>
			<Variance_Request_Size>0</Variance_Request_Size>
			<Seed>12344</Seed>
			<Average_No_of_Reqs_in_Queue>{qd}</Average_No_of_Reqs_in_Queue>
			<Intensity>32768</Intensity>
			<Stop_Time>0</Stop_Time>
			<Total_Requests_To_Generate>{requests}</Total_Requests_To_Generate>
		</IO_Flow_Parameter_Set_Synthetic>
	</IO_Scenario>
</MQSim_IO_Scenarios>
"""


def _set_tag(xml: str, tag: str, value: str) -> str:
    new, n = re.subn(rf"<{tag}>[^<]*</{tag}>", f"<{tag}>{value}</{tag}>", xml)
    if n == 0:
        raise SystemExit(f"the device file has no <{tag}>")
    return new


def _inputs(folder: Path, ssdconfig: Path, name: str, ideal: bool, scale: float) -> tuple[Path, Path, int]:
    """Writes the device and workload files of one comparison; returns them and the scenario."""
    dev = ssdconfig.read_text()
    if ideal:
        dev = _set_tag(dev, "Ideal_Mapping_Table", "true")
    tag = f"{name}{'-ideal' if ideal else ''}"
    dev_path = folder / f"ssdconfig-{tag}.xml"
    dev_path.write_text(dev)
    if name == TRACE:
        src = (SHIPPED / "workload.xml").read_text()
        if ideal:
            src = src.replace(
                "<Device_Level_Data_Caching_Mode>WRITE_CACHE<", "<Device_Level_Data_Caching_Mode>TURNED_OFF<"
            )
        wl_path = folder / f"workload-{tag}.xml"
        wl_path.write_text(src)
        shutil.copytree(SHIPPED / "traces", folder / "traces", dirs_exist_ok=True)
        return dev_path, wl_path, 3
    read, size, qd, requests, dist = SYNTHETIC[name]
    caching = "TURNED_OFF" if ideal else "WRITE_CACHE"
    text = FLOW.format(
        caching=caching, occupancy=1, read=read, dist=dist, size=size, qd=qd, requests=max(1, int(requests * scale))
    )
    wl_path = folder / f"workload-{tag}.xml"
    wl_path.write_text(text)
    return dev_path, wl_path, 1


def _timed(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    """Runs ``cmd``; returns its wall seconds, peak RSS in bytes and its output."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with status {code}:\n{text[-2000:]}")
    return wall, usage.ru_maxrss * 1024, text


def _mqsim(binary: str, dev: Path, wl: Path, scenario: int) -> dict:
    wall, rss, _ = _timed([binary, "-i", dev.name, "-w", wl.name], dev.parent)
    res = ET.parse(wl.with_name(f"{wl.stem}_scenario_{scenario}.xml")).getroot()
    flows = res.findall("Host/Host.IO_Flow")
    requests = sum(int(f.findtext("Request_Count")) for f in flows)
    ftl = res.find("SSDDevice/SSDDevice.FTL").attrib
    # MQSim counts commands (NVM_PHY_ONFI_NVDDR2.cpp:183-190, 214-222): a multi-plane command
    # reads or programs one page in each plane it names. With two planes per die that is two
    # pages; with more, up to the planes per die (taken here, an upper bound).
    planes = int(dev.read_text().split("<Plane_No_Per_Die>")[1].split("<")[0])
    reads = int(ftl["Issued_Flash_Read_CMD"]) + planes * int(ftl["Issued_Flash_Multiplane_Read_CMD"])
    programs = int(ftl["Issued_Flash_Program_CMD"]) + planes * int(ftl["Issued_Flash_Multiplane_Program_CMD"])
    mreads, mprogs = int(ftl["Issued_Flash_Read_CMD_For_Mapping"]), int(ftl["Issued_Flash_Program_CMD_For_Mapping"])
    return {
        "wall_s": wall,
        "peak_rss_mb": rss / 1e6,
        "requests": requests,
        # MQSim writes the mean in whole microseconds.
        "mean_latency_us": sum(
            float(f.findtext("Device_Response_Time")) * int(f.findtext("Request_Count")) for f in flows
        )
        / requests,
        # MQSim's IOPS is requests over whole simulated seconds: an integer division of its
        # clock (IO_Flow_Base.cpp:545-546), so a run of 1.9 s counts as 1 s.
        "iops": sum(float(f.findtext("IOPS")) for f in flows),
        "iops_whole_seconds": sum(float(f.findtext("IOPS")) for f in flows),
        "flash_reads_per_request": reads / requests,
        "flash_programs_per_request": programs / requests,
        "mapping_reads_per_request": mreads / requests,
        "mapping_programs_per_request": mprogs / requests,
    }


def _ssdkit(binary: list[str], dev: Path, wl: Path, scenario: int, compat: bool) -> dict:
    out = dev.parent / f"ssdkit-{wl.stem}{'-compat' if compat else ''}.json"
    cmd = [*binary, "run", "--mqsim", dev.name, wl.name, "--scenario", str(scenario), "--no-progress", "-o", out.name]
    if compat:
        cmd.append("--mqsim-compat")
    wall, rss, _ = _timed(cmd, dev.parent)
    r = json.loads(out.read_text())
    d = r["device"]
    requests = d["stats"]["all"]["count"]
    cmt = d.get("cmt") or {}
    mreads = cmt.get("lookup_reads", 0) + cmt.get("writeback_reads", 0)
    return {
        "wall_s": wall,
        "loop_wall_s": r["wall_time_s"],
        "peak_rss_mb": rss / 1e6,
        "requests": requests,
        "mean_latency_us": d["stats"]["all"]["latency_us"]["mean"],
        "iops": d["stats"]["all"]["iops"],
        # ssdkit's figure counted as MQSim counts its own (see _mqsim).
        "iops_whole_seconds": requests / int(r["simulated_time_s"]) if r["simulated_time_s"] >= 1 else float("nan"),
        "flash_reads_per_request": d["flash"]["page_reads"] / requests,
        "flash_programs_per_request": d["flash"]["page_programs"] / requests,
        "mapping_reads_per_request": mreads / requests,
        # Write-backs made, as MQSim counts its mapping writes when it makes them
        # (Address_Mapping_Unit_Page_Level.cpp:1622), though its schedulers never issue them;
        # with `ftl.cmt.writebacks = "held"` ssdkit programs none either.
        "mapping_programs_per_request": (cmt.get("eviction_writebacks", 0) + cmt.get("gc_writebacks", 0)) / requests,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mqsim", required=True, help="path to the MQSim binary built with its Makefile")
    ap.add_argument("--ssdkit", default="ssdkit", help="the ssdkit command (default: ssdkit on PATH)")
    ap.add_argument("--ssdconfig", type=Path, default=SHIPPED / "ssdconfig.xml", help="device file (default: shipped)")
    ap.add_argument("--workloads", default=",".join([*SYNTHETIC, TRACE]), help="comma-separated names")
    ap.add_argument("--ideal", action="store_true", help="also run each on an ideal mapping table, cache off")
    ap.add_argument("--repeat", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the synthetic request counts")
    ap.add_argument("-o", "--output", type=Path, help="write every run as JSON here")
    args = ap.parse_args(argv)
    if shutil.which(args.mqsim) is None and not os.access(args.mqsim, os.X_OK):
        raise SystemExit(f"--mqsim {args.mqsim}: not an executable")
    if args.repeat < 1 or not args.scale > 0:
        raise SystemExit(f"--repeat must be at least 1 and --scale above 0, got {args.repeat} and {args.scale}")
    if not args.ssdconfig.is_file():
        raise SystemExit(f"--ssdconfig {args.ssdconfig}: no such file")
    if args.output is not None:
        try:
            from ssdkit import SsdkitError, outputs
        except ImportError:
            raise SystemExit("-o needs ssdkit importable: run this script with the Python that has ssdkit") from None
        # Checked before hours of runs: never the device file, a directory or a device.
        try:
            outputs.check([("comparison JSON", args.output)], [("MQSim device file", args.ssdconfig)])
        except SsdkitError as e:
            raise SystemExit(str(e)) from None
    ssdkit = args.ssdkit.split()
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = sorted(set(names) - {*SYNTHETIC, TRACE})
    if unknown:
        raise SystemExit(f"unknown workloads {unknown}; choose from {', '.join([*SYNTHETIC, TRACE])}")
    runs: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="mqsim-compare-") as tmp:
        folder = Path(tmp)
        cases = [(n, ideal) for n in names for ideal in ([False, True] if args.ideal else [False])]
        for rnd in range(args.repeat):
            for name, ideal in cases:
                dev, wl, scenario = _inputs(folder, args.ssdconfig, name, ideal, args.scale)
                key = f"{name}{' (ideal, no cache)' if ideal else ''}"
                got = runs.setdefault(key, {"mqsim": [], "ssdkit": [], "ssdkit --mqsim-compat": []})
                got["mqsim"].append(_mqsim(args.mqsim, dev, wl, scenario))
                got["ssdkit"].append(_ssdkit(ssdkit, dev, wl, scenario, False))
                got["ssdkit --mqsim-compat"].append(_ssdkit(ssdkit, dev, wl, scenario, True))
                print(f"round {rnd + 1}/{args.repeat}: {key} done", file=sys.stderr, flush=True)
    fields = [
        "mean_latency_us",
        "iops",
        "iops_whole_seconds",
        "flash_reads_per_request",
        "flash_programs_per_request",
        "mapping_reads_per_request",
        "mapping_programs_per_request",
        "wall_s",
        "peak_rss_mb",
    ]
    print("| workload | simulator | " + " | ".join(fields) + " | whole-process speed-up |")
    print("|---|---|" + "---|" * (len(fields) + 1))
    for key, sims in runs.items():
        mq_wall = statistics.median(r["wall_s"] for r in sims["mqsim"])
        for sim, rs in sims.items():
            med = {f: statistics.median(r[f] for r in rs) for f in fields}
            speed = mq_wall / med["wall_s"]
            print(f"| {key} | {sim} | " + " | ".join(f"{med[f]:.4g}" for f in fields) + f" | {speed:.1f}x |")
    if args.output is not None:
        outputs.write(args.output, json.dumps(runs, indent=2) + "\n", "comparison JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main())
