"""``ssdkit probe``: microbenchmarks of a real drive, a file or an NBD export, after IBM's method
(El Maghraoui, Kandiraju et al., "Modeling and Simulating Flash Based Solid-State Disks for
Operating Systems": the four patterns at request sizes from 512 B to 1 MiB in an odd number of
zones of the device, direct I/O) plus a queue-depth sweep of 4 KiB random reads.

The measuring is fio's (Debian package fio): ``libaio`` with ``O_DIRECT`` on files and block
devices, its ``nbd`` engine on ``nbd://`` and ``nbd+unix://`` URIs. The points file holds every
measurement and the estimates drawn from them (docs/probe.md): IBM's T(n) = A + n B per pattern
(:func:`ssdkit.models.fit_ibm`), the 4 KiB read and write latency at queue depth 1 with their
standard errors, and the internal parallelism (Little's law at the IOPS plateau of the
queue-depth sweep) with the knee's queue depth.

Writes destroy data: a block device, an existing file or an NBD export is written only with
``destructive=True``; a file the probe creates itself (a path that does not exist yet) is
filled, measured and removed at the end.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import models, outputs
from ._native import SsdkitError

#: IBM's range of request sizes, 512 B to 1 MiB, with 4 KiB (a page, the latency estimates'
#: size) and powers of four above it.
DEFAULT_SIZES: tuple[int, ...] = (512, 4096, 16384, 65536, 262144, 1048576)
DEFAULT_QUEUE_DEPTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
#: The page-size test's sizes: 512 B to 32 KiB, the pages of NAND from SLC to QLC.
DEFAULT_PAGE_SIZES: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768)
PATTERNS = ("seq-read", "rand-read", "seq-write", "rand-write")
_FIO_RW = {"seq-read": "read", "rand-read": "randread", "seq-write": "write", "rand-write": "randwrite"}
FORMAT = "ssdkit-probe/1"


class ProbeError(SsdkitError):
    """A probe that cannot run: a missing target or tool, a refused write, fio failing."""


@dataclass
class Target:
    """What is probed: ``kind`` is ``file``, ``block`` or ``nbd``; ``created`` when the probe
    made the file and removes it at the end."""

    name: str
    kind: str
    size_bytes: int
    created: bool = False

    def fio_args(self) -> list[str]:
        if self.kind == "nbd":
            return ["--ioengine=nbd", f"--uri={self.name}"]
        return ["--ioengine=libaio", "--direct=1", f"--filename={self.name}"]


@dataclass
class Plan:
    """What to measure. ``seconds`` is each run's length; ``zones`` an odd number of equal
    regions of the target (IBM's method, to keep the zones' effects from correlating),
    ``zone_bytes`` the span of each."""

    sizes: Sequence[int] = DEFAULT_SIZES
    queue_depths: Sequence[int] = DEFAULT_QUEUE_DEPTHS
    zones: int = 3
    zone_bytes: int = 64 << 20
    seconds: float = 1.0
    patterns: Sequence[str] = PATTERNS
    #: The page-size test: random reads at each size, ``page_iodepth`` deep (empty: skipped).
    page_sizes: Sequence[int] = DEFAULT_PAGE_SIZES
    page_iodepth: int = 64
    #: Bytes of each sustained write (sequential, then random), 0 to skip them; None: the
    #: target's size, at most 1 GiB.
    sustained_bytes: int | None = None
    #: Longest time of each sustained write, seconds: it stops at ``sustained_bytes`` or here.
    sustained_seconds: float = 600.0
    #: Which sustained writes run, of ``seq-write`` (the cache's cliff) and ``rand-write`` (GC).
    sustained_patterns: Sequence[str] = ("seq-write", "rand-write")
    #: Interval of the sustained writes' bandwidth log.
    log_ms: int = 100
    #: Time of the transport (an NBD connection, ...) measured apart, removed from the
    #: latencies the estimates use (the points keep what fio measured).
    transport_us: float = 0.0

    def sustained(self, target: Target) -> int:
        if not any(p.endswith("write") for p in self.patterns):
            return 0
        if self.sustained_bytes is None:
            return min(target.size_bytes, 1 << 30) // (1 << 20) * (1 << 20)
        return self.sustained_bytes

    def check(self, target: Target) -> None:
        if self.zones < 1 or self.zones % 2 == 0:
            raise ProbeError(f"--zones must be an odd number of at least 1, got {self.zones}")
        if not self.sizes or any(s < 512 or s % 512 for s in self.sizes):
            raise ProbeError(f"request sizes must be multiples of 512 bytes, got {list(self.sizes)}")
        if not self.queue_depths or any(q < 1 or q > 1024 for q in self.queue_depths):
            raise ProbeError(f"queue depths must lie in 1..1024, got {list(self.queue_depths)}")
        if not 0.05 <= self.seconds <= 3600:
            raise ProbeError(f"--seconds must lie in [0.05, 3600], got {self.seconds}")
        unknown = sorted(set(self.patterns) - set(PATTERNS))
        if unknown or not self.patterns:
            raise ProbeError(f"unknown patterns {unknown}; choose from {', '.join(PATTERNS)}")
        if self.zone_bytes < max(self.sizes):
            raise ProbeError(f"a zone ({self.zone_bytes} bytes) must hold the largest request ({max(self.sizes)})")
        if any(b < 512 or b % 512 for b in self.page_sizes):
            raise ProbeError(f"--page-sizes must be multiples of 512 bytes, got {list(self.page_sizes)}")
        if self.page_sizes and len(self.page_sizes) < 2:
            raise ProbeError("--page-sizes needs two or more sizes (or none, to skip the page-size test)")
        if not 1 <= self.page_iodepth <= 1024:
            raise ProbeError(f"--page-iodepth must lie in 1..1024, got {self.page_iodepth}")
        if self.page_sizes and self.zone_bytes < max(self.page_sizes):
            raise ProbeError(f"a zone ({self.zone_bytes} bytes) must hold the largest page-test size")
        sb = self.sustained(target)
        if sb and (sb < (1 << 20) or sb % (1 << 20)):
            raise ProbeError(f"--sustained-bytes must be a whole number of MiB, at least 1 MiB (or 0: none), got {sb}")
        if not 0.1 <= self.sustained_seconds <= 86400:
            raise ProbeError(f"--sustained-seconds must lie in [0.1, 86400], got {self.sustained_seconds}")
        bad = sorted(set(self.sustained_patterns) - {"seq-write", "rand-write"})
        if bad:
            raise ProbeError(f"sustained patterns {bad} are not seq-write or rand-write")
        if not 10 <= self.log_ms <= 60000:
            raise ProbeError(f"--log-ms must lie in 10..60000, got {self.log_ms}")
        if not (self.transport_us >= 0 and math.isfinite(self.transport_us)):
            raise ProbeError(f"--transport-us must be a number >= 0, got {self.transport_us}")
        if self.zones * self.zone_bytes > target.size_bytes:
            raise ProbeError(
                f"{self.zones} zones of {self.zone_bytes} bytes do not fit in {target.name} ({target.size_bytes} bytes):"
                " lower --zones or --zone-bytes"
            )

    def zone_offsets(self, target: Target) -> list[int]:
        """Start of each zone: spread evenly from the start to the end of the target, aligned
        to 1 MiB."""
        if self.zones == 1:
            return [0]
        room = target.size_bytes - self.zone_bytes
        return [(room * i // (self.zones - 1)) // (1 << 20) * (1 << 20) for i in range(self.zones)]


def open_target(name: str, *, destructive: bool, writes: bool, create_bytes: int = 1 << 30) -> Target:
    """The target named ``name``: an NBD URI, a block device, an existing file, or a new file of
    ``create_bytes`` (made by the probe). Refuses, before anything is measured, writes to what
    the probe did not create without ``destructive``, and anything else."""
    if name.startswith(("nbd://", "nbd+unix://", "nbds://", "nbds+unix://")):
        if writes and not destructive:
            raise ProbeError(f"{name}: writing would destroy the export's data; give --destructive, or --reads-only")
        return Target(name, "nbd", _nbd_size(name))
    try:
        st = os.stat(name)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(name))
        if not os.path.isdir(folder):
            raise ProbeError(f"{name}: no such file, and its folder {folder} does not exist") from None
        if create_bytes < (1 << 20):
            raise ProbeError(f"--create-bytes must be at least 1 MiB, got {create_bytes}")
        return Target(name, "file", create_bytes, created=True)
    except OSError as e:
        raise ProbeError(f"{name}: {e.strerror}") from None
    if stat.S_ISBLK(st.st_mode):
        kind, size = "block", _block_size(name)
    elif stat.S_ISREG(st.st_mode):
        kind, size = "file", st.st_size
    else:
        raise ProbeError(f"{name}: not a regular file, a block device or an NBD URI (nbd://, nbd+unix://)")
    if not os.access(name, os.R_OK | (os.W_OK if writes else 0)):
        raise ProbeError(f"{name}: permission denied")
    if writes and not destructive:
        raise ProbeError(
            f"{name}: writing would destroy the data on this {'block device' if kind == 'block' else 'existing file'};"
            " give --destructive, --reads-only, or a path that does not exist yet (the probe then creates it)"
        )
    return Target(name, kind, size)


def _block_size(path: str) -> int:
    with open(path, "rb") as f:
        return f.seek(0, os.SEEK_END)


def _nbd_size(uri: str) -> int:
    exe = shutil.which("nbdinfo")
    if exe is None:
        raise ProbeError("probing an NBD export needs nbdinfo (Debian package libnbd-bin)")
    p = subprocess.run([exe, "--size", uri], capture_output=True, text=True, check=False)
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        raise ProbeError(f"{uri}: cannot read the export's size: {p.stderr.strip() or p.stdout.strip()}")
    return int(p.stdout.strip())


@dataclass
class Probe:
    target: Target
    plan: Plan
    points: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False

    def runs(self) -> list[dict[str, Any]]:
        """Every run, in order: IBM's patterns x sizes x zones at queue depth 1, then the
        queue-depth sweep of 4 KiB random reads in the middle zone."""
        zones = self.plan.zone_offsets(self.target)
        out = []
        for pattern in self.plan.patterns:
            for size in self.plan.sizes:
                for z, off in enumerate(zones):
                    out.append({"test": "ibm", "pattern": pattern, "request_bytes": size, "iodepth": 1, "zone": z})
        mid = len(zones) // 2
        for qd in self.plan.queue_depths:
            out.append({"test": "qd", "pattern": "rand-read", "request_bytes": 4096, "iodepth": qd, "zone": mid})
        for size in self.plan.page_sizes:
            out.append(
                {
                    "test": "page",
                    "pattern": "rand-read",
                    "request_bytes": size,
                    "iodepth": self.plan.page_iodepth,
                    "zone": mid,
                }
            )
        for r in out:
            r["offset_bytes"] = zones[r["zone"]]
        sb = self.plan.sustained(self.target)
        if sb:
            # Over the whole target, sequentially (a write cache fills: its cliff), then at random
            # (the free blocks run out: GC's onset).
            for pattern, size in (("seq-write", 128 << 10), ("rand-write", 4096)):
                if pattern not in self.plan.sustained_patterns:
                    continue
                out.append(
                    {"test": "sustained", "pattern": pattern, "request_bytes": size, "iodepth": 32, "zone": None}
                    | {"offset_bytes": 0, "bytes": sb}
                )
        return out

    def measure(self, run: dict[str, Any], fio: str) -> dict[str, Any]:
        # --thread: the job runs in fio's own process, so stopping fio (Ctrl-C) leaves no job
        # process behind.
        args = [fio, "--name=probe", "--thread", *self.target.fio_args(), f"--rw={_FIO_RW[run['pattern']]}"]
        args += [f"--bs={run['request_bytes']}", f"--iodepth={run['iodepth']}", f"--offset={run['offset_bytes']}"]
        logdir = None
        if run["test"] == "sustained":
            span = self.target.size_bytes // run["request_bytes"] * run["request_bytes"]
            logdir = tempfile.mkdtemp(prefix="ssdkit-probe-")
            args += [f"--size={span}", f"--io_size={run['bytes']}", f"--log_avg_msec={self.plan.log_ms}"]
            args += [
                f"--write_bw_log={os.path.join(logdir, 'probe')}",
                f"--runtime={_fio_ms(self.plan.sustained_seconds)}",
            ]
        else:
            args += [f"--size={self.plan.zone_bytes}", f"--runtime={_fio_ms(self.plan.seconds)}", "--time_based"]
        args += ["--norandommap", "--randrepeat=0", "--output-format=json", "--allow_file_create=0"]
        try:
            p = subprocess.run(args, capture_output=True, text=True, check=False)
            series = _bw_log(logdir) if logdir is not None and p.returncode == 0 else None
        finally:
            if logdir is not None:
                shutil.rmtree(logdir, ignore_errors=True)
        if p.returncode in (-signal.SIGINT, 128 + signal.SIGINT):
            # A terminal's Ctrl-C reaches fio too, which may end before Python sees it.
            raise KeyboardInterrupt
        if p.returncode != 0:
            raise ProbeError(f"fio failed on {self.target.name} ({' '.join(args[2:])}): {p.stderr.strip()[-1500:]}")
        try:
            [job] = json.loads(p.stdout[p.stdout.index("{") :])["jobs"]
        except (ValueError, KeyError) as e:
            raise ProbeError(f"fio's output could not be read ({e}): {p.stdout[-500:]}") from None
        side = job["write" if run["pattern"].endswith("write") else "read"]
        ios = int(side["total_ios"])
        if ios == 0:
            raise ProbeError(f"fio completed no I/O on {self.target.name} for {run}")
        lat = side["lat_ns"]
        out = {
            **run,
            "ios": ios,
            "io_bytes": int(side.get("io_bytes", 0)),
            "iops": float(side["iops"]),
            "bytes_per_s": float(side["bw_bytes"]),
            "latency_us": float(lat["mean"]) / 1e3,
            "latency_stdev_us": float(lat["stddev"]) / 1e3,
        }
        if series is not None:
            out["bandwidth_log"] = {"interval_ms": self.plan.log_ms, "series": series}
        return out

    def run(self, progress: Callable[[int, int, dict[str, Any]], None] | None = None) -> None:
        """Measures every run; on Ctrl-C keeps what was measured and marks the probe
        interrupted."""
        fio = shutil.which("fio")
        if fio is None:
            raise ProbeError("ssdkit probe needs fio (Debian package fio)")
        if self.target.kind == "nbd":
            _check_fio_nbd(fio)
        runs = self.runs()
        try:
            if self.target.created:
                self._fill(fio)
            for i, r in enumerate(runs):
                if progress is not None:
                    progress(i, len(runs), r)
                self.points.append(self.measure(r, fio))
        except KeyboardInterrupt:
            self.interrupted = True

    def _fill(self, fio: str) -> None:
        """Writes the new file whole, so reads find data rather than holes."""
        args = [fio, "--name=fill", "--thread", f"--filename={self.target.name}", f"--size={self.target.size_bytes}"]
        args += ["--rw=write", "--bs=1m", "--ioengine=libaio", "--direct=1", "--iodepth=8", "--output-format=json"]
        p = subprocess.run(args, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise ProbeError(f"fio could not create {self.target.name}: {p.stderr.strip()[-1500:]}")

    def document(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "target": {"name": self.target.name, "kind": self.target.kind, "size_bytes": self.target.size_bytes},
            "plan": {
                "sizes": list(self.plan.sizes),
                "queue_depths": list(self.plan.queue_depths),
                "zones": self.plan.zones,
                "zone_bytes": self.plan.zone_bytes,
                "seconds": self.plan.seconds,
                "patterns": list(self.plan.patterns),
                "page_sizes": list(self.plan.page_sizes),
                "page_iodepth": self.plan.page_iodepth,
                "sustained_bytes": self.plan.sustained(self.target),
                "sustained_patterns": list(self.plan.sustained_patterns),
                "sustained_seconds": self.plan.sustained_seconds,
                "log_ms": self.plan.log_ms,
                "transport_us": self.plan.transport_us,
            },
            "interrupted": self.interrupted,
            "points": self.points,
            "estimates": estimates(self.points, transport_us=self.plan.transport_us),
        }


def _check_fio_nbd(fio: str) -> None:
    p = subprocess.run([fio, "--enghelp"], capture_output=True, text=True, check=False)
    if "nbd" not in p.stdout.split():
        raise ProbeError("this fio has no nbd ioengine (Debian's fio has it, through libnbd)")


def _bw_log(folder: str) -> list[list[float]]:
    """fio's averaged bandwidth log (``time_ms, KiB/s, direction, bs, offset``) as ``[end of the
    interval in ms, bytes per second]`` pairs."""
    out = []
    for name in sorted(os.listdir(folder)):
        if "_bw" in name and name.endswith(".log"):
            with open(os.path.join(folder, name)) as f:
                for line in f:
                    fields = line.split(",")
                    if len(fields) >= 2 and fields[1].strip():
                        out.append([float(fields[0]), float(fields[1]) * 1024])
    return out


def _mean_with_error(points: list[dict[str, Any]], transport_us: float = 0.0) -> dict[str, float] | None:
    """Mean latency over runs, weighted by their I/Os, less the transport, and its standard
    error."""
    n = sum(p["ios"] for p in points)
    if not n:
        return None
    mean = sum(p["latency_us"] * p["ios"] for p in points) / n
    # Within-run variance plus the spread of the run means about the pooled mean.
    var = sum(p["ios"] * (p["latency_stdev_us"] ** 2 + (p["latency_us"] - mean) ** 2) for p in points) / n
    return {"value_us": mean - transport_us, "stderr_us": math.sqrt(var / n), "ios": n}


#: A level change counts as a cliff when the rate after it is below this share of the rate before.
CLIFF_SHARE = 0.7


def _fio_ms(seconds: float) -> str:
    """A duration for fio's --runtime in whole milliseconds: fio takes no fraction of a second
    (fio 3.33 ran `--runtime=0.2` for 22 ms and, not time-bounded, wrote a 16 MiB zone whole)."""
    return f"{max(1, round(seconds * 1000))}ms"


def cliff(log: Sequence[Sequence[float]]) -> dict[str, Any] | None:
    """The one step down in a bandwidth log (``[end of interval in ms, bytes per second]``
    pairs) that best splits it (least squares over two constant levels, each interval weighted
    by its length), if the level after is below :data:`CLIFF_SHARE` of the level before: where
    it starts, both levels, the bytes written before it and the resolution (the bytes of the
    interval at the step)."""
    n = len(log)
    if n < 4:
        return None
    ends = [t / 1e3 for t, _ in log]
    dur = [max(1e-6, b - a) for a, b in zip([0.0, *ends[:-1]], ends)]
    rate = [v for _, v in log]
    # Prefix sums of weights, bytes and weighted squares: a segment's squared error in O(1).
    w, x, xx = [0.0], [0.0], [0.0]
    for d, v in zip(dur, rate):
        w.append(w[-1] + d)
        x.append(x[-1] + d * v)
        xx.append(xx[-1] + d * v * v)

    def sse(a: int, b: int) -> float:
        return xx[b] - xx[a] - (x[b] - x[a]) ** 2 / (w[b] - w[a])

    k = min(range(2, n - 1), key=lambda k: sse(0, k) + sse(k, n))
    before, after = x[k] / w[k], (x[n] - x[k]) / (w[n] - w[k])
    if not after < CLIFF_SHARE * before:
        return None
    return {
        "interval": k,
        "seconds": w[k],
        "bytes_before": x[k],
        "bytes_per_s_before": before,
        "bytes_per_s_after": after,
        "resolution_bytes": dur[k] * before,
    }


def _page_size(pg: list[dict[str, Any]]) -> dict[str, Any]:
    """The page: random reads deep enough to keep every die busy cost one page read each up to
    the page size, two from twice it, so IOPS holds level up to the page and then falls."""
    pg = sorted(pg, key=lambda p: p["request_bytes"])
    if len(pg) < 2:
        return {"error": "needs the page-size test (two or more --page-sizes)"}
    cost = [pg[0]["iops"] / p["iops"] for p in pg]
    table = {str(p["request_bytes"]): c for p, c in zip(pg, cost)}
    for i in range(len(pg) - 1):
        if cost[i] <= 1.25 and cost[i + 1] / cost[i] >= 1.5:
            return {
                "value_bytes": pg[i]["request_bytes"],
                "range_bytes": [pg[i]["request_bytes"], pg[i + 1]["request_bytes"]],
                "cost": table,
                "method": "largest request size whose random reads at depth cost no more than the smallest's "
                "(within 25 %), the next size 1.5 times or more",
            }
    return {
        "error": "no step in the cost of random reads between the sizes measured: the page is larger than the "
        "largest size, or transfers rather than cell reads limit the device",
        "cost": table,
    }


def estimates(points: list[dict[str, Any]], transport_us: float = 0.0) -> dict[str, Any]:
    """What the points say about the device (each with its uncertainty, or a reason it could
    not be estimated). ``transport_us`` is removed from the latencies first."""
    est: dict[str, Any] = {"transport_us": transport_us}
    ibm = [{**p, "latency_us": p["latency_us"] - transport_us} for p in points if p["test"] == "ibm"]
    fits = {}
    for pattern in PATTERNS:
        ps = [p for p in ibm if p["pattern"] == pattern]
        try:
            f = models.fit_ibm(ps) if ps else {}
        except ValueError as e:
            fits[pattern] = {"error": str(e)}
            continue
        for k, v in f.items():
            fits[k] = {
                "a_us": v.a_us,
                "b_us_per_byte": v.b_us_per_byte,
                "se_a_us": v.se_a_us,
                "se_b_us_per_byte": v.se_b_us_per_byte,
                "ci95_a_us": list(v.ci_a_us),
                "ci95_b_us_per_byte": list(v.ci_b_us_per_byte),
                "r2": v.r2,
                "points": v.points,
            }
    est["ibm_linear_model"] = fits
    for name, pattern in (("read_latency_4k_qd1", "rand-read"), ("write_latency_4k_qd1", "rand-write")):
        m = _mean_with_error(
            [
                p
                for p in points
                if p["test"] in ("ibm", "qd")
                and p["pattern"] == pattern
                and p["request_bytes"] == 4096
                and p["iodepth"] == 1
            ],
            transport_us,
        )
        est[name] = m if m is not None else {"error": f"no 4 KiB {pattern} point at queue depth 1"}
    qd = sorted((p for p in points if p["test"] == "qd"), key=lambda p: p["iodepth"])
    if len(qd) >= 2 and qd[0]["iodepth"] == 1:
        peak = max(qd, key=lambda p: p["iops"])
        knee = next(p for p in qd if p["iops"] >= 0.9 * peak["iops"])
        # Little's law: requests in service at the plateau = IOPS x the unloaded service time.
        lat1 = qd[0]["latency_us"] - transport_us
        par = peak["iops"] * lat1 / 1e6
        rel = math.hypot(qd[0]["latency_stdev_us"] / math.sqrt(qd[0]["ios"]) / lat1, 1 / math.sqrt(peak["ios"]))
        est["parallelism"] = {
            "value": par,
            "stderr": par * rel,
            "peak_iops": peak["iops"],
            "peak_iodepth": peak["iodepth"],
            "knee_iodepth": knee["iodepth"],
            "method": "peak IOPS of 4 KiB random reads x their latency at queue depth 1 (Little's law)",
        }
    else:
        est["parallelism"] = {"error": "needs the queue-depth sweep, starting at 1, with 2 or more depths"}
    est["page_size"] = _page_size([p for p in points if p["test"] == "page"])
    sus = {p["pattern"]: p for p in points if p["test"] == "sustained" and "bandwidth_log" in p}
    for name, pattern in (("write_cache", "seq-write"), ("gc_onset", "rand-write")):
        p = sus.get(pattern)
        if p is None:
            est[name] = {"error": f"needs the sustained {pattern} (--sustained-bytes, writes allowed)"}
            continue
        n = len(p["bandwidth_log"]["series"])
        if n < 4:
            est[name] = {
                "error": f"fio logged {n} intervals of {p['bandwidth_log']['interval_ms']} ms in the sustained {pattern}"
                " (4 or more needed): raise --sustained-bytes or --sustained-seconds, or lower --log-ms"
            }
            continue
        c = cliff(p["bandwidth_log"]["series"])
        if c is None:
            est[name] = {
                "none_within_bytes": p["io_bytes"],
                "bytes_per_s": p["bytes_per_s"],
                "note": f"no drop below {CLIFF_SHARE:.0%} of the starting rate in {p['io_bytes']} bytes of {pattern}",
            }
        elif name == "write_cache":
            # A cache that writes back only when full (ssdkit's and MQSim's) took every byte
            # before the cliff; one that drains while it fills, at the rate after the cliff,
            # took that much less: the range between them.
            est[name] = {
                "value_bytes": c["bytes_before"],
                "lower_bytes": max(0.0, c["bytes_before"] - c["bytes_per_s_after"] * c["seconds"]),
                "resolution_bytes": c["resolution_bytes"],
                **c,
                "method": "bytes written before the sustained sequential write's cliff (at least `lower_bytes` if the "
                "cache drains while it fills)",
            }
        else:
            est[name] = {
                "value_bytes": c["bytes_before"],
                "resolution_bytes": c["resolution_bytes"],
                **c,
                "method": "bytes of sustained random writes before their rate drops (free blocks run out)",
            }
    est["program_latency"] = _program_latency(est, sus.get("seq-write"))
    return est


def _program_latency(est: dict[str, Any], seq: dict[str, Any] | None) -> dict[str, Any]:
    """A page program's time: with a write cache (its cliff found) from the sequential rate
    after the cliff, every parallel unit programming one page at a time; without one, the
    4 KiB write latency at queue depth 1."""
    wc = est.get("write_cache", {})
    par, page = est.get("parallelism", {}), est.get("page_size", {})
    if "value_bytes" in wc and "value" in par and "value_bytes" in page:
        v = par["value"] * page["value_bytes"] / wc["bytes_per_s_after"] * 1e6
        return {
            "value_us": v,
            "stderr_us": v * par["stderr"] / par["value"],
            "method": "parallelism x page size / the sustained sequential write rate after the cache's cliff",
        }
    w = est.get("write_latency_4k_qd1", {})
    if "value_us" in w:
        return {**w, "method": "4 KiB random write latency at queue depth 1 (no write cache seen)"}
    return {"error": "needs 4 KiB random writes at queue depth 1 or a sustained write with a cache's cliff"}


def probe(
    target: str,
    output: os.PathLike[str] | str,
    *,
    plan: Plan | None = None,
    destructive: bool = False,
    create_bytes: int = 1 << 30,
    progress: Callable[[int, int, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Probes ``target`` and writes the points file ``output`` (also when interrupted by Ctrl-C,
    with ``interrupted`` set). Returns the document. See the module's notes."""
    plan = plan or Plan()
    writes = any(p.endswith("write") for p in plan.patterns)
    t = open_target(target, destructive=destructive, writes=writes, create_bytes=create_bytes)
    plan.check(t)
    if t.created and os.path.realpath(output) == os.path.realpath(target):
        raise ProbeError(f"the points file {output} is the probe target {target}: give another -o")
    inputs = [] if t.kind == "nbd" or t.created else [("probe target", target)]
    outputs.check([("points file", output)], inputs)
    pr = Probe(t, plan)
    try:
        pr.run(progress)
    finally:
        if t.created:
            _remove(t.name)
    doc = pr.document()
    outputs.write(output, json.dumps(doc, indent=2) + "\n", "points file")
    if pr.interrupted:
        raise KeyboardInterrupt
    return doc


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
