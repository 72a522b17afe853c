"""fio job files as ssdkit workloads.

``fio_to_toml(job)`` turns each job section of a fio job file (INI syntax: ``[global]`` and job
sections of ``key=value`` lines and bare flags) into ``[[flow]]`` tables that replace the flows
of a device configuration (a preset, a TOML file or TOML text; default ``mqsim-paper``).

The conversion is exact or refused: an option ssdkit cannot reproduce, or a value it cannot
represent, raises :class:`FioError` naming the file, the line, the job section and the option,
and listing the supported options. fio's own rules are followed where they surprise: sizes use
``kb_base=1024`` (``4k`` = ``4KB`` = 4096, but ``4KiB`` = 4000), a job stops after ``size``
bytes unless ``time_based`` is set, ``iodepth`` has no effect with a synchronous ioengine
(fio's default ``psync``), ``bsrange`` draws multiples of its smallest size. docs/fio.md has the
tables. Differences that remain (fio's random map, its read/write batching) are noted as
``# note:`` comments in the generated TOML.

The TOML writer, the ``--set`` override mirror and the device-capacity helper it shares with
:mod:`ssdkit.mqsim` are in :mod:`ssdkit._tomltext`.
"""

from __future__ import annotations

import math
import os
import re

from . import api
from ._lazy import _Lazy
from ._native import ConfigError
from ._record import field, record
from ._tomltext import apply_override_list, base_source, device_capacity, override_list, toml_dumps

# TOML is read only to convert a job onto a base file: tomllib (4 ms) is imported then.
_toml = _Lazy("_toml")

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Union

    JobArg = Union[str, "os.PathLike[str]"]

SECTOR = 512

__all__ = ["SUPPORTED_OPTIONS", "FioConversion", "FioError", "convert_fio", "fio_to_toml"]


class FioError(ConfigError):
    """A fio job file ssdkit cannot reproduce exactly (or cannot read)."""


# Canonical name -> what it does; the aliases fio accepts map onto these.
SUPPORTED_OPTIONS: dict[str, str] = {
    "rw": "I/O pattern: read, write, randread, randwrite, rw/readwrite, randrw, trim, randtrim",
    "rwmixread": "percentage of reads in a mixed job",
    "rwmixwrite": "percentage of writes in a mixed job",
    "bs": "block size (per direction: read,write,trim)",
    "bssplit": "block size distribution, e.g. 4k/70:64k/30",
    "bsrange": "block size range, e.g. 4k-64k (multiples of the smallest)",
    "ba": "offset alignment of random I/O (default: the smallest block size)",
    "iodepth": "outstanding I/Os (closed loop queue depth)",
    "ioengine": "libaio, io_uring, io_uring_cmd, posixaio (queue depth iodepth) or sync engines (depth 1)",
    "numjobs": "clones of the job, one flow each",
    "size": "bytes (or % of the device) of the job's region; also its byte limit",
    "io_size": "bytes to transfer (or % of size) instead of size",
    "offset": "start of the region (bytes or %)",
    "offset_increment": "extra offset per clone (numjobs)",
    "number_ios": "stop after this many I/Os",
    "runtime": "stop after this time (default unit s)",
    "time_based": "run for runtime, looping over the region",
    "loops": "repeat the job's I/O this many times",
    "startdelay": "start the job this long after the others (default unit s)",
    "random_distribution": "random, zipf[:theta], pareto[:h], normal[:dev]",
    "rate_iops": "open-loop arrivals at this rate (single-direction jobs)",
    "rate_process": "linear (fixed gaps) or poisson",
    "kb_base": "1024 (default) or 1000",
    "fsync": "an NVMe Flush after every N writes (write-only jobs): flow.flush_every",
    "fdatasync": "as fsync (a block device has no metadata to skip)",
    "name": "job name",
    "description": "free text (ignored)",
    "filename": "the device (ignored: the simulated device)",
    "direct": "ignored: ssdkit simulates the device itself",
    "buffered": "ignored: ssdkit simulates the device itself",
    "norandommap": "random offsets drawn with replacement (ssdkit always does)",
    "randrepeat": "ignored: ssdkit runs are reproducible from run.seed",
    "group_reporting": "ignored (ssdkit reports per flow and for the device)",
    "thread": "ignored",
}

_ALIASES = {
    "readwrite": "rw",
    "blocksize": "bs",
    "blocksize_range": "bsrange",
    "blockalign": "ba",
    "io_limit": "io_size",
    "timeout": "runtime",
}

# Options ssdkit refuses with a specific reason (anything else unknown gets the generic one).
_REFUSED_REASONS = {
    "stonewall": "fio runs the jobs after a stonewall one group after another; ssdkit runs all flows at once",
    "wait_for": "fio starts this job when another ends; ssdkit runs all flows at once",
    "new_group": "reporting groups follow stonewall, which ssdkit cannot reproduce",
    "wait_for_previous": "jobs run one after another in fio; ssdkit runs all flows at once",
    "thinktime": "ssdkit flows have no think time",
    "thinktime_blocks": "ssdkit flows have no think time",
    "thinktime_spin": "ssdkit flows have no think time",
    "verify": "ssdkit moves no data, so there is nothing to verify",
    "do_verify": "ssdkit moves no data, so there is nothing to verify",
    "end_fsync": "ssdkit has no flush commands",
    "fsync_on_close": "ssdkit has no flush commands",
    "sync": "ssdkit has no flush commands or synchronous-write flags",
    "zonemode": "zoned I/O is not modelled",
    "zonesize": "zoned I/O is not modelled",
    "zonerange": "zoned I/O is not modelled",
    "zoneskip": "zoned I/O is not modelled",
    "ramp_time": "ssdkit results have no warm-up exclusion (precondition the device instead)",
    "rate": "bandwidth caps are not supported; use rate_iops",
    "rate_min": "minimum rates are not supported",
    "rate_iops_min": "minimum rates are not supported",
    "rate_cycle": "minimum rates are not supported",
    "nrfiles": "ssdkit simulates one block device, not files",
    "filesize": "ssdkit simulates one block device, not files",
    "directory": "ssdkit simulates one block device, not files",
    "opendir": "ssdkit simulates one block device, not files",
    "percentage_random": "jobs mixing random and sequential offsets are not supported",
    "bs_unaligned": "ssdkit request sizes are whole sectors",
    "blocksize_unaligned": "ssdkit request sizes are whole sectors",
    "offset_align": "not supported",
    "random_generator": "ssdkit draws from its own generator seeded by run.seed",
    "randseed": "ssdkit draws from its own generator; use --seed (run.seed)",
    "loop": "did you mean loops?",
    "iodepth_batch": "submission batching is not modelled",
    "iodepth_batch_submit": "submission batching is not modelled",
    "iodepth_batch_complete": "submission batching is not modelled",
    "iodepth_batch_complete_min": "submission batching is not modelled",
    "iodepth_batch_complete_max": "submission batching is not modelled",
    "iodepth_low": "submission batching is not modelled",
    "io_submit_mode": "submission batching is not modelled",
    "steadystate": "steady-state detection is not supported",
    "ss": "steady-state detection is not supported",
    "trim_percentage": "verify-trim is not supported",
    "fill_device": 'filling the device is what precondition.mode = "sequential" does',
    "file_append": "ssdkit simulates one block device, not files",
    "exitall": "ssdkit flows stop on their own limits",
    "exitall_on_error": "ssdkit flows stop on their own limits",
    "continue_on_error": "simulated I/O does not fail",
    "flow": "fio's flow-based mixing of jobs is not supported",
    "flow_id": "fio's flow-based mixing of jobs is not supported",
    "dedupe_percentage": "ssdkit has no data content",
    "buffer_compress_percentage": "ssdkit has no data content",
    "write_iolog": "use a trace flow to replay an iolog",
    "read_iolog": "use a trace flow (trace_format fio_v2/fio_v3) to replay an iolog",
    "replay_no_stall": "use a trace flow to replay an iolog",
}

_ASYNC_ENGINES = {"libaio", "io_uring", "io_uring_cmd", "posixaio", "windowsaio", "solarisaio"}
_SYNC_ENGINES = {"sync", "psync", "vsync", "pvsync", "pvsync2"}
_DEFAULT_ENGINE = "psync"  # fio's default ioengine on Linux

# rw value -> (read, write, trim) direction used, sequential?
_RW_MODES = {
    "read": ("read", True),
    "write": ("write", True),
    "trim": ("trim", True),
    "randread": ("read", False),
    "randwrite": ("write", False),
    "randtrim": ("trim", False),
    "rw": ("mixed", True),
    "readwrite": ("mixed", True),
    "randrw": ("mixed", False),
}
_DIRS = ("read", "write", "trim")


# ---------------------------------------------------------------------------------------------
# Job file parsing


@record
class _Opt:
    key: str  # canonical name
    written: str  # as written in the file
    value: str | None
    line: int
    section: str


@record
class _Job:
    section: str
    line: int
    opts: list[_Opt] = field(default_factory=list)


class _Ctx:
    """Error context: origin file name; every message ends with the supported options."""

    def __init__(self, origin: str):
        self.origin = origin

    def fail(self, opt: _Opt | None, msg: str, *, section: str | None = None, line: int | None = None) -> FioError:
        if opt is not None:
            where = f"{self.origin}:{opt.line}: [{opt.section}] option `{opt.written}`"
        elif line is not None:
            where = f"{self.origin}:{line}: [{section}]" if section else f"{self.origin}:{line}"
        else:
            where = self.origin
        return FioError(f"{where}: {msg}; supported options: {', '.join(sorted(SUPPORTED_OPTIONS))}")


def _parse_jobs(text: str, ctx: _Ctx) -> list[_Job]:
    jobs: list[_Job] = []
    globals_above: list[_Opt] = []
    current: _Job | None = None
    in_global = False
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            end = line.find("]")
            if end < 0:
                raise ctx.fail(None, f"section header `{line}` has no closing `]`", line=no)
            name = line[1:end].strip()
            if not name:
                raise ctx.fail(None, "empty section name", line=no)
            if line[end + 1 :].strip() and line[end + 1 :].strip()[0] not in ";#":
                raise ctx.fail(None, f"text after the section header `{line}`", line=no)
            if name == "global":
                in_global, current = True, None
            else:
                in_global = False
                current = _Job(section=name, line=no, opts=list(globals_above))
                jobs.append(current)
            continue
        if line.startswith("include ") or line == "include":
            raise ctx.fail(None, "`include` is not supported: paste the included options into this file", line=no)
        # fio cuts a value at ';' or '#' (inline comments).
        body = re.split(r"[;#]", line, maxsplit=1)[0].strip()
        key, eq, value = body.partition("=")
        key = key.strip()
        val: str | None = value.strip() if eq else None
        if current is None and not in_global:
            raise ctx.fail(None, f"option `{key}` outside of a [section]", line=no)
        section = "global" if in_global else current.section  # type: ignore[union-attr]
        canon = _ALIASES.get(key, key)
        opt = _Opt(key=canon, written=key, value=val, line=no, section=section)
        if val is not None and "$" in val:
            raise ctx.fail(opt, "environment variables and $keywords are not expanded by ssdkit; write the value")
        if val is not None and val.startswith("("):
            raise ctx.fail(opt, "arithmetic expressions are not supported; write the value")
        if canon not in SUPPORTED_OPTIONS:
            reason = _REFUSED_REASONS.get(canon, "not supported by ssdkit")
            raise ctx.fail(opt, reason)
        if in_global:
            globals_above.append(opt)
        else:
            current.opts.append(opt)  # type: ignore[union-attr]
    if not jobs:
        raise ctx.fail(None, "no job section (only [global] or nothing)")
    return jobs


# ---------------------------------------------------------------------------------------------
# fio's number syntax (parse.c)

_NUM = re.compile(r"^(0[xX][0-9a-fA-F]+|[0-9]+)([A-Za-z%]*)$")
_TIME = re.compile(r"^([0-9]+)([A-Za-z]*)$")


def _bytes(ctx: _Ctx, opt: _Opt, text: str, kb_base: int, *, percent: bool = False) -> tuple[int, bool]:
    """fio's size syntax: integer (or 0x hex) with a case-insensitive unit. With kb_base 1024
    (fio's default) k/m/g/t/p and kb/mb/... are powers of 1024 and the IEC forms kib/mib/...
    powers of 1000 (fio's compatibility inversion); with kb_base 1000 the other way round.
    Returns (value, is_percent)."""
    s = text.strip()
    m = _NUM.match(s)
    if not m:
        raise ctx.fail(opt, f"`{text}` is not an integer with an optional unit (fio reads whole numbers only)")
    digits, unit = m.group(1), m.group(2).lower()
    n = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    if unit == "%":
        if not percent:
            raise ctx.fail(opt, f"`{text}`: a percentage is not allowed here")
        return n, True
    pows = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
    if unit in ("", "b"):
        return n, False
    if len(unit) in (1, 2) and unit[0] in pows and (len(unit) == 1 or unit[1] == "b"):
        return n * kb_base ** pows[unit[0]], False
    if len(unit) == 3 and unit[0] in pows and unit[1:] == "ib":
        return n * (1000 if kb_base == 1024 else 1024) ** pows[unit[0]], False
    if len(unit) == 2 and unit[0] in pows and unit[1] == "i":
        raise ctx.fail(
            opt,
            f"`{text}`: fio's documentation and its parser disagree on `{unit}` (powers of 1000 or 1024); "
            f"write {unit[0]} (x{kb_base}) or {unit}b",
        )
    raise ctx.fail(opt, f"`{text}`: unknown unit `{m.group(2)}` (allowed: b, k, m, g, t, p, kb..pb, kib..pib, %)")


def _time_us(ctx: _Ctx, opt: _Opt, text: str) -> int:
    """fio's time syntax in microseconds; no unit means seconds."""
    s = text.strip()
    m = _TIME.match(s)
    if not m:
        raise ctx.fail(opt, f"`{text}` is not a whole number with an optional time unit (us, ms, s, m, h, d)")
    n, unit = int(m.group(1)), m.group(2).lower()
    mult = {"": 1_000_000, "us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 1_000_000, "m": 60_000_000}
    mult.update({"h": 3_600_000_000, "d": 86_400_000_000})
    if unit not in mult:
        if unit in ("sec", "min", "secs", "mins"):
            raise ctx.fail(opt, f"`{text}`: fio reads the unit `{m.group(2)}` as microseconds; write s or m")
        raise ctx.fail(opt, f"`{text}`: unknown time unit `{m.group(2)}` (allowed: us, ms, s, m, h, d)")
    return n * mult[unit]


def _int(ctx: _Ctx, opt: _Opt, lo: int = 0, hi: int | None = None) -> int:
    if opt.value is None:
        raise ctx.fail(opt, "needs a value")
    s = opt.value.strip()
    try:
        v = int(s, 16) if s[:2].lower() == "0x" else int(s)
    except ValueError:
        raise ctx.fail(opt, f"`{opt.value}` is not an integer") from None
    if v < lo or (hi is not None and v > hi):
        raise ctx.fail(opt, f"{v} is out of range; allowed {lo}..{hi if hi is not None else ''}")
    return v


def _flag(ctx: _Ctx, opt: _Opt) -> bool:
    if opt.value is None:
        return True
    if opt.value.strip() in ("0", "1"):
        return opt.value.strip() == "1"
    raise ctx.fail(opt, f"`{opt.value}`: allowed 0 or 1 (or the bare flag)")


def _per_dir(text: str) -> list[str | None]:
    """Splits a per-direction value as fio's parser does: by ',' (read,write,trim), else by
    ':' or '-'. Returns [read, write, trim]; None keeps fio's default for that direction."""
    s = text.strip()
    s = s.removesuffix(",")
    if "," in s:
        parts = s.split(",")
    elif ":" in s:
        parts = s.split(":")
    elif "-" in s:
        parts = s.split("-")
    else:
        parts = [s]
    parts = [p.strip() for p in parts]
    if len(parts) > 3:
        raise ValueError("more than three values (read,write,trim)")
    vals: list[str | None] = [p or None for p in parts]
    if len(vals) == 1:
        return [vals[0]] * 3
    if len(vals) == 2:
        return [vals[0], vals[1], vals[1]]
    return vals


def _split_dirs(text: str) -> list[str]:
    """bssplit/bsrange: only ',' separates directions (read,write,trim)."""
    parts = [p.strip() for p in text.strip().rstrip(",").split(",")] if text.strip() else [""]
    if len(parts) > 3:
        raise ValueError("more than three values (read,write,trim)")
    if len(parts) == 1:
        return parts * 3
    if len(parts) == 2:
        return [parts[0], parts[1], parts[1]]
    return parts


# ---------------------------------------------------------------------------------------------
# One job -> flows


@record
class FioConversion:
    """What ``convert_fio`` produced: the TOML text, the flows and the notes it carries."""

    toml: str
    flows: list[dict]
    notes: list[str]
    capacity_bytes: int


def _size_dist(ctx: _Ctx, job: dict[str, _Opt], kb: int) -> tuple[list[tuple], list[int], _Opt | None]:
    """Per direction: ('fixed', b) | ('uniform', lo, hi) | ('list', ((bytes, weight), ...)).
    Also the smallest size per direction, and the option that decided it."""
    specs: list[tuple] = [("fixed", 4096)] * 3
    decided: _Opt | None = None
    if "bs" in job:
        opt = job["bs"]
        try:
            parts = _per_dir(opt.value or "")
        except ValueError as e:
            raise ctx.fail(opt, str(e)) from None
        specs = [("fixed", _bytes(ctx, opt, p, kb)[0]) if p is not None else ("fixed", 4096) for p in parts]
        decided = opt
    if "bsrange" in job:
        opt = job["bsrange"]
        try:
            parts3 = _split_dirs(opt.value or "")
        except ValueError as e:
            raise ctx.fail(opt, str(e)) from None
        new = []
        for p in parts3:
            m = re.match(r"^([^:-]+)[:-]([^:-]+)$", p)
            if not m:
                raise ctx.fail(opt, f"`{p}` is not a range lo-hi (or lo:hi)")
            lo, hi = _bytes(ctx, opt, m.group(1), kb)[0], _bytes(ctx, opt, m.group(2), kb)[0]
            lo, hi = min(lo, hi), max(lo, hi)
            new.append(_bsrange_dist(ctx, opt, lo, hi))
        specs = new
        decided = opt
    if "bssplit" in job:
        opt = job["bssplit"]
        try:
            parts3 = _split_dirs(opt.value or "")
        except ValueError as e:
            raise ctx.fail(opt, str(e)) from None
        specs = [_bssplit_dist(ctx, opt, p, kb) for p in parts3]
        decided = opt
    mins = []
    for s in specs:
        if s[0] == "fixed" or s[0] == "uniform":
            mins.append(s[1])
        else:
            mins.append(min(b for b, _ in s[1]))
    return specs, mins, decided


def _bsrange_dist(ctx: _Ctx, opt: _Opt, lo: int, hi: int) -> tuple:
    """fio's bsrange draw: len = lo + hi x u, rounded down to a multiple of lo, capped at hi
    (io_u.c get_next_buflen): each multiple k x lo gets the share of [lo, lo + hi) that rounds
    to it."""
    if lo <= 0:
        raise ctx.fail(opt, "block sizes must be positive")
    if lo == hi:
        return ("fixed", lo)
    if lo == SECTOR and hi % SECTOR == 0:
        return ("uniform", lo, hi)  # every multiple of 512 in [512, hi], equally likely
    weights: dict[int, int] = {}
    k = 1
    while k * lo < lo + hi:
        a, b = max(k * lo, lo), min((k + 1) * lo, lo + hi)
        size = min(k * lo, hi)
        weights[size] = weights.get(size, 0) + (b - a)
        k += 1
    if len(weights) > 4096:
        raise ctx.fail(opt, f"bsrange {lo}-{hi} gives {len(weights)} sizes; ssdkit takes at most 4096")
    g = 0
    for w in weights.values():
        g = math.gcd(g, w)
    return ("list", tuple((b, w // g) for b, w in sorted(weights.items())))


def _bssplit_dist(ctx: _Ctx, opt: _Opt, text: str, kb: int) -> tuple:
    """fio's bssplit (options.c bssplit_ddir + io_u.c get_next_buflen): entries size/percent;
    entries without a percentage share what is left (integer division); entries are sorted by
    percentage, largest first (stable), and drawn by cumulative percentage, the last entry
    taking what remains below 100; sizes round down to a multiple of the smallest."""
    entries = []
    for item in text.split(":"):
        if not item.strip():
            break
        size_s, slash, perc_s = item.partition("/")
        size = _bytes(ctx, opt, size_s, kb)[0]
        perc = -1
        if slash:
            ps = perc_s.strip()
            if ps and not ps.isdigit():
                raise ctx.fail(opt, f"`{item}`: the percentage must be a whole number")
            perc = int(ps) if ps else 0  # fio: an empty or zero percentage shares the rest
            perc = min(perc, 100)
            if perc == 0:
                perc = -1
        entries.append([size, perc])
    if not entries:
        raise ctx.fail(opt, "empty bssplit")
    total = sum(p for _, p in entries if p != -1)
    missing = sum(1 for _, p in entries if p == -1)
    if total > 100 and missing > 1:
        raise ctx.fail(opt, "bssplit percentages add to more than 100%")
    if missing:
        if missing == 1 and len(entries) == 1:
            total = 100
        for e in entries:
            if e[1] == -1:
                e[1] = (100 - total) // missing
    minbs = min(s for s, _ in entries)
    maxbs = max(s for s, _ in entries)
    ordered = sorted(entries, key=lambda e: -e[1])  # stable, largest percentage first
    shares: dict[int, int] = {}
    cum = 0
    last_size = None
    for size, perc in ordered:
        if perc <= 0:
            continue
        size = min(size - size % minbs, maxbs)
        last_size = size
        lo, cum = cum, cum + perc
        share = max(0, min(cum, 100) - min(lo, 100))
        if share:
            shares[size] = shares.get(size, 0) + share
    if cum < 100 and last_size is not None:
        shares[last_size] = shares.get(last_size, 0) + (100 - cum)
    if not shares:
        raise ctx.fail(opt, "bssplit gives every size a zero share")
    if len(shares) == 1:
        return ("fixed", next(iter(shares)))
    return ("list", tuple(sorted(shares.items())))


def _job_flows(ctx: _Ctx, job: _Job, capacity: int, notes: list[str]) -> list[dict]:
    opts: dict[str, _Opt] = {}
    rwmix_read: int | None = None
    for o in job.opts:
        opts[o.key] = o
        if o.key == "rwmixread":
            rwmix_read = _int(ctx, o, 0, 100)
        elif o.key == "rwmixwrite":
            rwmix_read = 100 - _int(ctx, o, 0, 100)
    sec = job.section

    kb = 1024
    if "kb_base" in opts:
        kb = _int(ctx, opts["kb_base"], 0)
        if kb not in (1000, 1024):
            raise ctx.fail(opts["kb_base"], f"{kb}: allowed 1000 or 1024")

    # Direction mix and pattern.
    rw_opt = opts.get("rw")
    rw = (rw_opt.value or "").strip() if rw_opt else "read"
    if rw_opt is not None and ":" in rw:
        raise ctx.fail(rw_opt, f"`{rw}`: the `:` postfix (holes / offsets per random pick) is not supported")
    if rw in ("trimwrite", "randtrimwrite"):
        raise ctx.fail(rw_opt, f"`{rw}` (trim then write the same blocks) cannot be expressed as an ssdkit flow")
    if rw not in _RW_MODES:
        raise ctx.fail(rw_opt, f"`{rw}`: allowed {', '.join(_RW_MODES)}")
    kind, sequential = _RW_MODES[rw]
    fractions = {"read": 0.0, "write": 0.0, "trim": 0.0}
    if kind == "mixed":
        rr = 50 if rwmix_read is None else rwmix_read
        fractions["read"], fractions["write"] = rr / 100, (100 - rr) / 100
        if sequential and 0 < rr < 100:
            raise ctx.fail(
                rw_opt,
                f"`{rw}` with {rr}% reads: fio keeps separate sequential positions for reads and writes; "
                "ssdkit's sequential flow has one (use two jobs, rw=read and rw=write, or randrw)",
            )
        if 0 < rr < 100:
            notes.append(
                f"[{sec}] fio picks the direction of a mixed job in runs (rwmix batching); ssdkit draws "
                f"each request independently with the same {rr}% reads"
            )
    else:
        fractions[kind] = 1.0
    used = [d for d in _DIRS if fractions[d] > 0]
    idx = {d: i for i, d in enumerate(_DIRS)}

    # Sizes.
    specs, mins, size_opt = _size_dist(ctx, opts, kb)
    spec = specs[idx[used[0]]]
    if any(specs[idx[d]] != spec for d in used):
        raise ctx.fail(
            size_opt,
            f"different sizes for {' and '.join(used)}; an ssdkit flow has one size distribution "
            "(split the job into one job per direction)",
        )
    for b in _spec_sizes(spec):
        if b <= 0 or b % SECTOR:
            hint = ""
            if size_opt is not None and re.search(r"[kmgtp]ib", (size_opt.value or "").lower()) and kb == 1024:
                hint = " (with kb_base=1024, fio's default, KiB/MiB mean powers of 1000: write k or KB for 1024)"
            raise ctx.fail(size_opt, f"block size {b} bytes is not a positive multiple of 512{hint}")
    minbs = mins[idx[used[0]]]
    td_min_bs = min(mins)

    # Alignment of random offsets (fio's ba, default the smallest block size).
    align = None
    if "ba" in opts:
        o = opts["ba"]
        try:
            parts = _per_dir(o.value or "")
        except ValueError as e:
            raise ctx.fail(o, str(e)) from None
        bas = [(_bytes(ctx, o, p, kb)[0] if p is not None else mins[i]) for i, p in enumerate(parts)]
        if any(bas[idx[d]] != bas[idx[used[0]]] for d in used):
            raise ctx.fail(o, "different alignments per direction are not supported")
        align = bas[idx[used[0]]]
        if align <= 0 or align % SECTOR:
            raise ctx.fail(o, f"{align} bytes is not a positive multiple of 512")
    elif spec[0] != "fixed":
        align = minbs

    # Queue depth (a synchronous ioengine keeps one I/O outstanding whatever iodepth says).
    depth = _int(ctx, opts["iodepth"], 1, 65535) if "iodepth" in opts else 1
    engine = (opts["ioengine"].value or "").strip() if "ioengine" in opts else _DEFAULT_ENGINE
    if engine not in _ASYNC_ENGINES | _SYNC_ENGINES:
        raise ctx.fail(
            opts.get("ioengine"),
            f"`{engine}` is not a block-device engine ssdkit can stand in for; allowed "
            f"{', '.join(sorted(_ASYNC_ENGINES | _SYNC_ENGINES))}",
        )
    if engine in _SYNC_ENGINES and depth > 1:
        default = " (fio's default ioengine on Linux)" if "ioengine" not in opts else ""
        raise ctx.fail(
            opts["iodepth"],
            f"iodepth={depth} has no effect with the synchronous ioengine {engine}{default}: fio would run "
            f"this job at queue depth 1. Add ioengine=libaio (or io_uring) for queue depth {depth}, or set iodepth=1",
        )

    numjobs = _int(ctx, opts["numjobs"], 1, 4096) if "numjobs" in opts else 1
    loops = _int(ctx, opts["loops"], 1) if "loops" in opts else 1

    # Region: offset (+ offset_increment per clone) and size; fio's filesetup.c rules.
    def align_up(v: int) -> int:
        return -(-v // td_min_bs) * td_min_bs

    off_val, off_pct, off_opt = 0, False, opts.get("offset")
    if off_opt is not None:
        off_val, off_pct = _bytes(ctx, off_opt, off_opt.value or "", kb, percent=True)
        if off_pct and not 0 <= off_val <= 100:
            raise ctx.fail(off_opt, f"{off_val}% is out of range; allowed 0..100")
    inc_val, inc_pct, inc_opt = 0, False, opts.get("offset_increment")
    if inc_opt is not None:
        inc_val, inc_pct = _bytes(ctx, inc_opt, inc_opt.value or "", kb, percent=True)
        if inc_pct:
            inc_val = inc_val * capacity // 100
    size_opt_r = opts.get("size")
    size_val, size_pct = (None, False)
    if size_opt_r is not None:
        size_val, size_pct = _bytes(ctx, size_opt_r, size_opt_r.value or "", kb, percent=True)
        if size_pct and not 1 <= size_val <= 100:
            raise ctx.fail(size_opt_r, f"{size_val}% is out of range; allowed 1..100")
        if not size_pct and size_val == 0:
            size_val = None  # fio: size=0 means the whole device
    io_opt = opts.get("io_size")
    io_val, io_pct = (None, False)
    if io_opt is not None:
        io_val, io_pct = _bytes(ctx, io_opt, io_opt.value or "", kb, percent=True)
        if io_pct and not 1 <= io_val <= 100:
            raise ctx.fail(io_opt, f"{io_val}% is out of range; allowed 1..100")

    time_based = _flag(ctx, opts["time_based"]) if "time_based" in opts else False
    if "runtime" in opts and opts["runtime"].value is None:
        raise ctx.fail(opts["runtime"], "needs a value")
    runtime_us = _time_us(ctx, opts["runtime"], opts["runtime"].value or "") if "runtime" in opts else 0
    if time_based and runtime_us == 0:
        raise ctx.fail(opts["time_based"], "time_based needs runtime (fio would run forever)")
    number_ios = _int(ctx, opts["number_ios"], 0) if "number_ios" in opts else 0
    # fsync=N / fdatasync=N: fio syncs after every N writes, quiescing the job's I/O first: a
    # barrier Flush, which is ssdkit's flow.flush_every (counted over every request, so only
    # write-only jobs convert exactly). 0 means none, as in fio.
    flush_every = 0
    for key in ("fsync", "fdatasync"):
        if key in opts:
            n = _int(ctx, opts[key], 0)
            if n and (fractions["read"] > 0 or fractions["trim"] > 0):
                raise ctx.fail(
                    opts[key],
                    f"{key}={n} counts writes only; ssdkit's flow.flush_every counts every request, "
                    "so it converts only for write-only jobs",
                )
            if n and flush_every and n != flush_every:
                raise ctx.fail(opts[key], "fsync and fdatasync with different intervals are not supported")
            flush_every = n or flush_every
    start_ms = 0.0
    if "startdelay" in opts:
        o = opts["startdelay"]
        v = (o.value or "").strip()
        if re.search(r"[0-9][a-zA-Z]*[-:][0-9]", v):
            raise ctx.fail(o, "a startdelay range (a random delay per clone) is not supported")
        start_ms = _time_us(ctx, o, v) / 1000

    # Arrivals.
    arrival, rate = "closed", 0.0
    if "rate_iops" in opts:
        o = opts["rate_iops"]
        try:
            parts = _per_dir(o.value or "")
        except ValueError as e:
            raise ctx.fail(o, str(e)) from None
        rates = [(_int_text(ctx, o, p) if p is not None else 0) for p in parts]
        used_rates = [rates[idx[d]] for d in used]
        if len(used) > 1 and any(used_rates):
            raise ctx.fail(
                o,
                "fio caps each direction of a mixed job separately and switches direction to keep up; "
                "ssdkit's open-loop rate is for the whole flow (split the job into one job per direction)",
            )
        rate = float(used_rates[0])
        if rate > 0:
            process = (opts["rate_process"].value or "").strip() if "rate_process" in opts else "linear"
            if process not in ("linear", "poisson"):
                raise ctx.fail(opts["rate_process"], f"`{process}`: allowed linear, poisson")
            arrival = "fixed" if process == "linear" else "exponential"
            if depth > 1:
                notes.append(
                    f"[{sec}] open loop at {rate:g} IOPS: iodepth={depth} is not a cap in ssdkit (arrivals "
                    "queue in the submission queue); fio keeps at most iodepth I/Os outstanding"
                )
    elif "rate_process" in opts:
        p = (opts["rate_process"].value or "").strip()
        if p not in ("linear", "poisson"):
            raise ctx.fail(opts["rate_process"], f"`{p}`: allowed linear, poisson")

    # Address pattern.
    pattern: dict[str, Any] = {"pattern": "sequential" if sequential else "random"}
    if not sequential and "random_distribution" in opts:
        pattern = _distribution(ctx, opts["random_distribution"])
    norandommap = _flag(ctx, opts["norandommap"]) if "norandommap" in opts else False
    if pattern["pattern"] == "random" and not norandommap:
        notes.append(
            f"[{sec}] fio's random map (norandommap not set) visits every block once per pass; ssdkit draws "
            "offsets with replacement, as fio does with norandommap=1"
        )
    direct = True
    if "direct" in opts:
        direct = _flag(ctx, opts["direct"])
    if "buffered" in opts:
        direct = not _flag(ctx, opts["buffered"])
    if not direct:
        notes.append(
            f"[{sec}] buffered I/O (direct=0, fio's default) goes through the host page cache in fio; "
            "ssdkit simulates the device as with direct=1"
        )
    if "filename" in opts:
        fn = (opts["filename"].value or "").replace("\\:", "")
        if ":" in fn:
            raise ctx.fail(
                opts["filename"], "several files (`:`-separated) are not supported; ssdkit simulates one device"
            )

    name = (opts["name"].value or "").strip() if "name" in opts else job.section
    flows = []
    for clone in range(numjobs):
        inc = clone * inc_val
        if off_pct:
            start = align_up(capacity * off_val // 100 + inc)
        elif inc_pct:
            start = align_up(off_val + inc)
        else:
            start = off_val + inc
        where = off_opt or inc_opt
        if start % SECTOR:
            raise ctx.fail(where, f"offset {start} bytes is not a multiple of 512")
        if start >= capacity:
            raise ctx.fail(where, f"offset {start} bytes is beyond the device's {capacity} bytes")
        if size_pct:
            region = capacity * size_val // 100 if size_val != 100 else capacity - start  # type: ignore[operator]
            region = min(region, capacity - start)
            if size_val != 100:
                region -= region % td_min_bs
        elif size_val is not None:
            region = size_val
            if start + region > capacity:
                raise ctx.fail(
                    size_opt_r,
                    f"offset {start} + size {region} bytes runs past the end of the device ({capacity} bytes)",
                )
        else:
            region = capacity - start
        if region % SECTOR:
            raise ctx.fail(size_opt_r, f"size {region} bytes is not a multiple of 512")
        if region < max(_spec_sizes(spec)):
            raise ctx.fail(size_opt_r, f"the region ({region} bytes) is smaller than the block size")

        f: dict[str, Any] = {"name": name if numjobs == 1 else f"{name}.{clone}"}
        if arrival == "closed":
            f["queue_depth"] = depth
        else:
            f["arrival"] = arrival
            f["rate_iops"] = rate
        f["read_fraction"] = fractions["read"]
        f["trim_fraction"] = fractions["trim"]
        if flush_every:
            f["flush_every"] = flush_every
        if spec[0] == "fixed":
            f["request_bytes"] = spec[1]
        elif spec[0] == "uniform":
            f["size"] = "uniform"
            f["size_min_bytes"], f["size_max_bytes"] = spec[1], spec[2]
        else:
            f["size"] = "list"
            f["size_list"] = [{"bytes": b, "weight": w} for b, w in spec[1]]
        f.update(pattern)
        if align is not None:
            f["align_bytes"] = align
        f["start_bytes"] = start
        f["range_bytes"] = region
        f["requests"] = number_ios
        if time_based:
            f["io_bytes"] = 0
            f["duration_ms"] = runtime_us / 1000
        else:
            if io_val is not None:
                limit = region * io_val // 100 if io_pct else io_val
            else:
                limit = region
            limit *= loops
            if sequential and limit > region:
                raise ctx.fail(
                    io_opt or opts.get("loops"),
                    f"a sequential job asked for {limit} bytes over a {region}-byte region: what fio does past the "
                    "end of the region depends on its version; use time_based (wraps around) or io_size <= size",
                )
            f["io_bytes"] = limit
            f["duration_ms"] = runtime_us / 1000
        f["start_ms"] = start_ms
        flows.append(f)
    return flows


def _int_text(ctx: _Ctx, opt: _Opt, text: str) -> int:
    s = text.strip()
    try:
        return int(s, 16) if s[:2].lower() == "0x" else int(s)
    except ValueError:
        raise ctx.fail(opt, f"`{text}` is not an integer") from None


def _spec_sizes(spec: tuple) -> list[int]:
    if spec[0] == "fixed":
        return [spec[1]]
    if spec[0] == "uniform":
        return [spec[1], spec[2]]
    return [b for b, _ in spec[1]]


def _distribution(ctx: _Ctx, opt: _Opt) -> dict[str, Any]:
    v = (opt.value or "").strip()
    kind, _, arg = v.partition(":")
    if kind == "random":
        if arg:
            raise ctx.fail(opt, "`random` takes no parameter")
        return {"pattern": "random"}
    if kind in ("zoned", "zoned_abs"):
        raise ctx.fail(opt, f"`{kind}` distributions are not supported")
    if kind not in ("zipf", "pareto", "normal", "gauss"):
        raise ctx.fail(opt, f"`{kind}`: allowed random, zipf[:theta], pareto[:h], normal[:dev]")
    if ":" in arg:
        raise ctx.fail(opt, "the `:center` suffix is not supported")
    defaults = {"zipf": 1.1, "pareto": 0.2, "normal": 0.0, "gauss": 0.0}
    x = defaults[kind]
    if arg:
        try:
            x = float(arg)
        except ValueError:
            raise ctx.fail(opt, f"`{arg}` is not a number") from None
    if kind == "zipf":
        if x == 1.0:
            raise ctx.fail(opt, "zipf theta must differ from 1.0 (fio refuses it too)")
        if not 0 < x <= 100:
            raise ctx.fail(opt, f"zipf theta {x} is out of range; allowed (0, 100], not 1")
        return {"pattern": "zipf", "zipf_theta": x, "scramble": True}
    if kind == "pareto":
        if not 0 < x < 1:
            raise ctx.fail(opt, f"pareto h {x} is out of range; allowed (0, 1)")
        return {"pattern": "pareto", "pareto_h": x, "scramble": True}
    if not 0 <= x < 100:
        raise ctx.fail(opt, f"normal deviation {x} is out of range; allowed [0, 100)")
    # fio's gauss.c: the mean of 12 uniform draws over the slots (standard deviation slots/12)
    # plus a uniform offset of width min(dev %, 50 %) of the slots (standard deviation width/sqrt(12)).
    f = min(x / 100, 0.5)
    return {"pattern": "normal", "normal_stdev_fraction": math.sqrt(1 / 144 + f * f / 12), "scramble": True}


# ---------------------------------------------------------------------------------------------
# Public entry points


def _read_job(job: JobArg) -> tuple[str, str]:
    if isinstance(job, os.PathLike) or (isinstance(job, str) and "\n" not in job):
        path = api._path(job, "job", FioError)
        try:
            with open(path, encoding="utf-8-sig") as f:
                return f.read(), path
        except FileNotFoundError:
            raise FioError(f"cannot read fio job file `{path}`: no such file") from None
        except UnicodeDecodeError as e:
            raise FioError(f"cannot read fio job file `{path}`: not UTF-8 text ({e.reason})") from None
        except OSError as e:
            raise FioError(f"cannot read fio job file `{path}`: {e.strerror or e}") from None
    if not isinstance(job, str):
        raise TypeError(f"job must be fio job text or a path, not {type(job).__name__}")
    return job, "<fio job>"


def convert_fio(
    job: JobArg,
    base: Any = None,
    *,
    preset: str | None = None,
    overrides: Any = None,
    apply_overrides: bool = True,
) -> FioConversion:
    """Like :func:`fio_to_toml`, returning the flows and notes too. With
    ``apply_overrides=False`` the overrides still shape the device used for capacities, but are
    left out of the TOML (for callers that hand them to the core themselves)."""
    text, origin = _read_job(job)
    ctx = _Ctx(origin)
    jobs = _parse_jobs(text, ctx)
    base_text, base_origin = base_source(base, preset)
    doc = _toml.toml_loads(base_text, base_origin)
    doc.pop("flow", None)
    ov = override_list(overrides)
    capacity = device_capacity(doc, ov, base_origin)
    notes: list[str] = []
    flows: list[dict] = []
    for j in jobs:
        flows.extend(_job_flows(ctx, j, capacity, notes))
    doc["flow"] = flows
    if apply_overrides and ov:
        apply_override_list(doc, ov)
    header = [f"Generated by ssdkit from the fio job file {origin}; device: {base_origin}."]
    header.append(f"Logical capacity {capacity} bytes (fio's `size`/`offset` percentages and defaults use it).")
    if apply_overrides and ov:
        header.append("Overrides applied: " + " ".join(ov))
    header += [f"note: {n}" for n in notes]
    return FioConversion(toml=toml_dumps(doc, header), flows=flows, notes=notes, capacity_bytes=capacity)


def fio_to_toml(
    job: JobArg,
    base: Any = None,
    *,
    preset: str | None = None,
    overrides: Any = None,
) -> str:
    """Converts a fio job file (path or text) to an ssdkit configuration (TOML text).

    ``base`` is the device: a preset name, a TOML file path or TOML text (default preset
    ``mqsim-paper``); its flows are replaced by one flow per fio job (``numjobs=N``: N flows
    named ``<job>.<i>``). ``overrides`` (dict or ``"key=value"`` list, as for :func:`run`)
    change the device before capacities are computed and are applied to the result. Raises
    :class:`FioError` for anything ssdkit cannot reproduce exactly."""
    return convert_fio(job, base, preset=preset, overrides=overrides).toml
