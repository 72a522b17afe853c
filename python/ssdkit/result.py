"""Typed, read-only view of the result document the Rust core writes (schema version 1).

The JSON stays the contract: every object here is built from it, the document itself is kept
as ``Result.raw``, and fields the core adds later remain reachable there before they get an
attribute.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from . import _json
from ._columns import BREAKDOWN_STEPS
from ._dotted import _flatten, _is_flow_name
from ._native import SsdkitError
from ._record import MISSING, Field, asdict, field, fields, record, replace  # noqa: F401 (fields, replace: public, docs/results.md)
from .plot import Plotter

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import pandas

# numpy and pandas are imported by the methods that need them: `import ssdkit` and the command
# line stay fast when no array or frame is asked for.

SCHEMA_VERSION = 1

#: The request kinds of every Stats object, in document order. ``all`` counts reads and
#: writes only; ``trim`` (deallocate) requests are reported on their own.
_OPS = ("read", "write", "all", "trim")


class _DictLike:
    """Item access by field name, so ``flash["page_reads"]`` works like ``flash.page_reads``."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.keys():
            raise KeyError(name)
        return getattr(self, name)

    def keys(self) -> list[str]:
        return [f.name for f in fields(self)]  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@record(frozen=True)
class LatencyUs(_DictLike):
    """Request latency, submission to completion, in microseconds."""

    mean: float
    min: float
    p50: float
    p90: float
    p99: float
    p99_9: float
    p99_99: float
    max: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LatencyUs:
        return _pick(cls, d)


@record(frozen=True)
class LatencyHistogram(_DictLike):
    """Every latency of one kind of request, in the non-empty buckets of an HDR histogram
    (3 significant digits), ascending: bucket ``i`` holds ``count[i]`` latencies ``l`` (in
    picoseconds) with ``lower_ps[i] <= l <= upper_ps[i]``."""

    lower_ps: list[int] = field(hash=False, repr=False)
    upper_ps: list[int] = field(hash=False, repr=False)
    count: list[int] = field(hash=False, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LatencyHistogram:
        lower, upper, count = (list(_get(d, k)) for k in ("lower_ps", "upper_ps", "count"))
        if not len(lower) == len(upper) == len(count):
            raise SsdkitError("result document: latency_histogram lists differ in length")
        return cls(lower, upper, count)

    @property
    def total(self) -> int:
        return sum(self.count)


@record(frozen=True)
class OpStats(_DictLike):
    """Completed requests of one kind (read, write, trim, or all = read + write)."""

    count: int
    bytes: int
    iops: float
    bandwidth_bytes_per_s: float
    latency: LatencyUs
    #: Every latency in HDR buckets; None only for a document from before it was written.
    histogram: LatencyHistogram | None = field(default=None, repr=False)

    @property
    def bandwidth_MBps(self) -> float:
        """Bandwidth in MB/s (10^6 bytes per second)."""
        return self.bandwidth_bytes_per_s / 1e6

    def quantile(self, q: Any) -> Any:
        """Latency quantile(s) in microseconds, ``q`` in [0, 1] (a number or an array-like,
        giving a float or a numpy array). Computed from the histogram as the core computes
        its own: ``quantile(0.99)`` equals ``latency.p99`` exactly. NaN when no request of
        this kind completed."""
        import numpy as np

        qs = np.asarray(q, dtype=float)
        if np.any(np.isnan(qs)) or np.any(qs < 0) or np.any(qs > 1):
            raise ValueError(f"quantile: q must lie in [0, 1], got {q!r}")
        h = self._require_histogram("quantile")
        if self.count == 0:
            out = np.full(qs.shape, np.nan)
        else:
            cum = np.cumsum(np.asarray(h.count, dtype=np.uint64))
            # The HDR rule: the first bucket whose cumulative count reaches ceil(q * total).
            target = np.maximum(np.ceil(qs * float(cum[-1])), 1).astype(np.uint64)
            idx = np.searchsorted(cum, target, side="left")
            upper_us = np.asarray(h.upper_ps, dtype=np.uint64)[idx] / 1e6
            out = np.clip(upper_us, self.latency.min, self.latency.max)
        return float(out) if out.ndim == 0 else out

    def percentile(self, p: Any) -> Any:
        """Latency percentile(s) in microseconds, ``p`` in [0, 100]: ``quantile(p / 100)``, the
        fraction taken to 12 decimal places so that ``percentile(99.9)`` is ``quantile(0.999)``
        (in binary floating point 99.9 / 100 is not 0.999)."""
        import numpy as np

        ps = np.asarray(p, dtype=float)
        if np.any(np.isnan(ps)) or np.any(ps < 0) or np.any(ps > 100):
            raise ValueError(f"percentile: p must lie in [0, 100], got {p!r}")
        return self.quantile(np.round(ps / 100, 12))

    def latency_cdf(self) -> tuple[Any, Any]:
        """The latency CDF as two numpy arrays: ``latency_us`` (each bucket's upper edge, in
        microseconds, ascending) and ``fraction`` (the share of requests at or below it,
        ending at 1.0). Empty arrays when no request of this kind completed."""
        import numpy as np

        h = self._require_histogram("latency_cdf")
        count = np.asarray(h.count, dtype=np.uint64)
        if count.size == 0:
            return np.empty(0), np.empty(0)
        cum = np.cumsum(count)
        return np.asarray(h.upper_ps, dtype=np.uint64) / 1e6, cum / float(cum[-1])

    def _require_histogram(self, what: str) -> LatencyHistogram:
        if self.histogram is None:
            raise SsdkitError(f"{what}: this result document has no latency histogram (written by an older ssdkit)")
        return self.histogram

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpStats:
        hist = d.get("latency_histogram") if isinstance(d, dict) else None
        return _pick(
            cls,
            d,
            latency=LatencyUs.from_dict(_get(d, "latency_us")),
            histogram=None if hist is None else LatencyHistogram.from_dict(hist),
        )

    @classmethod
    def zero(cls) -> OpStats:
        """No requests (what a document from before TRIM support implies for ``trim``)."""
        return cls(0, 0, 0.0, 0.0, LatencyUs(*[0.0] * len(fields(LatencyUs))), LatencyHistogram([], [], []))


@record(frozen=True)
class Stats(_DictLike):
    """Completed requests by kind. ``all`` = reads + writes; TRIM requests are only in
    ``trim`` (they move no data), and NVMe Flush commands (a flow's ``flush_every``, a fio
    iolog's syncs with a write cache, or a :class:`ssdkit.Device` program) only in ``flush``."""

    read: OpStats
    write: OpStats
    all: OpStats
    trim: OpStats
    #: NVMe Flush commands; present in the document only when some completed (zero otherwise).
    flush: OpStats = field(default_factory=OpStats.zero)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stats:
        # `trim` is additive in schema version 1: documents from before it have none.
        trim = OpStats.from_dict(d["trim"]) if isinstance(d, dict) and "trim" in d else OpStats.zero()
        # `flush` is written only when a Device program completed flushes (the schema allows
        # null for it too): none is zero requests.
        flush = OpStats.from_dict(d["flush"]) if isinstance(d, dict) and d.get("flush") is not None else OpStats.zero()
        return cls(**{op: OpStats.from_dict(_get(d, op)) for op in _OPS if op != "trim"}, trim=trim, flush=flush)


@record(frozen=True)
class FlashStats(_DictLike):
    """Operations executed by the flash back end, user and GC traffic together."""

    page_reads: int
    page_programs: int
    block_erases: int
    multiplane_reads: int
    multiplane_programs: int
    multiplane_erases: int
    bus_bytes: int
    #: GC pages moved by on-die copyback (``ftl.gc_copyback``), without crossing the channel;
    #: they are included in ``page_reads`` and ``page_programs``.
    copyback_programs: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlashStats:
        return _pick(cls, d)


@record(frozen=True)
class MergeCounts(_DictLike):
    """Merges of block and hybrid mapping (``ftl.mapping``, docs/ftl.md)."""

    #: A log block written in order over the whole block became the data block (no copy).
    switch: int
    #: A log block written in order from offset 0 took copies of the rest, then switched.
    partial: int
    #: A new block took the newest copy of every page (every overwrite under block mapping).
    full: int
    #: Pages copied by merges (one read and one program each).
    page_copies: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MergeCounts:
        return _pick(cls, d)


@record(frozen=True)
class FtlStats(_DictLike):
    user_page_writes: int
    gc_runs: int
    gc_page_moves: int
    #: Flash page programs per user page write; None when no user data reached flash (a
    #: read-only run, or writes all still in the write cache). The JSON document keeps 0 there.
    write_amplification: float | None
    rmw_reads: int
    unmapped_page_reads: int
    # Added within schema version 1; 0 when reading a document from before them.
    #: GC runs started by idle-time (background) collection; included in ``gc_runs``.
    gc_background_runs: int = 0
    #: GC page moves done by on-die copyback; included in ``gc_page_moves``.
    gc_copyback_moves: int = 0
    #: Blocks static wear levelling made the GC victim; included in ``gc_runs``.
    wl_migrations: int = 0
    #: TRIM (deallocate) requests handled by the FTL.
    trim_requests: int = 0
    #: Mapped logical pages the TRIM requests unmapped.
    trimmed_pages: int = 0
    #: Never-written pages mapped by their first read (``ftl.unmapped_reads = "read_flash"``).
    pages_mapped_by_reads: int = 0
    #: Merges of block and hybrid mapping; None under page mapping (the document omits them).
    merges: MergeCounts | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FtlStats:
        # A ratio over no user page writes is undefined, not 0 (what the document holds).
        wa = _get(d, "write_amplification") if _get(d, "user_page_writes") else None
        m = d.get("merges") if isinstance(d, dict) else None
        return _pick(cls, d, write_amplification=wa, merges=None if m is None else MergeCounts.from_dict(m))


@record(frozen=True)
class CacheCounts(_DictLike):
    """What the DRAM data cache did (docs/cache.md): for a flow, its requests' pages (and the
    write-backs of the data it wrote); for the device, every flow together."""

    read_page_hits: int
    read_page_partial_hits: int
    read_page_misses: int
    read_sectors_from_dram: int
    read_sectors_from_flash: int
    read_fills: int
    write_page_hits: int
    write_page_misses: int
    write_sectors: int
    #: Dirty sectors overwritten in DRAM before a write-back: they never reach flash.
    write_absorbed_sectors: int
    #: Write requests that waited for room (backpressure), and their total wait.
    writes_waited: int
    write_wait_us: float
    clean_evictions: int
    dirty_evictions: int
    #: Page programs through the FTL for evictions, flushes and FUA writes.
    write_back_pages: int
    write_back_sectors: int
    flush_write_backs: int
    fua_write_backs: int
    flushes: int
    dirty_pages_at_end: int
    #: Read pages all of whose sectors were cached, over all read pages; 0.0 without reads.
    read_page_hit_rate: float
    #: ``cache.write_back = "mqsim"``: write-backs of pages not written in the current
    #: one-second window, started by the write (part of ``write_back_pages``); absent, 0.
    cold_write_backs: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CacheCounts:
        return _pick(cls, d)


@record(frozen=True)
class CacheResult(_DictLike):
    """The ``device.cache`` part: the data cache of the device (absent with
    ``cache.mode = "off"``)."""

    mode: str
    capacity_pages: int
    pages_at_end: int
    dram_accesses: int
    dram_busy_us: float
    totals: CacheCounts

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CacheResult:
        return _pick(cls, d, totals=CacheCounts.from_dict(_get(d, "totals")))


@record(frozen=True)
class CmtLookups(_DictLike):
    """Lookups in the cached mapping table (docs/ftl.md), one per user page transaction: for
    a flow, or every flow together."""

    read_hits: int
    read_misses: int
    #: read_hits / (read_hits + read_misses); 0.0 without lookups.
    read_hit_rate: float
    write_hits: int
    write_misses: int
    write_hit_rate: float
    hit_rate: float
    #: Translation-page reads issued for the misses.
    mapping_reads: int
    #: Translation-page write-backs of dirty pages evicted for the pages these lookups (and
    #: TRIMs) brought in; GC's write-backs belong to no flow.
    eviction_writebacks: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CmtLookups:
        return _pick(cls, d)


@record(frozen=True)
class SuspensionResult(_DictLike):
    """The ``device.suspension`` part: program/erase suspensions (``tsu.suspension``;
    docs/tsu.md)."""

    program_suspensions: int
    erase_suspensions: int
    #: What the suspended operations were delayed by (suspension to resumption plus the
    #: resume cost), summed, microseconds.
    suspended_us: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SuspensionResult:
        return _pick(cls, d)


@record(frozen=True)
class HostResult(_DictLike):
    """The ``device.host`` part: how the host learned of completions (``host.completion`` =
    ``"interrupt"`` or ``"polled"``; docs/host.md)."""

    completion: str
    cores: int
    #: Interrupt vectors (0 when polled).
    vectors: int
    completions: int
    #: MSI-X messages sent, and how many of them the aggregation timer sent.
    interrupts: int
    timer_interrupts: int
    completions_per_interrupt: float
    largest_batch: int
    polls: int
    cq_doorbells: int
    #: Busy time of each host core, microseconds.
    core_busy_us: list[float]
    #: Queues (64 B + 16 B per entry per flow) and the most outstanding data buffers.
    host_memory_bytes: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostResult:
        return _pick(cls, d, core_busy_us=list(_get(d, "core_busy_us")))


@record(frozen=True)
class CmtResult(_DictLike):
    """The ``device.cmt`` part: the cached mapping table and its flash traffic (absent with
    ``ftl.cmt.mode = "ideal"``; docs/results.md has every field)."""

    lookups: CmtLookups
    capacity_entries: int
    entry_bytes: int
    entries_per_translation_page: int
    translation_pages: int
    cached_entries: int
    coalesced_misses: int
    lookup_reads: int
    writeback_reads: int
    eviction_writebacks: int
    gc_writebacks: int
    gc_updates_cached: int
    gc_updates_uncached: int
    trim_updates: int
    mapping_page_writes: int
    gc_translation_moves: int
    #: Translation-page programs over all page programs.
    write_amplification_share: float
    #: Translation-page reads over all page reads.
    read_share: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CmtResult:
        return _pick(cls, d, lookups=CmtLookups.from_dict(_get(d, "lookups")))


@record(frozen=True)
class EraseHistogram(_DictLike):
    """Blocks by erase count: ``count[i]`` blocks have an erase count in
    ``[bin_start[i], bin_start[i] + bin_width)``."""

    bin_start: list[int] = field(hash=False)
    bin_width: int
    count: list[int] = field(hash=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EraseHistogram:
        return cls(bin_start=list(_get(d, "bin_start")), bin_width=_get(d, "bin_width"), count=list(_get(d, "count")))


@record(frozen=True)
class EraseCounts(_DictLike):
    """Erase counts of every flash block at the end of the run, preconditioning included (a
    measure of wear and of its evenness)."""

    blocks: int
    min: int
    mean: float
    max: int
    #: Population standard deviation over blocks.
    std: float
    histogram: EraseHistogram

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EraseCounts:
        return _pick(cls, d, histogram=EraseHistogram.from_dict(_get(d, "histogram")))


@record(frozen=True)
class DeviceResult(_DictLike):
    """The ``device`` part of a :class:`Result`: all flows together, flash and FTL counters,
    wear and the preconditioning record. (Not to be confused with :class:`ssdkit.Device`, the
    step-by-step simulator.)"""

    capacity_bytes: int
    stats: Stats
    flash: FlashStats
    ftl: FtlStats
    #: None only for a document from before erase counts were reported.
    erase_counts: EraseCounts | None = None
    #: The preconditioning record: how the device was brought to its starting state. Its keys
    #: depend on the mode (see docs/results.md); for a run from a snapshot it is the record
    #: saved in the file plus ``snapshot`` (path) and ``snapshot_load_s``. Empty for a
    #: document from before preconditioning was recorded.
    precondition: dict[str, Any] = field(default_factory=dict, hash=False, repr=False)
    #: Where each random stream came from (the seed, and which streams derive from it).
    random_streams: dict[str, Any] = field(default_factory=dict, hash=False, repr=False)
    #: The DRAM data cache; None with ``cache.mode = "off"``.
    cache: CacheResult | None = None
    #: The cached mapping table; None with ``ftl.cmt.mode = "ideal"``.
    cmt: CmtResult | None = None
    #: Latencies as the application sees them (to the end of the ISR and DPC, or of the poll);
    #: None with ``host.completion = "none"`` (then they are ``stats``).
    app_stats: Stats | None = None
    #: Interrupts, polls and host CPU time; None with ``host.completion = "none"``.
    host: HostResult | None = None
    #: Program/erase suspensions; None with ``tsu.suspension = "none"``.
    suspension: SuspensionResult | None = None
    #: Where the requests' time went, step by step: ``{"read": {...}, "write": {...}}``, each
    #: with ``count`` and per step (``host_queue`` ... ``t_stall``, ``host_processing``) the
    #: latency summary in microseconds (docs/breakdown.md); None unless
    #: ``run.latency_breakdown``. :meth:`Result.breakdown` gives it as a table.
    latency_breakdown: dict[str, Any] | None = field(default=None, hash=False, repr=False)

    @property
    def precondition_mode(self) -> str | None:
        """``"fast"``, ``"write"``, ``"sequential"`` or ``"empty"`` (None if unrecorded)."""
        return self.precondition.get("mode")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeviceResult:
        erase = d.get("erase_counts") if isinstance(d, dict) else None
        return cls(
            capacity_bytes=_get(d, "capacity_bytes"),
            stats=Stats.from_dict(_get(d, "stats")),
            flash=FlashStats.from_dict(_get(d, "flash")),
            ftl=FtlStats.from_dict(_get(d, "ftl")),
            erase_counts=None if erase is None else EraseCounts.from_dict(erase),
            precondition=dict(d.get("precondition") or {}),
            random_streams=dict(d.get("random_streams") or {}),
            cache=CacheResult.from_dict(d["cache"]) if isinstance(d, dict) and d.get("cache") else None,
            cmt=CmtResult.from_dict(d["cmt"]) if isinstance(d, dict) and d.get("cmt") else None,
            app_stats=Stats.from_dict(d["app_stats"]) if isinstance(d, dict) and d.get("app_stats") else None,
            host=HostResult.from_dict(d["host"]) if isinstance(d, dict) and d.get("host") else None,
            suspension=(
                SuspensionResult.from_dict(d["suspension"]) if isinstance(d, dict) and d.get("suspension") else None
            ),
            latency_breakdown=d.get("latency_breakdown") if isinstance(d, dict) else None,
        )


@record(frozen=True)
class FlowResult(_DictLike):
    index: int
    name: str
    completed: int
    #: Most requests of this flow inside the device at once (NVMe fetch window occupancy).
    max_in_device: int
    stats: Stats
    #: Requests handed to the host (equals ``completed`` unless the run was capped).
    issued: int = 0
    #: Issued requests over the span of their arrival (open loop) or submission times.
    arrival_rate_iops: float = 0.0
    #: NVMe submission-queue priority class.
    priority: str = "medium"
    #: Trace flows: what the reader and the replayer did (path, format, lines, records,
    #: skipped_malformed, no_data, not_requests, filtered_out, folded, aligned,
    #: backwards_clamped); None for synthetic flows.
    trace: dict[str, Any] | None = None
    #: The flow's active interval in seconds: its first request's arrival to its last
    #: completion (0 when it completed nothing). ``stats`` rates are over this interval.
    active_time_s: float = 0.0
    #: Pages GC moved whose data this flow wrote last (runs of 2 to 255 flows); None otherwise.
    gc_page_moves: int | None = None
    #: What the data cache did for this flow; None with ``cache.mode = "off"``.
    cache: CacheCounts | None = None
    #: This flow's lookups in the cached mapping table; None with ``ftl.cmt.mode = "ideal"``.
    cmt: CmtLookups | None = None
    #: This flow's latencies as its application sees them; None with ``host.completion =
    #: "none"``.
    app_stats: Stats | None = None
    #: As :attr:`DeviceResult.latency_breakdown`, for this flow.
    latency_breakdown: dict[str, Any] | None = field(default=None, hash=False, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowResult:
        cache = d.get("cache") if isinstance(d, dict) else None
        cmt = d.get("cmt") if isinstance(d, dict) else None
        app = d.get("app_stats") if isinstance(d, dict) else None
        return _pick(
            cls,
            d,
            stats=Stats.from_dict(_get(d, "stats")),
            cache=None if cache is None else CacheCounts.from_dict(cache),
            cmt=None if cmt is None else CmtLookups.from_dict(cmt),
            app_stats=None if app is None else Stats.from_dict(app),
        )


@record(frozen=True, eq=False)
class Precondition:
    """What :func:`ssdkit.precondition` did and wrote. ``raw`` is the whole record (its other
    keys depend on the mode; see docs/results.md), the same object a run from the snapshot
    reports as ``device.precondition``."""

    #: ``"fast"``, ``"write"``, ``"sequential"`` or ``"empty"``.
    mode: str
    #: Wall time of preconditioning (excludes building the device and saving the file).
    wall_time_s: float
    #: Path of the snapshot file written.
    snapshot: str
    snapshot_bytes: int
    snapshot_save_s: float
    raw: dict[str, Any] = field(repr=False)

    @property
    def model(self) -> str | None:
        """The analytical model of fast mode (None for the other modes)."""
        return self.raw.get("model")

    @property
    def write_amplification(self) -> float | None:
        """Predicted (fast mode) or measured (write mode) steady-state write amplification;
        None for sequential and empty."""
        for key in ("predicted_write_amplification", "write_amplification"):
            if isinstance(self.raw.get(key), (int, float)):
                return float(self.raw[key])
        return None

    @classmethod
    def from_json(cls, text: str) -> Precondition:
        return cls.from_dict(_json.loads(text))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Precondition:
        return _pick(cls, d, raw=d)

    def to_json(self, indent: int | None = 2) -> str:
        return _json.dumps(self.raw, indent=indent)

    def summary(self) -> str:
        """One paragraph: mode, model, predicted or measured WA, time, the file and its size."""
        text = f"Preconditioned in mode {_describe_precondition(self.raw, took=False)}"
        if self.model:
            text += f" (model: {self.model})"
        text += (
            f" in {_duration(self.wall_time_s)}; saved snapshot {self.snapshot}:"
            f" {self.snapshot_bytes:,} bytes ({_size(self.snapshot_bytes)}) in {_duration(self.snapshot_save_s)}."
        )
        return text

    def __str__(self) -> str:
        return self.summary()


@record(frozen=True, eq=False)
class TimeSeries:
    """Figures per window of ``run.timeseries_window_ms`` (docs/results.md, "Time
    series"): window ``i`` covers ``[start_ps[i], start_ps[i+1])``, the last one ends at
    ``end_ps``. ``flows[k]`` and ``device`` map each column name to one value per window.
    :meth:`Result.to_pandas` with ``kind="timeseries"`` gives them as one tidy frame."""

    window_ps: int
    end_ps: int
    start_ps: list[int] = field(repr=False)
    flows: list[dict[str, list[Any]]] = field(repr=False)
    device: dict[str, list[Any]] = field(repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TimeSeries:
        ts = cls(
            window_ps=_get(d, "window_ps"),
            end_ps=_get(d, "end_ps"),
            start_ps=list(_get(d, "start_ps")),
            flows=[dict(f) for f in _get(d, "flows")],
            device=dict(_get(d, "device")),
        )
        n = len(ts.start_ps)
        for where, cols in [(f"flows[{i}]", f) for i, f in enumerate(ts.flows)] + [("device", ts.device)]:
            for k, v in cols.items():
                if len(v) != n:
                    raise SsdkitError(f"result document: timeseries.{where}.{k} has {len(v)} values for {n} windows")
        return ts

    @property
    def windows(self) -> int:
        return len(self.start_ps)


@record(frozen=True)
class WindowCheck(_DictLike):
    """The steady-state criteria of the SNIA Solid State Storage Performance Test
    Specification over one measurement window (rounds ``first_round`` to ``last_round``) of
    the tracking variable y: ``data_ok`` when max(y) - min(y) is at most
    ``data_excursion_limit`` (20 % of the ``average``), ``slope_ok`` when the least-squares
    line's change across the window, ``|fit_last - fit_first|``, is at most
    ``slope_excursion_limit`` (10 % of it); ``steady`` when both hold."""

    first_round: int
    last_round: int
    average: float
    data_excursion: float
    data_excursion_limit: float
    data_ok: bool
    #: Slope of the least-squares line, per round.
    slope: float
    #: The line's value at the first and the last round of the window.
    fit_first: float
    fit_last: float
    slope_excursion: float
    slope_excursion_limit: float
    slope_ok: bool
    steady: bool

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WindowCheck:
        return _pick(cls, d)


@record(frozen=True)
class RoundFlow(_DictLike):
    """One flow's requests in one round; latencies None when it completed none."""

    completed: int
    bytes: int
    iops: float
    mean_latency_us: float | None
    p99_latency_us: float | None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RoundFlow:
        return _pick(cls, d)


@record(frozen=True)
class SteadyRound(_DictLike):
    """One round, ``[start_ps, end_ps)`` of simulated time, numbered from 1: the requests
    completed in it (all flows; every op), their rates and latencies (None without any), the
    device's free blocks at its end, GC runs, programs and write amplification in it, the same
    request figures per flow, and the criteria over the window ending with it (None before the
    fifth round, for an incomplete round, or when a round of the window completed nothing)."""

    round: int
    start_ps: int
    end_ps: int
    #: A full round; only the last can be cut short (workload's end, time cap).
    complete: bool
    completed: int
    bytes: int
    iops: float
    bandwidth_bytes_per_s: float
    mean_latency_us: float | None
    p99_latency_us: float | None
    free_blocks: int
    gc_runs: int
    user_page_writes: int
    page_programs: int
    write_amplification: float | None
    flows: list[RoundFlow] = field(hash=False, repr=False)
    window: WindowCheck | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SteadyRound:
        w = d.get("window") if isinstance(d, dict) else None
        return _pick(
            cls,
            d,
            flows=[RoundFlow.from_dict(f) for f in _get(d, "flows")],
            window=None if w is None else WindowCheck.from_dict(w),
        )


@record(frozen=True)
class SteadyVerdict(_DictLike):
    """Whether a window met both criteria: ``steady_round`` is the first round whose window
    did (None if none did), ``window`` that window (else the last one judged; None with fewer
    than five complete rounds). ``ended_by``: ``"steady"``, ``"max_rounds"``, ``"workload"``
    (its own request, byte or time limit, or a trace's end) or ``"time_cap"``;
    ``after_rounds_completed``: requests in flight when the rounds ended, completed after
    them."""

    steady: bool
    steady_round: int | None
    window: WindowCheck | None
    complete_rounds: int
    ended_by: str
    after_rounds_completed: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SteadyVerdict:
        w = d.get("window") if isinstance(d, dict) else None
        return _pick(cls, d, window=None if w is None else WindowCheck.from_dict(w))


@record(frozen=True)
class SteadyState(_DictLike):
    """The rounds of ``[steady_state]`` (docs/results.md, "Steady state") and their verdict
    by the steady-state criteria of the SNIA Solid State Storage Performance Test
    Specification. :meth:`Result.to_pandas` with ``kind="rounds"`` gives the rounds as a tidy
    frame."""

    #: ``"iops"`` or ``"mean_latency"``: the tracking variable, all flows together.
    track: str
    round_ps: int
    max_rounds: int
    stop_when_steady: bool
    #: 5, 0.2 and 0.1: the window and the limits as fractions of its average.
    window_rounds: int
    data_excursion_limit_fraction: float
    slope_excursion_limit_fraction: float
    rounds: list[SteadyRound] = field(hash=False, repr=False)
    verdict: SteadyVerdict = field(hash=False)
    #: How the round length was picked without ``steady_state.round_ms`` (``at_ps``,
    #: ``from_ps``, ``requests``, ``after_write_back``, ``lengthened_at_rounds``); None with it.
    round_picked: dict[str, Any] | None = field(default=None, hash=False)

    @property
    def steady(self) -> bool:
        return self.verdict.steady

    @property
    def steady_round(self) -> int | None:
        return self.verdict.steady_round

    def tracked(self, r: SteadyRound | RoundFlow) -> float | None:
        """The tracking variable of a round (IOPS, or mean latency in microseconds)."""
        return r.iops if self.track == "iops" else r.mean_latency_us

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SteadyState:
        return _pick(
            cls,
            d,
            rounds=[SteadyRound.from_dict(r) for r in _get(d, "rounds")],
            verdict=SteadyVerdict.from_dict(_get(d, "verdict")),
        )

    def summary(self) -> list[str]:
        """The rounds as a short table (all of them up to 30; otherwise the first 3 and the
        last 22) and the verdict, as lines of text."""
        what = "IOPS" if self.track == "iops" else "mean latency"
        length = _duration(self.round_ps / 1e12)
        lines = [f"steady state (SNIA PTS criteria): {what} in rounds of {length}, window of {self.window_rounds}"]
        lines += self._picked_lines()
        head = ["round", "start ms", "requests", "IOPS", "mean us", "p99 us", "WA", "data", "slope", ""]
        # Enough decimals that consecutive starts differ.
        round_ms = self.round_ps / 1e9
        decimals = next((d for d, at in enumerate((10, 1, 0.1)) if round_ms >= at), 3)
        body: list[list[str] | None] = []
        shown = self.rounds if len(self.rounds) <= 30 else [*self.rounds[:3], None, *self.rounds[-22:]]
        for r in shown:
            if r is None:
                body.append(None)
                continue
            w = r.window
            body.append(
                [
                    f"{r.round}" + ("" if r.complete else "*"),
                    f"{r.start_ps / 1e9:,.{decimals}f}",
                    f"{r.completed:,}",
                    f"{r.iops:,.0f}",
                    "-" if r.mean_latency_us is None else f"{r.mean_latency_us:,.1f}",
                    "-" if r.p99_latency_us is None else f"{r.p99_latency_us:,.1f}",
                    "-" if r.write_amplification is None else f"{r.write_amplification:.2f}",
                    "-" if w is None else _pct(w.data_excursion, w.average),
                    "-" if w is None else _pct(w.slope_excursion, w.average),
                    "" if w is None else ("steady" if w.steady else ""),
                ]
            )
        rows = [row for row in body if row is not None]
        width = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]

        def line(cells: list[str]) -> str:
            return "  ".join(c.rjust(width[i]) for i, c in enumerate(cells)).rstrip()

        lines.append(" " * (sum(width[:7]) + 2 * 7) + "window excursion")
        lines.append(line(head))
        for row in body:
            lines.append("  ..." if row is None else line(row))
        if any(not r.complete for r in self.rounds):
            lines.append("  * incomplete round, not judged")
        lines += self._verdict_lines()
        return lines

    def _picked_lines(self) -> list[str]:
        p = self.round_picked
        if not p:
            return []
        n, wb = p["requests"], p["after_write_back"]
        if n >= 1000:
            took = _duration((p["at_ps"] - p["from_ps"]) / 1e12)
            since = f" from the write cache's first write-back at {_duration(p['from_ps'] / 1e12)}" if wb else ""
            out = [
                "round length picked from the run (steady_state.round_ms sets it):",
                f"  {n:,} requests in {took}{since}",
            ]
        else:
            before = "the write cache wrote anything back" if wb and not n else "1,000 requests had completed"
            out = [f"round length not picked: the run ended before {before}; set steady_state.round_ms"]
        for k in p.get("lengthened_at_rounds", []):
            out.append(f"  lengthened from round {k} (round {k - 1} held fewer than 250 requests); windows start again")
        return out

    def _verdict_lines(self) -> list[str]:
        v = self.verdict
        unit, fmt = (" IOPS", ",.0f") if self.track == "iops" else (" us", ",.1f")
        out = []
        w = v.window
        if w is not None:
            figures = (
                f"average {w.average:{fmt}}{unit}, data excursion {_pct(w.data_excursion, w.average)} "
                f"{'<=' if w.data_ok else '>'} {self.data_excursion_limit_fraction:.0%}, slope excursion "
                f"{_pct(w.slope_excursion, w.average)} {'<=' if w.slope_ok else '>'} "
                f"{self.slope_excursion_limit_fraction:.0%}"
            )
        if v.steady and w is not None:
            out.append(f"verdict: steady from round {v.steady_round} (window rounds {w.first_round}-{w.last_round})")
            out.append(f"  {figures}")
        elif w is not None:
            out.append(f"verdict: not steady; last window, rounds {w.first_round}-{w.last_round}:")
            out.append(f"  {figures}")
        else:
            out.append(
                f"verdict: not steady: {v.complete_rounds} complete rounds, the window needs {self.window_rounds}"
            )
        why = {
            "steady": "at steady state",
            "max_rounds": f"after the last round (max_rounds {self.max_rounds})",
            "workload": "by the workload's own end (its request, byte or time limit, or its trace)",
            "time_cap": "by the time cap (run.max_simulated_ms)",
        }.get(v.ended_by, v.ended_by)
        n = v.after_rounds_completed
        after = f"; {n:,} request{'s' * (n != 1)} in flight completed after them" if n else ""
        out.append(f"rounds ended {why}{after}")
        return out


@record(frozen=True)
class FlowFairness:
    """One flow's response times alone and shared (microseconds, mean over its reads and
    writes) and its slowdown."""

    index: int
    name: str
    rt_alone_us: float
    rt_shared_us: float
    slowdown: float


@record(frozen=True)
class Fairness:
    """Slowdown per flow, fairness F = min S / max S and weighted speedup WS = sum of
    RT_alone / RT_shared. The alone runs' results are not kept (with many flows they would
    not fit in memory): ``flows[k].rt_alone_us`` is what the metrics take from flow k's."""

    flows: list[FlowFairness]
    fairness: float
    weighted_speedup: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "fairness": self.fairness,
            "weighted_speedup": self.weighted_speedup,
            "flows": [
                {
                    "index": f.index,
                    "name": f.name,
                    "rt_alone_us": f.rt_alone_us,
                    "rt_shared_us": f.rt_shared_us,
                    "slowdown": f.slowdown,
                }
                for f in self.flows
            ],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fairness:
        return cls(
            flows=[FlowFairness(**f) for f in d["flows"]],
            fairness=d["fairness"],
            weighted_speedup=d["weighted_speedup"],
        )

    def summary(self) -> list[str]:
        lines = ["fairness (MQSim paper, FAST'18: S = RT_shared / RT_alone, F = min S / max S)"]
        lines.append(f"  {'flow':<20} {'RT alone us':>12} {'RT shared us':>13} {'slowdown':>9}")
        for f in self.flows:
            lines.append(f"  {f.name[:20]:<20} {f.rt_alone_us:>12.2f} {f.rt_shared_us:>13.2f} {f.slowdown:>9.3f}")
        lines.append(f"  fairness F {self.fairness:.4f}   weighted speedup WS {self.weighted_speedup:.4f}")
        return lines


# eq=False: equality of two runs is a question about their JSON (see the tests), and the
# dict fields would make a generated __hash__ raise anyway.
@record(frozen=True, eq=False)
class Result:
    """The outcome of one run. Build with :meth:`from_json` or get one from ``ssdkit.run``."""

    schema_version: int
    ssdkit_version: str
    seed: int
    config_hash: str
    simulated_time_ps: int
    simulated_time_s: float
    wall_time_s: float
    events: int
    events_per_wall_s: float
    requests_per_wall_s: float
    stopped_by_time_cap: bool
    device: DeviceResult
    flows: list[FlowResult]
    config: dict[str, Any] = field(repr=False)
    raw: dict[str, Any] = field(repr=False)
    #: Significant digits of the latency histograms (3: percentiles within 0.1 %).
    latency_histogram_significant_digits: int = 3
    #: Every completed request, when the run was asked for it (``ssdkit.run(...,
    #: request_log=True)``); otherwise None. Not part of the JSON document.
    request_log: pandas.DataFrame | None = field(default=None, repr=False)
    #: Figures per window, when ``run.timeseries_window_ms`` > 0; otherwise None.
    timeseries: TimeSeries | None = field(default=None, repr=False)
    #: Time of the last request's completion (``simulated_time_ps`` ends the measured window:
    #: the device going idle with ``run.end = "idle"``).
    last_completion_ps: int = 0
    #: When the device went idle after the last completion; None when the run stopped at the
    #: last completion (``run.end = "last_completion"``) or by the time cap.
    device_idle_ps: int | None = None
    #: Work done after the last completion (``time_ps``, ``page_reads``, ``page_programs``,
    #: ``block_erases``, ``gc_runs``, ``gc_page_moves``), with ``run.end = "idle"``.
    after_last_completion: dict[str, int] | None = field(default=None, repr=False)
    #: GC work left when the run stopped at its last completion (``free_blocks``,
    #: ``planes_below_gc_start``, ``free_pages_short_of_gc_start``, ``planes_collecting``,
    #: ``gc_moves_pending``); None otherwise.
    backlog: dict[str, int] | None = field(default=None, repr=False)
    #: The rounds and the SNIA PTS steady-state verdict, when ``steady_state.enabled``
    #: (``ssdkit.run(..., steady_state=True)``, ``ssdkit run --steady-state``); otherwise None.
    steady_state: SteadyState | None = field(default=None, repr=False)
    #: What ``ssdkit serve`` did as an NBD server (docs/serve.md): ``clock``, ``uri``,
    #: ``connections``, ``requests``, ``errors``, real-clock ``lateness`` (microseconds), the
    #: data ``store``; None for batch runs and step-by-step devices.
    emulator: dict[str, Any] | None = field(default=None, repr=False)
    #: Slowdowns, fairness F and weighted speedup, when the run was asked for them
    #: (``ssdkit.run(..., fairness=True)``, ``ssdkit run --fairness``); otherwise None.
    fairness: Fairness | None = field(default=None, repr=False)

    @property
    def plot(self) -> Plotter:
        """The plots of this result (matplotlib figures): ``r.plot.cdf()``, ``percentiles()``,
        ``timeseries()``, ``device()``, ``erase_counts()``, ``breakdown()``, ``fairness()``
        (``ssdkit.plot``, drawn with matplotlib)."""
        return Plotter(self)

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.from_dict(_json.loads(text))

    @classmethod
    def _from_core(cls, text: str, doc: dict[str, Any] | None = None) -> Result:
        """The result of the core's document ``text`` (``_native.run``), which the core writes
        as ``json.dumps(doc, indent=2)`` would; kept for :meth:`_document_text`. ``doc``: the
        document as ``json.loads(text)`` gives it, when the core built it (``parsed=True``)."""
        r = cls.from_dict(_json.loads(text) if doc is None else doc)
        object.__setattr__(r, "_core_text", (r.raw, text))
        return r

    def _document_text(self) -> str:
        """``to_json()`` where nothing has changed ``raw`` since the core wrote it (as in
        ``ssdkit run -o``, which writes it at once): the core's text, without encoding the
        document again (4-7 ms of a 1 M-request run). ``to_json`` itself always encodes
        ``raw``, so a document changed in place is written as it now is."""
        core = self.__dict__.get("_core_text")
        if core is not None and core[0] is self.raw:
            return core[1]
        return self.to_json()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SsdkitError(
                f"result schema version {version!r} is not supported; this ssdkit reads version {SCHEMA_VERSION}"
            )
        return _pick(
            cls,
            d,
            device=DeviceResult.from_dict(_get(d, "device")),
            flows=[FlowResult.from_dict(f) for f in _get(d, "flows")],
            raw=d,
            timeseries=None if d.get("timeseries") is None else TimeSeries.from_dict(d["timeseries"]),
            steady_state=None if d.get("steady_state") is None else SteadyState.from_dict(d["steady_state"]),
            fairness=None if d.get("fairness") is None else Fairness.from_dict(d["fairness"]),
        )

    @property
    def completed(self) -> int:
        """Requests completed over all flows."""
        return sum(f.completed for f in self.flows)

    def to_json(self, indent: int | None = 2) -> str:
        """The result document as the core wrote it (same keys, order and values)."""
        return _json.dumps(self.raw, indent=indent)

    def breakdown(self) -> pandas.DataFrame:
        """The latency breakdown (``run.latency_breakdown``) as a table: one row per flow (the
        device as flow ``None``), op and step in path order, with the step's latency summary in
        microseconds (``mean``, ``min``, ``p50`` ... ``max``). Raises :class:`ValueError` when
        the run did not record it."""
        import pandas as pd

        if self.device.latency_breakdown is None:
            raise ValueError("this run has no latency breakdown: run it with run.latency_breakdown = true")
        rows = []
        sources = [(None, self.device.latency_breakdown)] + [(f.index, f.latency_breakdown) for f in self.flows]
        for flow, bd in sources:
            for op in ("read", "write"):
                part = (bd or {}).get(op) or {}
                for step in (*BREAKDOWN_STEPS, "host_processing"):
                    v = part.get(step)
                    if v is not None:
                        rows.append({"flow": flow, "op": op, "step": step, "count": part.get("count", 0), **v})
        return pd.DataFrame(rows)

    def rows(self, trim: bool | None = None) -> list[tuple[str, int | None, str, OpStats]]:
        """``(scope, flow_index, op, stats)`` for every flow and then the device; op is read,
        write, all and, if ``trim`` (by default: when the run completed any TRIM request),
        trim, for every scope; then flush, for every scope, when a :class:`ssdkit.Device`
        program completed any flush."""
        if trim is None:
            trim = self.device.stats.trim.count > 0
        ops = _OPS if trim else tuple(op for op in _OPS if op != "trim")
        if self.device.stats.flush.count > 0:
            ops += ("flush",)
        scopes: list[tuple[str, int | None, Stats]] = [(f.name, f.index, f.stats) for f in self.flows]
        scopes.append(("device", None, self.device.stats))
        return [(name, idx, op, getattr(st, op)) for name, idx, st in scopes for op in ops]

    def to_pandas(self, kind: str = "summary", config_keys: Iterable[str] = ()) -> pandas.DataFrame:
        """The result as a tidy DataFrame.

        Column names say the figure, then the statistic, then the unit (``latency_p99_us``,
        ``bandwidth_MBps``), the same in every kind, in a sweep's table and in the latency
        log (``latency_ns``, one request's); ``flow`` is a flow's index (<NA> on ``device``
        rows) and ``scope`` its name or ``"device"``.

        ``kind="summary"`` (the default): one row per (scope, op); op is read, write, all
        (= read + write) and, when the run completed any TRIM request (flush), trim (flush):
        ``count``, ``bytes``, ``iops``, ``bandwidth_MBps`` (10^6 B/s) and ``latency_mean_us``,
        ``latency_min_us``, ``latency_p50_us``, ``latency_p90_us``, ``latency_p99_us``,
        ``latency_p99_9_us``, ``latency_p99_99_us``, ``latency_max_us``; the latencies of an
        op that completed no request are NaN (its count, bytes, IOPS and bandwidth are a true 0).

        ``kind="timeseries"``: one row per (scope, window) from ``run.timeseries_window_ms``:
        ``window``, ``start_ms``, ``end_ms``, then per flow ``completed``, ``bytes``, ``iops``,
        ``bandwidth_MBps``, ``latency_mean_us`` and ``latency_max_us`` (NaN in a window
        without completions), ``queue_depth`` (time-averaged). The ``device`` rows hold the
        flows together (counts, rates and queue depth summed, mean latency weighted by
        count, maximum of maxima) and the device's ``free_blocks`` (at the window's end),
        ``gc_runs``, ``gc_page_moves``, ``user_page_writes``, ``page_programs`` and
        ``write_amplification`` (NaN without user writes), which are <NA>/NaN on flow rows.
        A run without a time series raises :class:`SsdkitError` saying how to record one.

        ``kind="rounds"``: one row per (scope, round) of ``[steady_state]``: ``round``
        (from 1), ``start_ms``, ``end_ms``, ``complete``, then ``completed``, ``bytes``,
        ``iops``, ``bandwidth_MBps``, ``latency_mean_us`` and ``latency_p99_us`` (NaN without
        completions) per flow and for the ``device``, whose rows also hold ``free_blocks``,
        ``gc_runs``, ``user_page_writes``, ``page_programs``, ``write_amplification`` and
        the window ending with the round: ``window_average``, ``data_excursion``,
        ``data_excursion_limit``, ``slope_excursion``, ``slope_excursion_limit``,
        ``fit_first``, ``fit_last`` (NaN where no window was judged) and ``window_steady``
        (<NA> there). A run without rounds raises :class:`SsdkitError` saying how to ask
        for them.

        Both start with the columns ``config_hash`` and ``seed``, then one column per dotted
        key in ``config_keys`` (its value in this run's configuration, e.g.
        ``"flash.channels"`` or ``"flow.0.queue_depth"``); counts are nullable integers
        (``Int64``), names strings. :func:`ssdkit.combine` stacks several results this way.
        """
        if kind == "summary":
            df = self._summary_frame()
        elif kind == "timeseries":
            df = self._timeseries_frame()
        elif kind == "rounds":
            df = self._rounds_frame()
        else:
            raise ValueError(f"to_pandas: unknown kind {kind!r}; allowed: 'summary', 'timeseries', 'rounds'")
        import pandas as pd

        df.insert(0, "config_hash", pd.Series([self.config_hash] * len(df), dtype="string"))
        df.insert(1, "seed", pd.Series([self.seed] * len(df), dtype="UInt64"))
        for i, key in enumerate(config_keys):
            df.insert(2 + i, key, [self.config_value(key)] * len(df))
        return df

    def config_value(self, key: str) -> Any:
        """The value of a dotted configuration key in this run (``"flash.channels"``,
        ``"flow.0.queue_depth"``); KeyError naming the key if the configuration has none."""
        node: Any = self.config
        for part in key.split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise KeyError(f"configuration key `{key}`: `{part}` is not in this run's configuration")
        return node

    def _summary_frame(self) -> pandas.DataFrame:
        import numpy as np
        import pandas as pd  # deferred: the CLI should not pay pandas' import time

        rows = self.rows()
        nan = float("nan")

        def lat(s: OpStats, name: str) -> float:
            return getattr(s.latency, name) if s.count else nan

        cols: dict[str, Any] = {
            "scope": pd.Series([r[0] for r in rows], dtype="string"),
            "flow": pd.Series([r[1] for r in rows], dtype="Int64"),
            "op": pd.Series([r[2] for r in rows], dtype="string"),
            "count": pd.Series([r[3].count for r in rows], dtype="Int64"),
            "bytes": pd.Series([r[3].bytes for r in rows], dtype="Int64"),
            "iops": np.array([r[3].iops for r in rows], dtype=float),
            "bandwidth_MBps": np.array([r[3].bandwidth_MBps for r in rows], dtype=float),
        }
        for name in ("mean", "min", "p50", "p90", "p99", "p99_9", "p99_99", "max"):
            cols[f"latency_{name}_us"] = np.array([lat(r[3], name) for r in rows], dtype=float)
        return pd.DataFrame(cols)

    def _timeseries_frame(self) -> pandas.DataFrame:
        import numpy as np
        import pandas as pd

        ts = self.timeseries
        if ts is None:
            raise SsdkitError(
                "this result has no time series: run with run.timeseries_window_ms > 0 "
                "(CLI: --timeseries MS; Python: ssdkit.run(..., run__timeseries_window_ms=1))"
            )
        n = ts.windows
        start = np.asarray(ts.start_ps, dtype=np.float64)
        end = np.append(start[1:], float(ts.end_ps)) if n else start

        def f64(v: list[Any]) -> np.ndarray:
            return np.array([np.nan if x is None else x for x in v], dtype=float)

        parts = []
        per_flow = []
        for i, f in enumerate(ts.flows):
            d = {
                "completed": np.asarray(f["completed"], dtype=np.int64),
                "bytes": np.asarray(f["bytes"], dtype=np.int64),
                "iops": f64(f["iops"]),
                "bandwidth_MBps": f64(f["bandwidth_bytes_per_s"]) / 1e6,
                "latency_mean_us": f64(f["mean_latency_us"]),
                "latency_max_us": f64(f["max_latency_us"]),
                "queue_depth": f64(f["queue_depth"]),
            }
            per_flow.append(d)
            name = self.flows[i].name if i < len(self.flows) else str(i)
            parts.append((name, i, d))
        dev: dict[str, np.ndarray] = {}
        for k in ("completed", "bytes", "iops", "bandwidth_MBps", "queue_depth"):
            dev[k] = np.sum([d[k] for d in per_flow], axis=0) if per_flow else np.zeros(n)
        lat_sum = np.zeros(n)
        lat_max = np.full(n, np.nan)
        for d in per_flow:
            lat_sum += np.where(d["completed"] > 0, np.nan_to_num(d["latency_mean_us"]) * d["completed"], 0.0)
            lat_max = np.fmax(lat_max, d["latency_max_us"])  # fmax ignores NaN
        with np.errstate(invalid="ignore", divide="ignore"):
            dev["latency_mean_us"] = np.where(dev["completed"] > 0, lat_sum / np.maximum(dev["completed"], 1), np.nan)
        dev["latency_max_us"] = lat_max
        parts.append(("device", None, dev))
        dev_cols = ("free_blocks", "gc_runs", "gc_page_moves", "user_page_writes", "page_programs")
        frames = []
        for name, idx, d in parts:
            fr = pd.DataFrame(
                {
                    "scope": pd.Series([name] * n, dtype="string"),
                    "flow": pd.Series([idx] * n, dtype="Int64"),
                    "window": np.arange(n, dtype=np.int64),
                    "start_ms": start / 1e9,
                    "end_ms": end / 1e9,
                    "completed": pd.Series(d["completed"], dtype="Int64"),
                    "bytes": pd.Series(d["bytes"], dtype="Int64"),
                    "iops": d["iops"],
                    "bandwidth_MBps": d["bandwidth_MBps"],
                    "latency_mean_us": d["latency_mean_us"],
                    "latency_max_us": d["latency_max_us"],
                    "queue_depth": d["queue_depth"],
                }
            )
            for c in dev_cols:
                fr[c] = pd.Series(ts.device[c] if idx is None else [None] * n, dtype="Int64")
            fr["write_amplification"] = f64(ts.device["write_amplification"]) if idx is None else np.full(n, np.nan)
            frames.append(fr)
        return pd.concat(frames, ignore_index=True)

    def _rounds_frame(self) -> pandas.DataFrame:
        import numpy as np
        import pandas as pd

        ss = self.steady_state
        if ss is None:
            raise SsdkitError(
                "this result has no steady-state rounds: run with steady_state.enabled = true "
                "(CLI: --steady-state; Python: ssdkit.run(..., steady_state=True))"
            )
        rounds = ss.rounds
        n = len(rounds)

        def f64(v: list[Any]) -> np.ndarray:
            return np.array([np.nan if x is None else x for x in v], dtype=float)

        base = {
            "round": np.array([r.round for r in rounds], dtype=np.int64),
            "start_ms": np.array([r.start_ps for r in rounds], dtype=float) / 1e9,
            "end_ms": np.array([r.end_ps for r in rounds], dtype=float) / 1e9,
            "complete": np.array([r.complete for r in rounds], dtype=bool),
        }
        secs = (base["end_ms"] - base["start_ms"]) / 1e3
        scopes: list[tuple[str, int | None, list[Any]]] = [
            (self.flows[i].name if i < len(self.flows) else str(i), i, [r.flows[i] for r in rounds])
            for i in range(len(rounds[0].flows) if rounds else 0)
        ]
        scopes.append(("device", None, list(rounds)))
        dev_ints = ("free_blocks", "gc_runs", "user_page_writes", "page_programs")
        windows = ("average", "data_excursion", "data_excursion_limit", "slope_excursion")
        windows += ("slope_excursion_limit", "fit_first", "fit_last")
        frames = []
        for name, idx, rs in scopes:
            fr = pd.DataFrame(
                {
                    "scope": pd.Series([name] * n, dtype="string"),
                    "flow": pd.Series([idx] * n, dtype="Int64"),
                    **base,
                    "completed": pd.Series([r.completed for r in rs], dtype="Int64"),
                    "bytes": pd.Series([r.bytes for r in rs], dtype="Int64"),
                    "iops": f64([r.iops for r in rs]),
                    "bandwidth_MBps": np.divide(
                        np.array([r.bytes for r in rs], dtype=float) / 1e6,
                        secs,
                        out=np.zeros(n),
                        where=secs > 0,
                    ),
                    "latency_mean_us": f64([r.mean_latency_us for r in rs]),
                    "latency_p99_us": f64([r.p99_latency_us for r in rs]),
                }
            )
            device = idx is None
            for c in dev_ints:
                fr[c] = pd.Series([getattr(r, c) for r in rounds] if device else [None] * n, dtype="Int64")
            fr["write_amplification"] = f64([r.write_amplification for r in rounds] if device else [None] * n)
            for c in windows:
                col = "window_average" if c == "average" else c
                fr[col] = f64([getattr(r.window, c) if device and r.window else None for r in rounds])
            fr["window_steady"] = pd.Series(
                [r.window.steady if device and r.window else None for r in rounds], dtype="boolean"
            )
            frames.append(fr)
        return pd.concat(frames, ignore_index=True)

    def _repr_html_(self) -> str:
        """Jupyter's view: the headline facts and the summary frame as a table."""
        import html  # here, as shutil below: the command line's start-up skips them

        head = (
            f"<p><b>ssdkit {html.escape(self.ssdkit_version)}</b> &middot; seed {self.seed} &middot; "
            f"config {html.escape(self.config_hash)} &middot; {self.completed:,} requests in "
            f"{html.escape(_duration(self.simulated_time_s))} simulated &middot; write amplification "
            f"{html.escape(_wa_text(self.device))}</p>"
        )
        shown = self.to_pandas().drop(columns=["config_hash", "seed", "flow"])
        return head + shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:,.1f}")

    def summary(self, width: int | None = None) -> str:
        """A fixed-width text report: per-flow and device rows, flash and GC counters, times.
        The table fits ``width`` columns (default: 80, or the terminal's width when standard
        output is a wider terminal), leaving out the p50 and then the p99.9 latency where it
        would not fit."""
        shown = _rows_worth_showing(self.rows())
        if width is None:
            width = 80
            if sys.stdout.isatty():
                import shutil

                width = max(80, shutil.get_terminal_size((80, 24)).columns)
        lines = [
            (
                f"ssdkit {self.ssdkit_version}  seed {self.seed}  config {self.config_hash}"
                f"  capacity {self.device.capacity_bytes / 2**30:.1f} GiB"
            ),
            "",
        ]
        lines += _table(shown, width)
        dev = self.device
        fl, ftl = dev.flash, dev.ftl
        facts = []
        if dev.precondition:
            facts.append(("precondition", _describe_precondition(dev.precondition)))
            left_out = _left_out_of_prediction(dev)
            predicted = _num(dev.precondition, "predicted_write_amplification") is not None
            if left_out and predicted and dev.stats.write.count:
                facts.append(("", f"the prediction leaves out this run's {left_out}"))
            if "snapshot" in dev.precondition:
                load = dev.precondition.get("snapshot_load_s")
                took = f" (loaded in {_duration(load)})" if isinstance(load, (int, float)) else ""
                facts.append(("snapshot", f"{dev.precondition['snapshot']}{took}"))
        facts += [
            ("flash page reads", f"{fl.page_reads:,}"),
            ("flash page programs", f"{fl.page_programs:,}"),
            ("flash block erases", f"{fl.block_erases:,}"),
        ]
        if fl.copyback_programs:
            facts.append(("copyback programs", f"{fl.copyback_programs:,}"))
        facts += [
            ("GC runs", f"{ftl.gc_runs:,}"),
            ("GC page moves", f"{ftl.gc_page_moves:,}"),
        ]
        optional = [
            ("GC background runs", ftl.gc_background_runs),
            ("GC copyback moves", ftl.gc_copyback_moves),
            ("WL migrations", ftl.wl_migrations),
            ("TRIM requests", ftl.trim_requests),
            ("trimmed pages", ftl.trimmed_pages),
        ]
        facts += [(k, f"{v:,}") for k, v in optional if v]
        facts.append(("write amplification", _wa_text(dev)))
        if dev.cache is not None:
            t = dev.cache.totals
            read_pages = t.read_page_hits + t.read_page_partial_hits + t.read_page_misses
            hits = f"read hits {t.read_page_hit_rate:.1%}  " if read_pages else ""
            waited = f"  {t.writes_waited:,} writes waited for room" if t.writes_waited else ""
            backs = f"write-backs {t.write_back_pages:,}  dirty at end {t.dirty_pages_at_end:,}"
            facts.append(("data cache", f"{dev.cache.mode}, {dev.cache.capacity_pages:,} pages: {hits}{backs}{waited}"))
        if dev.cmt is not None:
            m = dev.cmt
            reads = m.lookup_reads + m.writeback_reads
            writes = (
                f"writes {m.mapping_page_writes:,}  moved by GC {m.gc_translation_moves:,}"
                f" ({m.write_amplification_share:.1%} of programs)"
            )
            text = f"{m.capacity_entries:,} entries: hit rate {m.lookups.hit_rate:.1%}  translation reads {reads:,}  {writes}"
            facts.append(("mapping cache", text))
        if dev.suspension is not None:
            su = dev.suspension
            text = (
                f"programs {su.program_suspensions:,}  erases {su.erase_suspensions:,}"
                f"  delaying them {su.suspended_us / 1e3:,.3f} ms in all"
            )
            facts.append(("suspensions", text))
        if dev.host is not None:
            h = dev.host
            if h.completion == "interrupt":
                how = (
                    f"interrupts {h.interrupts:,} ({h.completions_per_interrupt:.2f} completions each,"
                    f" {h.timer_interrupts:,} by the timer)"
                )
            else:
                how = f"polls {h.polls:,}"
            busy = sum(h.core_busy_us) / 1e6
            mib = h.host_memory_bytes / 2**20
            facts.append(
                ("host", f"{h.completion}: {how}  {h.cores} cores busy {busy:.3f} s in all  memory {mib:.1f} MiB")
            )
            if dev.app_stats is not None:
                for op in ("read", "write"):
                    st = getattr(dev.app_stats, op)
                    if st.count:
                        facts.append(
                            (f"app {op} latency", f"mean {st.latency.mean:.1f} us  p99 {st.latency.p99:.1f} us")
                        )
        if dev.latency_breakdown:
            facts += _breakdown_facts(dev.latency_breakdown)
        if dev.erase_counts is not None:
            ec = dev.erase_counts
            facts.append(
                ("erase count", f"min {ec.min:,}  mean {ec.mean:,.1f}  max {ec.max:,}  ({ec.blocks:,} blocks)")
            )
        facts.append(("simulated time", _duration(self.simulated_time_s)))
        after = self.after_last_completion
        if after and after.get("time_ps"):
            facts.append(("last completion", _duration(self.last_completion_ps / 1e12)))
            facts.append(
                (
                    "after it",
                    (
                        f"{_duration(after['time_ps'] / 1e12)} of GC: {after['page_programs']:,} programs, "
                        f"{after['block_erases']:,} erases"
                    ),
                )
            )
        bl = self.backlog
        if bl:
            # Free space below the GC start point is owed only when GC refills it
            # (ftl.gc_refill); by default GC starts one collection per block opened, so only
            # collections under way are left.
            try:
                refill = bool(self.config_value("ftl.gc_refill"))
            except KeyError:
                refill = True  # documents from before the per-block trigger
            owed = [f"{bl['planes_collecting']:,} planes collecting, {bl['gc_moves_pending']:,} moves pending"]
            if refill and bl.get("free_pages_short_of_gc_start"):
                owed.append(
                    f"{bl['planes_below_gc_start']:,} planes {bl['free_pages_short_of_gc_start']:,} free pages "
                    "short of their GC start point"
                )
            if bl.get("planes_collecting") or bl.get("gc_moves_pending") or len(owed) > 1:
                facts.append(
                    (
                        "warning",
                        (
                            f"stopped at the last completion with GC owed: {'; '.join(owed)}; rates and WA "
                            'exclude that work (run.end = "idle" includes it)'
                        ),
                    )
                )
        facts += [
            ("wall time", f"{self.wall_time_s:.3f} s"),
            ("events", f"{self.events:,}"),
            ("events/s", f"{self.events_per_wall_s:,.0f}"),
        ]
        for f in self.flows:
            t = f.trace
            if t:
                extra = [
                    f"{t[k]:,} {k.replace('_', ' ')}"
                    for k in ("skipped_malformed", "no_data", "filtered_out", "folded", "aligned", "backwards_clamped")
                    if t.get(k)
                ]
                more = f" ({', '.join(extra)})" if extra else ""
                facts.append((f"trace {f.name}", f"{t['format']}: {t['records']:,} records{more}"))
        if self.stopped_by_time_cap:
            facts.append(("stopped by", "run.max_simulated_ms time cap"))
        lines.append("")
        width = max(21, max(len(k) for k, _ in facts) + 2)
        lines += [f"{k:<{width}}{v}" for k, v in facts]
        if self.steady_state is not None:
            lines += ["", *self.steady_state.summary()]
        if self.fairness is not None:
            lines += ["", *self.fairness.summary()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def load(path: str | os.PathLike[str]) -> Result:
    """Reads a result file written by ``ssdkit run -o`` (or :meth:`Result.to_json`) back into
    a :class:`Result`. A missing or unreadable file, text that is not JSON, or a document of
    another schema version raises :class:`SsdkitError` naming the file."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SsdkitError(f"{p}: cannot read the result file: {e.strerror or e}") from None
    import json

    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise SsdkitError(f"{p}: line {e.lineno}, column {e.colno}: not a JSON result document: {e.msg}") from None
    if not isinstance(d, dict):
        raise SsdkitError(f"{p}: not a result document (a JSON {type(d).__name__}, expected an object)")
    try:
        return Result.from_dict(d)
    except SsdkitError as e:
        raise SsdkitError(f"{p}: {e}") from None


def _rows_worth_showing(rows: list[tuple[str, int | None, str, OpStats]]) -> list[tuple[str, str, OpStats]]:
    """Per scope, the read and write rows that have requests, "all" only when it adds
    something (for a mixed workload, or as the single row of a scope that completed no read
    or write), and "trim" ("flush") when the scope completed TRIM (flush) requests."""
    by_scope: dict[tuple[str, int | None], dict[str, OpStats]] = {}
    for scope, idx, op, s in rows:
        by_scope.setdefault((scope, idx), {})[op] = s
    out = []
    for (scope, _), by_op in by_scope.items():
        ops = [op for op in ("read", "write") if by_op[op].count > 0]
        if len(ops) != 1:
            ops.append("all")
        for op in ("trim", "flush"):
            if op in by_op and by_op[op].count > 0:
                ops.append(op)
        out += [(scope, op, by_op[op]) for op in ops]
    return out


def _num(rec: dict[str, Any], key: str) -> float | None:
    v = rec.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _describe_precondition(rec: dict[str, Any], took: bool = True) -> str:
    """One line: the mode, its headline figure (predicted or measured steady-state WA) and,
    if ``took``, how long preconditioning took."""
    parts = [str(rec.get("mode", "?"))]
    predicted = _num(rec, "predicted_write_amplification")
    if predicted is not None:
        # The mean-field model is of the FTL's GC alone (docs/ftl.md).
        parts.append(f"predicted WA {predicted:.3f} (FTL-only steady state)")
    measured = _num(rec, "write_amplification")
    if measured is not None:
        dw = _num(rec, "drive_writes")
        after = f" over {dw:.2f} drive writes" if dw is not None else ""
        stable = ", not stable" if rec.get("stable") is False else ""
        parts.append(f"measured WA {measured:.3f}{after}{stable}")
    wall = _num(rec, "wall_time_s")
    if took and wall is not None:
        parts.append(f"took {_duration(wall)}")
    return ", ".join(parts)


def _left_out_of_prediction(dev: DeviceResult) -> str:
    """What of the device adds flash writes that fast preconditioning's mean-field WA does
    not model: the write cache (partial pages, write-backs) and the mapping cache's
    translation pages; empty when neither is on."""
    parts = []
    if dev.cache is not None and dev.cache.mode in ("write", "read_write"):
        parts.append("write cache")
    if dev.cmt is not None:
        parts.append("mapping cache")
    return " and ".join(parts)


def _wa_text(dev: DeviceResult) -> str:
    """The measured write amplification, or why there is none."""
    wa = dev.ftl.write_amplification
    if wa is not None:
        return f"{wa:.3f}"
    writes = dev.stats.write.count
    if not writes:
        return "- (no writes)"
    held = " in the write cache" if dev.cache is not None and dev.cache.mode in ("write", "read_write") else ""
    return f"- (no flash writes yet: {writes:,} writes{held})"


def _pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole``."""
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _duration(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.3f} us"


def _get(d: dict[str, Any], key: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise SsdkitError(f"result document lacks `{key}`") from None
    except TypeError:
        raise SsdkitError(f"result document: expected an object holding `{key}`, got {type(d).__name__}") from None


def _pick(cls: Any, d: dict[str, Any], **given: Any) -> Any:
    """``cls`` from the keys of ``d`` that name its fields; keys it does not know are ignored
    so a newer core's extra fields do not break older readers."""
    kw = {}
    for f in fields(cls):
        if f.name in given:
            kw[f.name] = given[f.name]
        elif isinstance(d, dict) and f.name not in d and _has_default(f):
            continue  # added within the schema version; an older document lacks it
        elif isinstance(d, dict) and f.name not in d and _admits_none(f):
            kw[f.name] = None  # an optional field of the schema (docs/result.schema.json)
        else:
            kw[f.name] = _get(d, f.name)
    return cls(**kw)


def _has_default(f: Field) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _admits_none(f: Field) -> bool:
    """Whether the field's annotation (a string: annotations are postponed) allows None."""
    return isinstance(f.type, str) and f.type.replace(" ", "").endswith("|None")


def combine(
    results: Iterable[Result], kind: str = "summary", config_keys: Iterable[str] | None = None
) -> pandas.DataFrame:
    """Several results as one tidy frame: each result's :meth:`Result.to_pandas` (``kind``
    ``"summary"``, ``"timeseries"`` or ``"rounds"``) with its ``config_hash`` and ``seed``, and a column per
    configuration key in ``config_keys``: by default every dotted key whose value differs
    between the results (the swept keys, e.g. ``flash.channels`` or ``flow.0.queue_depth``),
    sorted; a key a result's configuration lacks is None there. Flow names (``flow.N.name``)
    are left out of that default: a preset's flow renamed by overrides (``randread-qd1``,
    ``randread-qd8``) is the same flow, named in the ``scope`` column."""
    import pandas as pd

    results = list(results)
    if not results:
        raise ValueError("combine: no results given")
    for i, r in enumerate(results):
        if not isinstance(r, Result):
            raise TypeError(f"combine: results[{i}] is a {type(r).__name__}, not an ssdkit Result")
    flat = [_flatten(r.config) for r in results]
    if config_keys is None:
        keys = sorted(
            {k for f in flat for k in f if not _is_flow_name(k) and any(g.get(k, _MISSING) != f[k] for g in flat)}
        )
    else:
        keys = list(config_keys)
    frames = []
    for r, f in zip(results, flat):
        df = r.to_pandas(kind)
        for i, k in enumerate(keys):
            df.insert(2 + i, k, [f.get(k)] * len(df))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


_MISSING = object()


#: The latency columns of the summary table, and the order in which they give way when the
#: table would be wider than the terminal.
_LATENCY_COLUMNS = ("mean", "p50", "p99", "p99_9", "max")
_DROPPABLE = ("p50", "p99_9")


def _table(shown: list[tuple[str, str, OpStats]], width: int) -> list[str]:
    """The summary's table, each column as wide as its widest cell, within ``width``."""

    def cells(s: OpStats, col: str) -> str:
        if col in _LATENCY_COLUMNS:
            return f"{getattr(s.latency, col):.1f}" if s.count else "-"
        return {"ops": f"{s.count:,}", "IOPS": f"{s.iops:,.0f}", "MB/s": f"{s.bandwidth_MBps:,.1f}"}[col]

    heads = {"p99_9": "p99.9"}
    dropped: list[str] = []
    while True:
        lat = [c for c in _LATENCY_COLUMNS if c not in dropped]
        cols = ["ops", "IOPS", "MB/s", *lat]
        body = [[scope, op] + [cells(s, c) for c in cols] for scope, op, s in shown]
        head = ["scope", "op"] + [heads.get(c, c) for c in cols]
        w = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
        # Two spaces between the name columns, the rates and the latencies; one elsewhere.
        gaps = ["", "  ", "  ", " ", " ", "  "] + [" "] * (len(lat) - 1)

        lines = [_line(r, w, gaps) for r in [head, *body]]
        total = len(lines[0])
        if total <= width or len(dropped) == len(_DROPPABLE):
            break
        dropped.append(_DROPPABLE[len(dropped)])
    lat_start = sum(w[:5]) + sum(len(g) for g in gaps[:6])
    caption = " " * lat_start + "latency (us)"
    return [caption, lines[0], "-" * total, *lines[1:]]


def _line(cells: list[str], w: list[int], gaps: list[str]) -> str:
    """Name columns left-aligned, figures right-aligned, each after its gap."""
    return "".join(gaps[i] + (c.ljust(w[i]) if i < 2 else c.rjust(w[i])) for i, c in enumerate(cells))


def _breakdown_facts(bd: dict[str, Any]) -> list[tuple[str, str]]:
    """One summary line per step of the latency breakdown: mean and p99 of reads and writes
    (microseconds); the response-time steps' means sum to the mean latency."""
    ops = [op for op in ("read", "write") if (bd.get(op) or {}).get("count")]
    if not ops:
        return []
    out = [("latency breakdown", "mean / p99 us per step; the means sum to the mean latency")]
    steps = [*BREAKDOWN_STEPS, "host_processing"]
    for step in steps:
        parts = []
        for op in ops:
            v = bd[op].get(step)
            if v is None:
                continue
            parts.append(f"{op} {v['mean']:10.3f} / {v['p99']:10.3f}")
        if parts:
            out.append((f"  {step}", "  ".join(parts)))
    return out
