"""Digests of simulation results over configurations that cover every feature: the check that
a speed-up changes no result.

    python tests/python/result_digests.py            # print each case's digest and whether it matches
    python tests/python/result_digests.py --write    # record them in tests/data/result_digests.json

A case has two digests, SHA-256 of JSON with sorted keys: one of the result without the
configuration echoed in it, one of that configuration. Both drop the wall-clock fields and the
configuration's hash (it covers absolute trace paths) and replace the repository's path, so the
same configuration and seed give the same digests on any checkout. A configuration format change
(a key moved) changes only the second: the first shows the simulated figures stayed. `test_result_digests.py` runs every case and compares with the recorded file: an
optimisation leaves every digest equal; a change of the model changes some, and its note says
which and why (then record them again with --write).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import ssdkit

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "data" / "traces"
RECORD = REPO / "tests" / "data" / "result_digests.json"

#: Result fields that measure the machine, not the simulated device.
WALL_CLOCK = {
    "wall_time_s",
    "events_per_wall_s",
    "requests_per_wall_s",
    "snapshot_load_s",
    "snapshot_save_s",
    "snapshot",
}

# The bare controller (the whole map in DRAM, no data cache) and the 64 MiB two-plane device of
# the other tests (GC collects within a few thousand writes), here without its bare controller:
# each case says which controller it has.
from conftest import BARE
from conftest import TINY as _TINY_BARE

TINY = {k: v for k, v in _TINY_BARE.items() if k not in BARE}

# mqsim-paper's timing and parallelism (8 channels x 4 chips x 2 dies x 2 planes) with 128 blocks
# per plane (32 GiB): every level of the back end, small enough to precondition in milliseconds.
M = {"flash.blocks_per_plane": 128}
READS = {"flow.0.read_fraction": 1.0, "flow.0.request_bytes": 4096, "flow.0.pattern": "random"}
WRITES = {"flow.0.read_fraction": 0.0, "flow.0.request_bytes": 4096, "flow.0.pattern": "random"}


def flow(i: int, **keys: Any) -> dict[str, Any]:
    return {f"flow.{i}.{k}": v for k, v in keys.items()}


def trace(name: str, fmt: str, **keys: Any) -> dict[str, Any]:
    """Flow 0 replays a trace of the repository's test data."""
    files = sorted((TRACES / name).iterdir())
    return flow(0, trace=str(files[0]), trace_format=fmt, **keys)


TWO_FLOWS = {
    **flow(0, read_fraction=0.0, queue_depth=8, requests=6000, range_bytes=8 << 30),
    **flow(1, read_fraction=1.0, queue_depth=8, requests=6000, start_bytes=8 << 30, range_bytes=6 << 30),
}

#: name -> (preset, overrides, how): how is "run", "fairness", "snapshot", "fio" or "mqsim".
CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    # The bench's workloads, (a) bare and (b) with the MQSim paper's Table 3 controller.
    "randread-qd32-bare": ("mqsim-paper", {**M, **BARE, **READS, **flow(0, queue_depth=32, requests=20000)}, "run"),
    "randread-qd1-bare": ("mqsim-paper", {**M, **BARE, **READS, **flow(0, queue_depth=1, requests=5000)}, "run"),
    "seqread-128k-bare": (
        "mqsim-paper",
        {**M, **BARE, **flow(0, read_fraction=1.0, pattern="sequential", request_bytes=131072, requests=5000)},
        "run",
    ),
    "randwrite-qd32-bare": ("mqsim-paper", {**M, **BARE, **WRITES, **flow(0, queue_depth=32, requests=20000)}, "run"),
    "randwrite-qd32-table3": ("mqsim-paper", {**M, **WRITES, **flow(0, queue_depth=32, requests=20000)}, "run"),
    "randread-qd32-table3": ("mqsim-paper", {**M, **READS, **flow(0, queue_depth=32, requests=20000)}, "run"),
    "mixed-70r-qd16-table3": (
        "mqsim-paper",
        {**M, **READS, **flow(0, read_fraction=0.7, queue_depth=16, requests=20000)},
        "run",
    ),
    # GC policies, wear levelling, pools and placement on the tiny device (GC from the start).
    **{
        f"gc-{p}": ("mqsim-paper", {**TINY, **BARE, **WRITES, "ftl.gc_policy": p, **flow(0, requests=8000)}, "run")
        for p in ("greedy", "random", "d_choices", "fifo", "cost_benefit")
    },
    "gc-static-wl": (
        "mqsim-paper",
        {**TINY, **BARE, **WRITES, "ftl.wl_static": True, "ftl.wl_static_threshold": 2, **flow(0, requests=8000)},
        "run",
    ),
    "gc-refill-background-copyback": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            **WRITES,
            "ftl.spare_factor": 0.15,
            "ftl.gc_refill": True,
            "ftl.gc_background": True,
            "ftl.gc_copyback": True,
            **flow(0, requests=8000, queue_depth=2),
        },
        "run",
    ),
    "gc-foreground-not-preemptible-dynamic": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            **WRITES,
            "ftl.gc_foreground": True,
            "ftl.gc_preemptible": False,
            "ftl.placement": "dynamic",
            **flow(0, requests=8000),
        },
        "run",
    ),
    # Dynamic placement's re-targeting of writes queued for a plane that cannot take them: reads
    # of never-written pages (read_flash) pinned to plane 1 fill it with assigned pages, so the
    # other flow's writes queued there move to plane 0 (about 11,000 moves).
    "dynamic-retarget-stuck-writes": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            "flash.channels": 1,
            "flash.planes_per_die": 2,
            "ftl.placement": "dynamic",
            "ftl.unmapped_reads": "read_flash",
            "precondition.mode": "empty",
            **flow(0, read_fraction=1.0, pattern="sequential", planes=[1], range_bytes=32 << 20),
            **flow(0, request_bytes=4096, requests=12000, queue_depth=8),
            **flow(1, read_fraction=0.0, request_bytes=4096, pattern="random", start_bytes=32 << 20),
            **flow(1, range_bytes=8 << 20, requests=20000, queue_depth=8),
        },
        "run",
    ),
    "precondition-write": (
        "mqsim-paper",
        {**TINY, **BARE, **WRITES, "precondition.mode": "write", **flow(0, requests=8000)},
        "run",
    ),
    "precondition-sequential-half": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            **flow(0, read_fraction=0.5, requests=8000),
            "precondition.mode": "sequential",
            "precondition.occupancy": 0.5,
            "ftl.unmapped_reads": "read_flash",
        },
        "run",
    ),
    "precondition-empty-tlc": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            **WRITES,
            "precondition.mode": "empty",
            "flash.cell_type": "TLC",
            "flash.read_us": [60.0, 75.0, 90.0],
            "flash.program_us": [500.0, 1000.0, 2000.0],
            "flash.page_type_mapping": "simplessd",
            **flow(0, requests=8000),
        },
        "run",
    ),
    "snapshot": ("mqsim-paper", {**TINY, **WRITES, **flow(0, requests=8000)}, "snapshot"),
    # Mapping cache and data cache.
    "cmt-per-flow-cache-per-flow": (
        "mqsim-paper",
        {
            **M,
            **TWO_FLOWS,
            "ftl.cmt.mode": "per_flow",
            "ftl.cmt.gc_updates": "batch",
            "cache.mode": "read_write",
            "cache.sharing": "per_flow",
        },
        "run",
    ),
    "cache-read-hotcold": (
        "mqsim-paper",
        {
            **M,
            "ftl.cmt.mode": "ideal",
            "cache.mode": "read",
            "cache.capacity_bytes": 64 << 20,
            **flow(0, read_fraction=0.9, pattern="hotcold", hot_space_fraction=0.1, hot_access_fraction=0.9),
            **flow(0, requests=20000, queue_depth=16),
        },
        "run",
    ),
    "cache-dirty-flush-fua": (
        "mqsim-paper",
        {
            **M,
            **WRITES,
            "cache.precondition": "dirty",
            "cache.flush_scope": "device",
            **flow(0, requests=10000, flush_every=100, fua=False),
            **flow(1, read_fraction=0.0, requests=2000, fua=True, queue_depth=4),
        },
        "run",
    ),
    # Scheduling.
    **{
        f"tsu-{p}": (
            "mqsim-paper",
            {
                **M,
                **TWO_FLOWS,
                "tsu.policy": p,
            }
            | (
                {**flow(0, priority="high"), **flow(1, priority="low")}
                if p in ("priority_out_of_order", "flin")
                else {}
            ),
            "run",
        )
        for p in ("fifo", "out_of_order", "priority_out_of_order", "flin")
    },
    "tsu-suspension": (
        "mqsim-paper",
        {**TINY, **BARE, **TWO_FLOWS, "tsu.suspension": "program_erase", **flow(0, range_bytes=0, requests=4000)}
        | flow(1, start_bytes=0, range_bytes=0, requests=4000),
        "run",
    ),
    "fairness": ("mqsim-paper", {**M, **BARE, **TWO_FLOWS}, "fairness"),
    "pinned": (
        "mqsim-paper",
        {
            **M,
            **BARE,
            **TWO_FLOWS,
            **flow(0, channels=[0, 1, 2, 3], range_bytes=2 << 30),
            **flow(1, channels=[4, 5, 6, 7], range_bytes=2 << 30),
        },
        "run",
    ),
    # Host and interface.
    "host-interrupts-prp-weighted": (
        "mqsim-paper",
        {
            **M,
            **TWO_FLOWS,
            "host.completion": "interrupt",
            "host.coalesce_completions": 4,
            "host.coalesce_time_us": 20.0,
            "interface.data_pointers": "prp",
            "interface.arbitration": "weighted",
            **flow(0, priority="urgent"),
        },
        "run",
    ),
    "host-polled-sgl-ideal-link": (
        "mqsim-paper",
        {
            **M,
            **READS,
            "host.completion": "polled",
            "interface.data_pointers": "sgl",
            "interface.link_model": "ideal",
            **flow(0, requests=10000),
        },
        "run",
    ),
    "sata-x25m": ("x25m", {"flash.blocks_per_plane": 256, **flow(0, requests=5000)}, "run"),
    "nvmesim-block": ("nvmesim-block", flow(0, requests=5000), "run"),
    "nvmesim-dram": ("nvmesim-dram", flow(0, requests=20000), "run"),
    "optane-p4800x": ("optane-p4800x", flow(0, requests=20000), "run"),
    # Workload generators.
    "open-loop-exponential-zipf-trim": (
        "mqsim-paper",
        {
            **M,
            **flow(
                0,
                arrival="exponential",
                rate_iops=40000.0,
                pattern="zipf",
                zipf_theta=0.9,
                read_fraction=0.6,
                trim_fraction=0.1,
                requests=10000,
            ),
        },
        "run",
    ),
    "open-loop-onoff-pareto-sizes": (
        "mqsim-paper",
        {
            **M,
            **flow(
                0,
                arrival="onoff",
                rate_iops=50000.0,
                on_ms=5.0,
                off_ms=5.0,
                pattern="pareto",
                pareto_h=0.8,
                size="uniform",
                size_min_bytes=4096,
                size_max_bytes=65536,
                requests=5000,
            ),
        },
        "run",
    ),
    "fixed-uniform-normal-list": (
        "mqsim-paper",
        {
            **M,
            **flow(0, arrival="fixed", rate_iops=20000.0, pattern="normal", size="normal", request_bytes=16384)
            | flow(0, normal_stdev_fraction=0.1, size_stdev_bytes=4096, requests=4000),
            **flow(1, arrival="uniform", rate_iops=20000.0, size="list", requests=4000)
            | {"flow.1.size_list": [{"bytes": 4096, "weight": 3.0}, {"bytes": 65536, "weight": 1.0}]},
        },
        "run",
    ),
    "run-outputs": (
        "mqsim-paper",
        {
            **M,
            **flow(0, read_fraction=0.7, requests=20000),
            "run.timeseries_window_ms": 1.0,
            "run.latency_breakdown": True,
            "run.end": "last_completion",
        },
        "run",
    ),
    "steady-state-rounds": (
        "mqsim-paper",
        {
            **TINY,
            **BARE,
            **WRITES,
            "steady_state.enabled": True,
            "steady_state.round_ms": 20.0,
            "steady_state.max_rounds": 6,
            **flow(0, requests=0, duration_ms=0.0),
        },
        "run",
    ),
    "max-simulated-time": ("mqsim-paper", {**M, **WRITES, "run.max_simulated_ms": 5.0}, "run"),
    # Traces: each reader, timed and closed replay, folding.
    "trace-mqsim-timed": (
        "mqsim-paper",
        {**M, **trace("mqsim_tpcc_small", "mqsim", requests=20000, fold="modulo")},
        "run",
    ),
    "trace-msr-closed": (
        "mqsim-paper",
        {**M, **trace("ms_dtrs", "auto", replay="closed", queue_depth=16, requests=20000, fold="modulo")},
        "run",
    ),
    "trace-disksim-pages-scaled": (
        "mqsim-paper",
        {**M, **trace("umass_websearch1_excerpt", "disksim_pages", requests=20000, time_scale=0.5, fold="modulo")},
        "run",
    ),
    "trace-disksim": (
        "mqsim-paper",
        {**M, **trace("disksim_valid_ascii", "auto", requests=5000, fold="modulo")},
        "run",
    ),
    "trace-blkparse": (
        "mqsim-paper",
        {**M, **trace("blkparse_nvme_java_sample", "auto", requests=5000, fold="modulo")},
        "run",
    ),
    "trace-biotracer": (
        "mqsim-paper",
        {
            **M,
            **trace("mobile_biotracer_android", "auto", replay="closed", queue_depth=8, requests=5000, fold="modulo"),
        },
        "run",
    ),
    "trace-cloudphysics": (
        "mqsim-paper",
        {**M, **trace("cloudphysics_vscsi", "auto", requests=5000, fold="modulo")},
        "run",
    ),
    # Importers.
    "fio-example": ("mqsim-paper", M, "fio"),
    "mqsim-xml": ("mqsim-paper", {}, "mqsim"),
}


#: Result fields that depend on where the checkout is: the configuration's hash covers the
#: trace files' absolute paths (the configuration itself is kept, its paths as `<repo>`).
CHECKOUT = {"config_hash"}


def canonical(doc: Any) -> Any:
    """The result without wall-clock fields, and the repository's path as `<repo>`."""
    if isinstance(doc, dict):
        return {k: canonical(v) for k, v in doc.items() if k not in WALL_CLOCK | CHECKOUT}
    if isinstance(doc, list):
        return [canonical(v) for v in doc]
    if isinstance(doc, str):
        return doc.replace(str(REPO), "<repo>")
    return doc


def result(name: str) -> dict[str, Any]:
    preset, ov, how = CASES[name]
    if how == "run":
        return ssdkit.run(preset, overrides=ov).raw
    if how == "fairness":
        return ssdkit.run(preset, overrides=ov, fairness=True, workers=1).raw
    if how == "snapshot":
        with tempfile.TemporaryDirectory() as d:
            snap = Path(d) / "dev.snap"
            ssdkit.precondition(preset, snap, overrides=ov)
            return ssdkit.run(preset, overrides=ov, snapshot=snap).raw
    if how == "fio":
        from ssdkit.fio import fio_to_toml

        text = fio_to_toml(REPO / "tests" / "data" / "fio" / "example.fio", preset=preset, overrides=ov)
        return ssdkit.run(text, overrides={"flow.0.requests": 5000, "flow.1.requests": 5000}).raw
    if how == "mqsim":
        from ssdkit.mqsim import mqsim_to_toml

        data = REPO / "tests" / "data" / "mqsim"
        text = mqsim_to_toml(data / "ssdconfig.xml", data / "workload.xml", scenario=1)
        return ssdkit.run(text, overrides={"flow.0.requests": 10000}).raw
    raise ValueError(how)


def _sha(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def digest(name: str) -> dict[str, str]:
    """Two digests: of the simulated result (every field but the configuration echoed in it) and
    of that configuration. A change of the configuration's format (a key moved into a policy's
    table) changes only the second; a change of the model changes the first."""
    doc = canonical(result(name))
    config = doc.pop("config")
    return {"result": _sha(doc), "config": _sha(config)}


def main(argv: list[str]) -> int:
    write = "--write" in argv
    names = [a for a in argv if not a.startswith("--")] or list(CASES)
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    got = {}
    for n in names:
        got[n] = digest(n)
        old = recorded.get(n, {})
        changed = [k for k in ("result", "config") if old.get(k) != got[n][k]]
        mark = "" if write else ("  equal" if not changed else "  CHANGED: " + " and ".join(changed))
        print(f"{n:40s} {got[n]['result'][:16]} {got[n]['config'][:16]}{mark}", flush=True)
    if write:
        RECORD.write_text(json.dumps({**recorded, **got}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(got)} digests in {RECORD.relative_to(REPO)}")
        return 0
    return 0 if all(recorded.get(n) == d for n, d in got.items()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
