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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import models, outputs
from ._native import SsdkitError

#: IBM's range of request sizes, 512 B to 1 MiB, with 4 KiB (a page, the latency estimates'
#: size) and powers of four above it.
DEFAULT_SIZES: tuple[int, ...] = (512, 4096, 16384, 65536, 262144, 1048576)
DEFAULT_QUEUE_DEPTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
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
        for r in out:
            r["offset_bytes"] = zones[r["zone"]]
        return out

    def measure(self, run: dict[str, Any], fio: str) -> dict[str, Any]:
        # --thread: the job runs in fio's own process, so stopping fio (Ctrl-C) leaves no job
        # process behind.
        args = [fio, "--name=probe", "--thread", *self.target.fio_args(), f"--rw={_FIO_RW[run['pattern']]}"]
        args += [f"--bs={run['request_bytes']}", f"--iodepth={run['iodepth']}", f"--offset={run['offset_bytes']}"]
        args += [f"--size={self.plan.zone_bytes}", f"--runtime={self.plan.seconds}", "--time_based"]
        args += ["--norandommap", "--randrepeat=0", "--output-format=json", "--allow_file_create=0"]
        p = subprocess.run(args, capture_output=True, text=True, check=False)
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
        return {
            **run,
            "ios": ios,
            "iops": float(side["iops"]),
            "bytes_per_s": float(side["bw_bytes"]),
            "latency_us": float(lat["mean"]) / 1e3,
            "latency_stdev_us": float(lat["stddev"]) / 1e3,
        }

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
            },
            "interrupted": self.interrupted,
            "points": self.points,
            "estimates": estimates(self.points),
        }


def _check_fio_nbd(fio: str) -> None:
    p = subprocess.run([fio, "--enghelp"], capture_output=True, text=True, check=False)
    if "nbd" not in p.stdout.split():
        raise ProbeError("this fio has no nbd ioengine (Debian's fio has it, through libnbd)")


def _mean_with_error(points: list[dict[str, Any]]) -> dict[str, float] | None:
    """Mean latency over runs, weighted by their I/Os, and its standard error."""
    n = sum(p["ios"] for p in points)
    if not n:
        return None
    mean = sum(p["latency_us"] * p["ios"] for p in points) / n
    # Within-run variance plus the spread of the run means about the pooled mean.
    var = sum(p["ios"] * (p["latency_stdev_us"] ** 2 + (p["latency_us"] - mean) ** 2) for p in points) / n
    return {"value_us": mean, "stderr_us": math.sqrt(var / n), "ios": n}


def estimates(points: list[dict[str, Any]]) -> dict[str, Any]:
    """What the points say about the device (each with its uncertainty, or a reason it could
    not be estimated)."""
    est: dict[str, Any] = {}
    ibm = [p for p in points if p["test"] == "ibm"]
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
            [p for p in points if p["pattern"] == pattern and p["request_bytes"] == 4096 and p["iodepth"] == 1]
        )
        est[name] = m if m is not None else {"error": f"no 4 KiB {pattern} point at queue depth 1"}
    qd = sorted((p for p in points if p["test"] == "qd"), key=lambda p: p["iodepth"])
    if len(qd) >= 2 and qd[0]["iodepth"] == 1:
        peak = max(qd, key=lambda p: p["iops"])
        knee = next(p for p in qd if p["iops"] >= 0.9 * peak["iops"])
        # Little's law: requests in service at the plateau = IOPS x the unloaded service time.
        par = peak["iops"] * qd[0]["latency_us"] / 1e6
        rel = math.hypot(
            qd[0]["latency_stdev_us"] / math.sqrt(qd[0]["ios"]) / qd[0]["latency_us"],
            1 / math.sqrt(peak["ios"]),
        )
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
    return est


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
