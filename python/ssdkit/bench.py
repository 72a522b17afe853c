"""``ssdkit bench``: simulator speed on four standard workloads of the mqsim-paper device.

Speeds are per wall second of the event loop (the result's ``wall_time_s``); building the
device (about 1 s for its 512 GiB of mapping tables) is reported apart as setup time.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from . import api
from ._native import __version__

PRESET = "mqsim-paper"

#: Why the write case is longer. In mqsim-paper each plane has 7 % spare blocks and GC starts
#: when free pages fall below 5 %, so about 2 % of the 67 M physical pages (~1.3 M 4 KiB page
#: writes) must be written before the first GC run.
WRITE_SCALE = 3
GC_NOTE = (
    f"the random-write case runs {WRITE_SCALE} x N requests because GC in this device "
    "starts only after ~1.3 M page writes"
)


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    overrides: dict[str, Any]
    scale: int = 1
    gc_expected: bool = False


CASES = (
    Case("randread-4k-qd1", "4 KiB random read, QD1", {"flow.0.queue_depth": 1}),
    Case("randread-4k-qd32", "4 KiB random read, QD32", {"flow.0.queue_depth": 32}),
    Case(
        "seqread-128k-qd32",
        "128 KiB sequential read, QD32",
        {"flow.0.queue_depth": 32, "flow.0.request_bytes": 131072, "flow.0.pattern": "sequential"},
    ),
    Case(
        "randwrite-4k-qd32",
        "4 KiB random write, QD32",
        {"flow.0.queue_depth": 32, "flow.0.read_fraction": 0.0},
        scale=WRITE_SCALE,
        gc_expected=True,
    ),
)

# Every case states the whole flow, so the preset's demo flow cannot leak into a figure.
_BASE = {"flow.0.read_fraction": 1.0, "flow.0.request_bytes": 4096, "flow.0.pattern": "random"}


@dataclass
class _Table:
    out: TextIO | None
    cols: list[tuple] = field(
        default_factory=lambda: [
            ("case", "<19"),
            ("requests", ">11"),
            ("requests/s", ">11"),
            ("events", ">12"),
            ("events/s", ">12"),
            ("wall s", ">8"),
            ("setup s", ">8"),
            ("GC runs", ">8"),
        ]
    )

    def line(self, *cells: Any) -> None:
        if self.out is not None:
            print("  ".join(f"{c:{fmt}}" for c, (_, fmt) in zip(cells, self.cols)), file=self.out, flush=True)

    def note(self, text: str = "") -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)


def run_bench(requests: int = 1_000_000, log: TextIO | None = sys.stdout) -> dict[str, Any]:
    """Runs every case with ``requests`` requests (the write case with ``WRITE_SCALE`` times
    as many), printing a row per case to ``log`` as it finishes; returns the figures."""
    t = _Table(log)
    t.note(f"ssdkit {__version__} bench: preset {PRESET}, N = {requests:,} requests per case")
    t.note(f"note: {GC_NOTE}")
    t.note()
    t.line(*(name for name, _ in t.cols))
    figures = []
    for case in CASES:
        n = requests * case.scale
        start = time.perf_counter()
        r = api.run(PRESET, overrides={**_BASE, **case.overrides, "flow.0.requests": n})
        total_s = time.perf_counter() - start
        wall = r.wall_time_s
        fig = {
            "case": case.name,
            "description": case.description,
            "requests": r.completed,
            "requests_per_wall_s": r.completed / wall if wall > 0 else 0.0,
            "events": r.events,
            "events_per_wall_s": r.events_per_wall_s,
            "wall_time_s": wall,
            "setup_s": max(total_s - wall, 0.0),
            "simulated_time_s": r.simulated_time_s,
            "gc_runs": r.device.ftl.gc_runs,
            "write_amplification": r.device.ftl.write_amplification,
        }
        figures.append(fig)
        t.line(
            case.name,
            f"{fig['requests']:,}",
            f"{fig['requests_per_wall_s']:,.0f}",
            f"{fig['events']:,}",
            f"{fig['events_per_wall_s']:,.0f}",
            f"{wall:.3f}",
            f"{fig['setup_s']:.3f}",
            f"{fig['gc_runs']:,}",
        )
    write = next(f for f, c in zip(figures, CASES) if c.gc_expected)
    gc_ran = write["gc_runs"] > 0
    rss = peak_rss_mib()
    t.note()
    t.note(
        f"GC ran in {write['case']} (gc_runs > 0): {'yes' if gc_ran else 'no'}"
        + ("" if gc_ran else " (too few writes to reach the GC threshold at this N)")
    )
    t.note(f"peak RSS: {rss:,.1f} MiB" if rss is not None else "peak RSS: unavailable on this platform")
    return {
        "ssdkit_version": __version__,
        "preset": PRESET,
        "requests": requests,
        "note": GC_NOTE,
        "cases": figures,
        "write_case_gc_ran": gc_ran,
        "peak_rss_mib": rss,
    }


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process in MiB, or None where it cannot be read."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is KiB on Linux and the BSDs but bytes on macOS.
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024
