"""``ssdkit bench``: simulator speed on standard workloads of the mqsim-paper device.

The read workloads run on a freshly preconditioned device. Then the device is preconditioned
for 4 KiB random writes (fast mode) in a separate Python process, so that process's peak
memory is the cost of preconditioning alone, and saved as a snapshot; the random-write workload
starts from that snapshot, so GC collects from its first requests.

Speeds are per wall-clock second of the simulation phase, the event loop (the result's
``wall_time_s``); building the device is reported apart as setup time, and the whole process
(start to exit: Python, imports, setup, the run, the result) beside it. Each workload runs in a
process of its own, so its peak memory (RSS) is its own; bytes per page is that peak over the
device's physical pages. The ``mqsim-`` cases run as MQSim's users do: ``ssdkit run --mqsim`` on
MQSim's shipped ssdconfig.xml (CMU-SAFARI/MQSim; a 2 MiB mapping cache and a 256 MiB write
cache on an empty device, whose reads of never-written pages map them, as MQSim does) and a
one-flow workload.xml, the result written to a file. The growth case runs the QD32 random reads again with ten times the
requests: a simulator whose speed or memory depends on the run's length shows it there.

The workloads are independent, so ``jobs`` of them (default: the machine's cores) run at once,
each a process of one thread. Workloads side by side share the memory bandwidth and the last
level cache; ``jobs=1`` gives the quietest figures.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

from . import api
from ._native import SsdkitError, __version__

PRESET = "mqsim-paper"


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    overrides: dict[str, Any]
    from_snapshot: bool = False
    #: Replays a generated MQSim-format trace of 4 KiB random reads instead of a synthetic flow.
    trace: bool = False
    #: The device; the run-wide ``overrides`` of ``run_bench`` apply to the mqsim-paper cases only.
    preset: str = PRESET
    #: Requests as a multiple of the bench's count.
    scale: int = 1
    #: An MQSim-import case: (read %, request sectors, queue depth, address distribution) of its
    #: one-flow workload.xml, run by ``ssdkit run --mqsim`` on the shipped ssdconfig.xml.
    mqsim: tuple | None = None
    #: With ``mqsim``: Ideal_Mapping_Table true and the data cache off.
    ideal: bool = False


# Every case states the whole flow, so the preset's demo flow cannot leak into a figure, and
# its controller memory: the whole map in DRAM and no data cache (a), or the MQSim paper's
# Table 3 controller, a 4 MiB mapping cache and a 256 MiB write cache (b, the `-cmt` cases).
_BASE = {
    "flow.0.read_fraction": 1.0,
    "flow.0.request_bytes": 4096,
    "flow.0.pattern": "random",
    "ftl.cmt.mode": "ideal",
    "cache.mode": "off",
}
_WRITE = {"flow.0.queue_depth": 32, "flow.0.read_fraction": 0.0}
_TABLE3 = {
    "ftl.cmt.mode": "shared",
    "ftl.cmt.capacity_bytes": 4 << 20,
    "cache.mode": "write",
    "cache.capacity_bytes": 256 << 20,
}

CASES = (
    Case("randread-4k-qd1", "4 KiB random read, QD1", {"flow.0.queue_depth": 1}),
    Case("randread-4k-qd32", "4 KiB random read, QD32", {"flow.0.queue_depth": 32}),
    Case(
        "seqread-128k-qd32",
        "128 KiB sequential read, QD32",
        {"flow.0.queue_depth": 32, "flow.0.request_bytes": 131072, "flow.0.pattern": "sequential"},
    ),
    Case(
        "trace-read-4k-qd32",
        "MQSim-format trace of 4 KiB random reads, replayed closed loop at QD32 (parse + simulate)",
        {"flow.0.queue_depth": 32, "flow.0.replay": "closed", "flow.0.trace_format": "mqsim", "flow.0.fold": "modulo"},
        trace=True,
    ),
    Case(
        "randwrite-4k-qd32",
        "4 KiB random write, QD32, from the preconditioned snapshot (GC active)",
        _WRITE,
        from_snapshot=True,
    ),
    Case(
        "randread-4k-qd32-cmt",
        "4 KiB random read, QD32, with a 4 MiB mapping cache and a 256 MiB write cache (Table 3)",
        {"flow.0.queue_depth": 32, **_TABLE3},
    ),
    Case(
        "randwrite-4k-qd32-cmt",
        "4 KiB random write, QD32, from its snapshot, with Table 3's mapping cache and a write cache "
        "that starts full of dirty pages",
        {**_WRITE, **_TABLE3, "cache.precondition": "dirty"},
        from_snapshot=True,
    ),
    Case(
        "mixed-70r-4k-qd16",
        "4 KiB random, 70 % reads and 30 % writes, QD16, from the preconditioned snapshot (GC active)",
        {"flow.0.queue_depth": 16, "flow.0.read_fraction": 0.7},
        from_snapshot=True,
    ),
    Case(
        "mixed-70r-4k-qd16-cmt",
        "4 KiB random, 70 % reads and 30 % writes, QD16, from its snapshot, with Table 3's mapping "
        "cache and write cache",
        {"flow.0.queue_depth": 16, "flow.0.read_fraction": 0.7, **_TABLE3},
        from_snapshot=True,
    ),
    Case(
        "randread-4k-qd32-x10",
        "4 KiB random read, QD32, ten times the requests (speed and memory as runs grow)",
        {"flow.0.queue_depth": 32},
        scale=10,
    ),
    Case(
        "mqsim-randread-4k-qd32",
        "MQSim's shipped ssdconfig.xml and a one-flow workload.xml, 4 KiB random read, QD32, empty device, "
        "as `ssdkit run --mqsim` (whole process)",
        {},
        mqsim=(100, 8, 32, "RANDOM_UNIFORM"),
    ),
    Case(
        "mqsim-randread-4k-qd32-ideal",
        "the same with Ideal_Mapping_Table true and the data cache off",
        {},
        mqsim=(100, 8, 32, "RANDOM_UNIFORM"),
        ideal=True,
    ),
    Case(
        "mqsim-randwrite-4k-qd32",
        "MQSim's shipped files, 4 KiB random write, QD32, empty device (whole process)",
        {},
        mqsim=(0, 8, 32, "RANDOM_UNIFORM"),
    ),
    Case(
        "mqsim-mixed-70r-4k-qd16",
        "MQSim's shipped files, 4 KiB random, 70 % reads, QD16, empty device (whole process)",
        {},
        mqsim=(70, 8, 16, "RANDOM_UNIFORM"),
    ),
    Case(
        "dramnvm-64b-qd32",
        "64 B random read, QD32, on NVMeSim's DRAM-like NVM (preset nvmesim-dram: in place, "
        "PCIe 2.0 x1, an interrupt per completion)",
        {"flow.0.queue_depth": 32, "flow.0.request_bytes": 64},
        preset="nvmesim-dram",
    ),
)

# The child process that runs one workload: prints its figures and its peak RSS as JSON.
_RUN_CHILD = """
import json, sys
from ssdkit.bench import _run_case, peak_rss_mib, Case
a = json.loads(sys.argv[1])
fig = _run_case(Case(**a["case"]), a["overrides"], a["snapshot"])
print(json.dumps({**fig, "peak_rss_mib": peak_rss_mib()}))
"""

# The child process that runs one MQSim-import case as the command line does: prints the result's
# figures and its peak RSS as JSON.
_MQSIM_CHILD = """
import json, sys
from ssdkit.cli import main, exit_now
from ssdkit.bench import peak_rss_mib
a = json.loads(sys.argv[1])
rc = main(["run", "--mqsim", a["ssdconfig"], a["workload"], "-o", a["output"], *a["args"]])
if rc:
    sys.exit(rc)
print(json.dumps({"peak_rss_mib": peak_rss_mib()}))
exit_now(0)
"""

#: One IO flow of MQSim's workload.xml, on every resource of the shipped device.
_MQSIM_FLOW = """<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
	<IO_Scenario>
		<IO_Flow_Parameter_Set_Synthetic>
			<Priority_Class>HIGH</Priority_Class>
			<Device_Level_Data_Caching_Mode>{caching}</Device_Level_Data_Caching_Mode>
			<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs>
			<Chip_IDs>0,1,2,3</Chip_IDs>
			<Die_IDs>0,1</Die_IDs>
			<Plane_IDs>0,1</Plane_IDs>
			<Initial_Occupancy_Percentage>1</Initial_Occupancy_Percentage>
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

# The child process that preconditions: prints its record, its own time and peak RSS as JSON.
_CHILD = """
import json, sys, time
import ssdkit
from ssdkit.bench import peak_rss_mib
a = json.loads(sys.argv[1])
t = time.perf_counter()
p = ssdkit.precondition(a["preset"], a["output"], overrides=a["overrides"])
total = time.perf_counter() - t
print(json.dumps({"record": p.raw, "total_s": total, "peak_rss_mib": peak_rss_mib()}))
"""


@dataclass
class _Table:
    out: TextIO | None
    cols: list[tuple] = field(
        default_factory=lambda: [
            ("workload", "<21"),
            ("requests", ">11"),
            ("requests/s", ">11"),
            ("events", ">12"),
            ("events/s", ">12"),
            ("ev/req", ">6"),
            ("sim s", ">7"),
            ("setup s", ">7"),
            ("proc s", ">7"),
            ("RSS MiB", ">8"),
            ("B/page", ">6"),
            ("GC runs", ">9"),
            ("WA", ">6"),
        ]
    )

    def line(self, *cells: Any) -> None:
        if self.out is not None:
            print("  ".join(f"{c:{fmt}}" for c, (_, fmt) in zip(cells, self.cols)), file=self.out, flush=True)

    def note(self, text: str = "") -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)


#: What the table's columns mean, printed above it.
_LEGEND = (
    "Columns: requests/s and events/s are the requests completed and the discrete events processed per",
    "wall-clock second of the simulation phase (the event loop); ev/req the events per request; sim s is",
    "that phase's wall-clock time and setup s the time before it (building and preconditioning the device,",
    "or loading the snapshot; for the mqsim- cases everything in their process but the loop); proc s is the",
    "whole process, start to exit (Python, imports, setup, the run, the result; the mqsim- cases also read",
    "the XML files and write the result file). RSS MiB is the peak memory of the workload's process (each",
    "runs in its own) and B/page that peak over the device's physical pages. GC runs and WA (write",
    "amplification: flash page programs per page the host wrote) describe the simulated device.",
)


def run_bench(
    requests: int = 1_000_000,
    log: TextIO | None = sys.stdout,
    overrides: list[str] | None = None,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Runs every workload with ``requests`` requests, ``jobs`` at once (default: the machine's
    cores), printing a row per workload to ``log`` in the table's order as they finish, then the
    cost of preconditioning and of the snapshot; returns the figures. ``overrides``
    (``"key=value"`` strings) change the device for every workload, e.g. a smaller device for a
    quick check."""
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"argument `jobs` = {jobs!r} must be a positive integer (workloads run at once)")
    jobs = jobs or os.cpu_count() or 1
    device = list(overrides or [])
    t = _Table(log)
    t.note(
        f"ssdkit {__version__} bench: simulator speed on the {PRESET} device (and the nvmesim-dram case on its own), {requests:,} requests per workload"
    )
    t.note(
        f"{jobs} workload{'s' if jobs > 1 else ''} at a time (--jobs), each a process of one thread"
        + (": side by side they share memory bandwidth and cache; --jobs 1 is quietest" if jobs > 1 else "")
    )
    if device:
        t.note(f"device changed for every workload: {' '.join(device)}")
    t.note()
    t.note("Workloads (each on a freshly preconditioned device unless noted):")
    for case in CASES:
        t.note(f"  {case.name:<19}  {case.description}")
    t.note()
    for text in _LEGEND:
        t.note(text)
    t.note()
    t.line(*(name for name, _ in t.cols))

    figures = []
    with tempfile.TemporaryDirectory(prefix="ssdkit-bench-") as tmp:

        def one(i: int, case: Case) -> tuple[dict[str, Any] | None, dict[str, Any]]:
            if case.mqsim is not None:
                return None, _run_mqsim_case(case, requests, device, os.path.join(tmp, f"mqsim-{i}"))
            flow = {**_BASE, **case.overrides, "flow.0.requests": requests * case.scale}
            if case.trace:
                flow = {k: v for k, v in flow.items() if k not in _BASE or not k.startswith("flow.")}
                flow["flow.0.trace"] = _write_trace(os.path.join(tmp, f"bench-{i}.trace"), requests)
            mine = device if case.preset == PRESET else []
            ov = mine + [f"{k}={api.toml_literal(v, k)}" for k, v in flow.items()]
            p = None
            snap = os.path.join(tmp, f"device-{i}.snap")
            if case.from_snapshot:
                # The snapshot is made with the case's own flow, so fast preconditioning brings
                # the device to that workload's steady state.
                p = _precondition_in_child(snap, ov)
            return p, _run_case_in_child(case, ov, snap if case.from_snapshot else None)

        prec: dict[str, Any] | None = None
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            # Threads only wait for the workloads' processes.
            futures = [pool.submit(one, i, case) for i, case in enumerate(CASES)]
            for case, fut in zip(CASES, futures):
                p, fig = fut.result()
                # The summary below describes the first snapshot case's preconditioning.
                prec = prec or p
                figures.append(fig)
                t.line(
                    case.name,
                    f"{fig['requests']:,}",
                    f"{fig['requests_per_wall_s']:,.0f}",
                    f"{fig['events']:,}",
                    f"{fig['events_per_wall_s']:,.0f}",
                    f"{fig['events_per_request']:.2f}",
                    f"{fig['wall_time_s']:.3f}",
                    f"{fig['setup_s']:.3f}",
                    f"{fig['process_s']:.3f}",
                    "-" if fig["peak_rss_mib"] is None else f"{fig['peak_rss_mib']:,.0f}",
                    "-" if fig["bytes_per_page"] is None else f"{fig['bytes_per_page']:.2f}",
                    f"{fig['gc_runs']:,}",
                    f"{fig['write_amplification']:.2f}" if fig["write_amplification"] else "-",
                )
        # the TemporaryDirectory removes the snapshot here
    assert prec is not None
    write = next(f for f, c in zip(figures, CASES) if c.from_snapshot)
    rec = prec["record"]
    figs = {
        "precondition_s": prec["precondition_s"],
        "precondition_peak_rss_mib": prec["peak_rss_mib"],
        "snapshot_save_s": rec["snapshot_save_s"],
        "snapshot_load_s": write["snapshot_load_s"],
        "randwrite_requests_per_wall_s": write["requests_per_wall_s"],
    }
    rss = peak_rss_mib()

    model = f", {rec['model']}" if rec.get("model") else ""
    t.note()
    t.note(
        f"Preconditioning for {write['case']} (mode {rec.get('mode')}{model}; predicted write amplification "
        f"{rec.get('predicted_write_amplification', float('nan')):.2f}), in a separate process:"
    )
    t.note(_figure("build + preconditioning time", _seconds(figs["precondition_s"])))
    t.note(_figure("  preconditioning alone", _seconds(rec["wall_time_s"])))
    t.note(_figure("  building the device, loading the configuration", _seconds(prec["build_s"])))
    t.note(_figure("peak memory (RSS) of that process", _mib(figs["precondition_peak_rss_mib"])))
    t.note("Snapshot of the preconditioned device:")
    t.note(_figure("size", f"{rec['snapshot_bytes']:,} bytes ({rec['snapshot_bytes'] / 2**20:,.1f} MiB)"))
    t.note(_figure("save time (write to file)", _seconds(figs["snapshot_save_s"])))
    t.note(_figure("load time (read and check, in the run)", _seconds(figs["snapshot_load_s"])))
    t.note(f"{write['case']}, started from the snapshot (garbage collection from the first requests):")
    t.note(_figure("requests simulated per second", f"{figs['randwrite_requests_per_wall_s']:,.0f}"))
    t.note(_figure("events processed per second", f"{write['events_per_wall_s']:,.0f}"))
    t.note(_figure("GC runs", f"{write['gc_runs']:,}"))
    t.note(_figure("write amplification", f"{write['write_amplification']:.3f}"))
    one, ten = (next(f for f in figures if f["case"] == n) for n in ("randread-4k-qd32", "randread-4k-qd32-x10"))
    t.note(f"As runs grow ({ten['case']} against {one['case']}):")
    t.note(_figure("requests per second, 10x the requests / 1x", f"{_ratio(ten, one, 'requests_per_wall_s')}"))
    t.note(_figure("peak memory, 10x the requests / 1x", f"{_ratio(ten, one, 'peak_rss_mib')}"))
    t.note("This process (it runs none of the workloads itself):")
    t.note(_figure("peak memory (RSS)", _mib(rss) if rss is not None else "unavailable on this platform"))
    return {
        "ssdkit_version": __version__,
        "preset": PRESET,
        "overrides": device,
        "requests": requests,
        "jobs": jobs,
        "cases": figures,
        "precondition": {
            "record": rec,
            "precondition_s": prec["precondition_s"],
            "build_s": prec["build_s"],
            "total_s": prec["total_s"],
            "peak_rss_mib": prec["peak_rss_mib"],
        },
        "figures": figs,
        "write_case_gc_ran": write["gc_runs"] > 0,
        "peak_rss_mib": rss,
    }


def _ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> str:
    if not a.get(key) or not b.get(key):
        return "-"
    return f"{a[key] / b[key]:.3f}"


def _figure(label: str, shown: str) -> str:
    return f"  {label:<50} {shown:>24}"


def _seconds(v: float) -> str:
    return f"{v:.3f} s"


def _mib(v: float | None) -> str:
    return "unavailable" if v is None else f"{v:,.1f} MiB"


def _run_case(case: Case, overrides: list[str], snapshot: str | None) -> dict[str, Any]:
    start = time.perf_counter()
    r = api.run(case.preset, overrides=overrides, snapshot=snapshot)
    total_s = time.perf_counter() - start
    wall = r.wall_time_s
    fig = {
        "case": case.name,
        "description": case.description,
        "requests": r.completed,
        "requests_per_wall_s": r.completed / wall if wall > 0 else 0.0,
        "events": r.events,
        "events_per_wall_s": r.events_per_wall_s,
        "events_per_request": r.events / r.completed if r.completed else 0.0,
        "physical_pages": _physical_pages(r),
        "wall_time_s": wall,
        "setup_s": max(total_s - wall, 0.0),
        "simulated_time_s": r.simulated_time_s,
        "gc_runs": r.device.ftl.gc_runs,
        "write_amplification": r.device.ftl.write_amplification,
        "precondition_mode": r.device.precondition_mode,
    }
    if snapshot is not None:
        fig["snapshot_load_s"] = r.device.precondition.get("snapshot_load_s")
    return fig


def _physical_pages(r: Any) -> int:
    f = r.raw["config"]["flash"]
    return (
        f["channels"]
        * f["chips_per_channel"]
        * f["dies_per_chip"]
        * f["planes_per_die"]
        * f["blocks_per_plane"]
        * f["pages_per_block"]
    )


def _run_case_in_child(case: Case, overrides: list[str], snapshot: str | None) -> dict[str, Any]:
    """Runs one workload in a fresh Python process, so its peak RSS is its own."""
    arg = {"case": dataclasses.asdict(case), "overrides": overrides, "snapshot": snapshot}
    start = time.perf_counter()
    fig = _in_child(_RUN_CHILD, arg, f"bench workload {case.name}")
    fig["process_s"] = time.perf_counter() - start
    rss = fig["peak_rss_mib"]
    fig["bytes_per_page"] = None if rss is None else rss * 2**20 / fig["physical_pages"]
    return fig


def _run_mqsim_case(case: Case, requests: int, device: list[str], folder: str) -> dict[str, Any]:
    """Runs an MQSim-import case as a user would, ``ssdkit run --mqsim`` on the shipped
    ssdconfig.xml (a copy in the package) and a one-flow workload.xml, in a process of its own
    timed from start to exit; its figures come from the result file it writes."""
    os.makedirs(folder)
    assert case.mqsim is not None
    read, size, qd, dist = case.mqsim
    with open(os.path.join(os.path.dirname(__file__), "data", "mqsim_ssdconfig.xml")) as f:
        ssdconfig = f.read()
    if case.ideal:
        ssdconfig = ssdconfig.replace("<Ideal_Mapping_Table>false<", "<Ideal_Mapping_Table>true<")
    paths = {k: os.path.join(folder, f"{k}.xml") for k in ("ssdconfig", "workload")}
    with open(paths["ssdconfig"], "w") as f:
        f.write(ssdconfig)
    with open(paths["workload"], "w") as f:
        f.write(
            _MQSIM_FLOW.format(
                caching="TURNED_OFF" if case.ideal else "WRITE_CACHE",
                read=read,
                dist=dist,
                size=size,
                qd=qd,
                requests=requests * case.scale,
            )
        )
    out = os.path.join(folder, "result.json")
    args = [a for kv in device for a in ("--set", kv)]
    start = time.perf_counter()
    child = _in_child(_MQSIM_CHILD, {**paths, "output": out, "args": args}, f"bench workload {case.name}")
    process_s = time.perf_counter() - start
    with open(out) as f:
        r = json.load(f)
    wall = r["wall_time_s"]
    completed = sum(fl["completed"] for fl in r["flows"])
    ftl = r["device"]["ftl"]
    f = r["config"]["flash"]
    pages = (
        f["channels"]
        * f["chips_per_channel"]
        * f["dies_per_chip"]
        * f["planes_per_die"]
        * f["blocks_per_plane"]
        * f["pages_per_block"]
    )
    rss = child["peak_rss_mib"]
    return {
        "case": case.name,
        "description": case.description,
        "requests": completed,
        "requests_per_wall_s": completed / wall if wall > 0 else 0.0,
        "events": r["events"],
        "events_per_wall_s": r["events_per_wall_s"],
        "events_per_request": r["events"] / completed if completed else 0.0,
        "physical_pages": pages,
        "wall_time_s": wall,
        # Everything but the event loop, inside the process (Python and the whole process's start
        # included): the complement of the loop in proc s.
        "setup_s": max(process_s - wall, 0.0),
        "process_s": process_s,
        "simulated_time_s": r["simulated_time_s"],
        "gc_runs": ftl["gc_runs"],
        "write_amplification": ftl["write_amplification"],
        "precondition_mode": r["device"]["precondition"]["mode"],
        "peak_rss_mib": rss,
        "bytes_per_page": None if rss is None else rss * 2**20 / pages,
    }


def _in_child(script: str, arg: dict[str, Any], what: str) -> dict[str, Any]:
    """Runs `script` in a fresh Python process with `arg` as JSON; returns the JSON object of its
    last output line. A failure raises SsdkitError with the child's last error line."""
    p = subprocess.run([sys.executable, "-c", script, json.dumps(arg)], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        raise SsdkitError(f"{what} failed: {lines[-1] if lines else 'no message'}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _write_trace(path: str, n: int) -> str:
    """An MQSim ASCII trace of ``n`` 4 KiB random reads 10 us apart, from a fixed seed."""
    rng = random.Random(1)
    slots = 50_000_000  # 4 KiB slots: 200 GB of the preset's 476 GiB
    with open(path, "w") as f:
        f.writelines(f"{i * 10_000} 0 {rng.randrange(slots) * 8} 8 1\n" for i in range(n))
    return path


def _precondition_in_child(output: str, overrides: list[str]) -> dict[str, Any]:
    """Preconditions in a fresh Python process so its peak RSS is its own; returns the record,
    the time of build + preconditioning (without the save) and the child's peak RSS."""
    out = _in_child(
        _CHILD, {"preset": PRESET, "output": output, "overrides": overrides}, "preconditioning for the bench"
    )
    rec = out["record"]
    precondition_s = max(out["total_s"] - rec["snapshot_save_s"], 0.0)
    out["precondition_s"] = precondition_s
    out["build_s"] = max(precondition_s - rec["wall_time_s"], 0.0)
    return out


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process in MiB, or None where it cannot be read."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is KiB on Linux and the BSDs but bytes on macOS.
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024
