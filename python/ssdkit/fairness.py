"""Fairness of a multi-flow run, as the MQSim paper (FAST'18, section 3.1) defines it: each flow
runs alone on the same starting device, then all flows run together. A flow's slowdown is
S = RT_shared / RT_alone (its mean response time beside the others over its mean response
time alone); the run's fairness is F = min S / max S (1: every flow slowed alike) and its
weighted speedup WS = sum of RT_alone / RT_shared (the number of flows when nothing
interferes)."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from . import _native, _record
from ._native import ConfigError
from ._record import record

# The figures are part of the result model (``Result.fairness``); this module runs them.
from .result import Fairness, FlowFairness, Result


@record(frozen=True)
class AloneRun:
    """What fairness keeps of flow ``index``'s alone run: its reads and writes completed and
    their mean response time, microseconds (``flows[index].stats.all`` of that run)."""

    index: int
    name: str
    count: int
    mean_us: float


def mean_response_us(result: Result, k: int) -> float:
    """Flow k's mean response time over its reads and writes, microseconds."""
    s = result.flows[k].stats.all
    return _response_us(AloneRun(k, result.flows[k].name, s.count, s.latency.mean))


def _response_us(run: AloneRun) -> float:
    if run.count == 0:
        raise ConfigError(
            f"flow {run.index} ({run.name}) completed no read or write, so it has no response time to compare"
        )
    return run.mean_us


def compute(shared: Result, alone: list[AloneRun]) -> Fairness:
    """The fairness figures of a shared run and the alone runs of its flows (flow k's in
    ``alone[k]``)."""
    flows = []
    for k, f in enumerate(shared.flows):
        a, s = _response_us(alone[k]), mean_response_us(shared, k)
        flows.append(FlowFairness(index=k, name=f.name, rt_alone_us=a, rt_shared_us=s, slowdown=s / a))
    slow = [f.slowdown for f in flows]
    return Fairness(flows=flows, fairness=min(slow) / max(slow), weighted_speedup=sum(1.0 / x for x in slow))


def run_fairness(src: dict[str, str], overrides: list[str], snapshot: str | None, workers: int | None) -> Result:
    """Runs flow k alone for every k (the other flows switched off with ``enabled = false``,
    so flow k keeps its index, random streams, queue pair and partitions) and all flows
    together, every run from the same device state: ``snapshot`` when given, otherwise one
    preconditioned once for the whole workload into a temporary snapshot. The runs go on
    ``workers`` threads (default: the machine's cores; a simulation releases the GIL), each
    one thread and deterministic. Of an alone run only flow k's count and mean response time
    come back (no result document: with n flows each would hold n entries, n^2 in all), and
    the alone runs go in batches, each reading the configuration once. Returns the shared
    run's result with ``fairness`` set."""
    enabled = _native.flows_enabled(overrides=overrides, **src)
    n = len(enabled)
    if n < 2:
        raise ConfigError(
            f"fairness needs at least two flows (each run alone, then together): the configuration has {n}"
        )
    if not all(enabled):
        raise ConfigError(f"fairness runs every flow; `flow.{enabled.index(False)}.enabled` is false")
    threads = max(1, workers or os.cpu_count() or 1)
    # Batches of a few dozen runs: few enough configuration reads, and enough batches per
    # thread that the threads finish together.
    size = max(1, min(64, -(-n // (4 * threads))))
    batches = [range(i, min(n, i + size)) for i in range(0, n, size)]

    def alone(ks: range, snap: str) -> list[AloneRun]:
        runs = _native.run_alone(list(ks), overrides=overrides, snapshot=snap, **src)
        return [AloneRun(*r) for r in runs]

    def shared(snap: str) -> Result:
        return Result.from_json(_native.run(overrides=overrides, progress=False, snapshot=snap, **src))

    with tempfile.TemporaryDirectory(prefix="ssdkit-fairness-") as tmp:
        snap = snapshot
        if snap is None:
            snap = os.path.join(tmp, "device.snap")
            _native.precondition(snap, overrides=overrides, **src)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            # The shared run first: the longest, it overlaps the alone batches.
            whole = pool.submit(shared, snap)
            parts = [pool.submit(alone, ks, snap) for ks in batches]
            runs = [r for p in parts for r in p.result()]
            result = whole.result()
    fair = compute(result, runs)
    raw = dict(result.raw)
    raw["fairness"] = fair.to_dict()
    return _record.replace(result, raw=raw, fairness=fair)
