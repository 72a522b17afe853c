"""Typed, read-only view of the result document the Rust core writes (schema version 1).

The JSON stays the contract: every object here is built from it, the document itself is kept
as ``Result.raw``, and fields the core adds later remain reachable there before they get an
attribute.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._native import SsdkitError

if TYPE_CHECKING:
    import pandas

SCHEMA_VERSION = 1

_OPS = ("read", "write", "all")


class _DictLike:
    """Item access by field name, so ``flash["page_reads"]`` works like ``flash.page_reads``."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.keys():
            raise KeyError(name)
        return getattr(self, name)

    def keys(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class OpStats(_DictLike):
    """Completed requests of one kind (read, write or all)."""

    count: int
    bytes: int
    iops: float
    bandwidth_bytes_per_s: float
    latency: LatencyUs

    @property
    def bandwidth_MBps(self) -> float:
        """Bandwidth in MB/s (10^6 bytes per second)."""
        return self.bandwidth_bytes_per_s / 1e6

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpStats:
        return _pick(cls, d, latency=LatencyUs.from_dict(_get(d, "latency_us")))


@dataclass(frozen=True)
class Stats(_DictLike):
    read: OpStats
    write: OpStats
    all: OpStats

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stats:
        return cls(**{op: OpStats.from_dict(_get(d, op)) for op in _OPS})


@dataclass(frozen=True)
class FlashStats(_DictLike):
    """Operations executed by the flash back end, user and GC traffic together."""

    page_reads: int
    page_programs: int
    block_erases: int
    multiplane_reads: int
    multiplane_programs: int
    multiplane_erases: int
    bus_bytes: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlashStats:
        return _pick(cls, d)


@dataclass(frozen=True)
class FtlStats(_DictLike):
    user_page_writes: int
    gc_runs: int
    gc_page_moves: int
    #: Flash page programs per user page write; 0.0 when there were no user writes.
    write_amplification: float
    rmw_reads: int
    unmapped_page_reads: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FtlStats:
        return _pick(cls, d)


@dataclass(frozen=True)
class Device(_DictLike):
    capacity_bytes: int
    stats: Stats
    flash: FlashStats
    ftl: FtlStats

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Device:
        return cls(
            capacity_bytes=_get(d, "capacity_bytes"),
            stats=Stats.from_dict(_get(d, "stats")),
            flash=FlashStats.from_dict(_get(d, "flash")),
            ftl=FtlStats.from_dict(_get(d, "ftl")),
        )


@dataclass(frozen=True)
class FlowResult(_DictLike):
    index: int
    name: str
    completed: int
    #: Most requests of this flow inside the device at once (NVMe fetch window occupancy).
    max_in_device: int
    stats: Stats

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowResult:
        return _pick(cls, d, stats=Stats.from_dict(_get(d, "stats")))


# eq=False: equality of two runs is a question about their JSON (see the tests), and the
# dict fields would make a generated __hash__ raise anyway.
@dataclass(frozen=True, eq=False)
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
    device: Device
    flows: list[FlowResult]
    config: dict[str, Any] = field(repr=False)
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.from_dict(json.loads(text))

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
            device=Device.from_dict(_get(d, "device")),
            flows=[FlowResult.from_dict(f) for f in _get(d, "flows")],
            raw=d,
        )

    @property
    def completed(self) -> int:
        """Requests completed over all flows."""
        return sum(f.completed for f in self.flows)

    def to_json(self, indent: int | None = 2) -> str:
        """The result document as the core wrote it (same keys, order and values)."""
        return json.dumps(self.raw, indent=indent, sort_keys=False)

    def rows(self) -> list[tuple[str, int | None, str, OpStats]]:
        """``(scope, flow_index, op, stats)`` for every flow and then the device."""
        scopes: list[tuple[str, int | None, Stats]] = [(f.name, f.index, f.stats) for f in self.flows]
        scopes.append(("device", None, self.device.stats))
        return [(name, idx, op, getattr(st, op)) for name, idx, st in scopes for op in _OPS]

    def to_pandas(self) -> pandas.DataFrame:
        """One row per (scope, op): scope is a flow name or ``"device"``, op is read, write or
        all; bandwidth in MB/s (10^6 B/s), latencies in microseconds."""
        import pandas as pd  # deferred: the CLI should not pay pandas' import time

        records = []
        for scope, idx, op, s in self.rows():
            lat = s.latency
            records.append(
                {
                    "scope": scope,
                    "flow_index": idx,
                    "op": op,
                    "count": s.count,
                    "bytes": s.bytes,
                    "iops": s.iops,
                    "bandwidth_MBps": s.bandwidth_MBps,
                    "mean_us": lat.mean,
                    "min_us": lat.min,
                    "p50_us": lat.p50,
                    "p90_us": lat.p90,
                    "p99_us": lat.p99,
                    "p99_9_us": lat.p99_9,
                    "p99_99_us": lat.p99_99,
                    "max_us": lat.max,
                }
            )
        df = pd.DataFrame.from_records(records)
        # object dtype keeps the device row's index as None instead of turning the column to float
        df["flow_index"] = pd.Series([r["flow_index"] for r in records], dtype=object)
        return df

    def summary(self) -> str:
        """A fixed-width text report: per-flow and device rows, flash and GC counters, times."""
        shown = _rows_worth_showing(self.rows())
        name_w = max([len("scope")] + [len(r[0]) for r in shown])
        left = f"{'scope':<{name_w}}  {'op':<5} {'ops':>10} {'IOPS':>11} {'MB/s':>9}  "
        head = left + f"{'mean':>9} {'p50':>9} {'p99':>9} {'p99.9':>9} {'max':>9}"
        lines = [
            (
                f"ssdkit {self.ssdkit_version}  seed {self.seed}  config {self.config_hash}"
                f"  capacity {self.device.capacity_bytes / 2**30:.1f} GiB"
            ),
            "",
            " " * len(left) + "latency (us)",
            head,
            "-" * len(head),
        ]
        for scope, op, s in shown:
            lat = s.latency
            lines.append(
                f"{scope:<{name_w}}  {op:<5} {s.count:>10,} {s.iops:>11,.0f} {s.bandwidth_MBps:>9,.1f}"
                f"  {lat.mean:>9.1f} {lat.p50:>9.1f} {lat.p99:>9.1f} {lat.p99_9:>9.1f} {lat.max:>9.1f}"
            )
        fl, ftl = self.device.flash, self.device.ftl
        wa = f"{ftl.write_amplification:.3f}" if ftl.user_page_writes else "- (no user writes)"
        facts = [
            ("flash page reads", f"{fl.page_reads:,}"),
            ("flash page programs", f"{fl.page_programs:,}"),
            ("flash block erases", f"{fl.block_erases:,}"),
            ("GC runs", f"{ftl.gc_runs:,}"),
            ("GC page moves", f"{ftl.gc_page_moves:,}"),
            ("write amplification", wa),
            ("simulated time", _duration(self.simulated_time_s)),
            ("wall time", f"{self.wall_time_s:.3f} s"),
            ("events", f"{self.events:,}"),
            ("events/s", f"{self.events_per_wall_s:,.0f}"),
        ]
        if self.stopped_by_time_cap:
            facts.append(("stopped by", "run.max_simulated_ms time cap"))
        lines.append("")
        lines += [f"{k:<21}{v}" for k, v in facts]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _rows_worth_showing(rows: list[tuple[str, int | None, str, OpStats]]) -> list[tuple[str, str, OpStats]]:
    """Per scope, the read and write rows that have requests, and "all" only when it adds
    something: for a mixed workload, or as the single row of a scope that completed nothing."""
    out = []
    for i in range(0, len(rows), len(_OPS)):
        scope = rows[i][0]
        by_op = {op: s for _, _, op, s in rows[i : i + len(_OPS)]}
        ops = [op for op in ("read", "write") if by_op[op].count > 0]
        if len(ops) != 1:
            ops.append("all")
        out += [(scope, op, by_op[op]) for op in ops]
    return out


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
    names = [f.name for f in dataclasses.fields(cls)]
    kw = {n: given[n] if n in given else _get(d, n) for n in names}
    return cls(**kw)
