"""The papers' analytical models, for a configuration or explicit parameters (docs/models.md).

- :func:`x25m` and :class:`X25mParams`: the X25-M latency model of multi-channel, multi-way
  SSDs (single page, Eq. 1-2; multi-page with channel and way interleaving, Eq. 3-7) and the
  IOPS and bandwidth it implies.
- :func:`nvme`: NVMeSim's I/O request model (Choi et al., "An In-Depth Study of Next Generation
  Interface for Emerging Non-Volatile Memories"), Eq. 1-3: the NVMe handshake's packets on the
  configuration's PCIe link, the DMA and the medium, and the handshake's share.
- :func:`write_amplification`: steady-state write amplification under uniform random writes,
  the closed form (FIFO, Desnoyers 2012) and mean-field models (greedy, d-choices, random; Van
  Houdt, SIGMETRICS 2013) the FTL's preconditioning uses.
- :func:`fit_linear` and :func:`fit_ibm`: IBM's linear model T(n) = A + n B per access pattern
  (El Maghraoui, Kandiraju et al., "Modeling and Simulating Flash Based Solid-State Disks for
  Operating Systems"), fitted by ordinary least squares with standard errors, confidence
  intervals and R^2.

The formulas of the first three live in the simulator's Rust core (``ssdkit_core::models``),
where its own tests call them; this module arranges their answers. ``ssdkit model NAME
CONFIG`` prints them as a table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _native
from .api import _override_list, _source

if TYPE_CHECKING:
    from .api import ConfigArg, Overrides

#: Request sizes the tables show by default: the X25-M paper's record sizes, 4 KiB to 512 KiB.
DEFAULT_REQUEST_BYTES: tuple[int, ...] = tuple(4096 << k for k in range(8))

GC_POLICIES = ("greedy", "d_choices", "random", "fifo", "cost_benefit")


@dataclass(frozen=True)
class X25mParams:
    """The X25-M latency model's parameters: channel-switch delay ``ch_us`` (W_ch or R_ch), one
    page's register transfer ``reg_us`` (W_reg or R_reg), the cell time ``cell_us`` (W_cell or
    R_cell), ``rho`` pages in flight at once and the page size.

    Assumptions (where the model stops holding): one request at a time (QD1); no garbage
    collection, mapping misses or data cache; the controller issues one page operation per
    channel-switch delay; host transfer and firmware time folded into the cell times (the paper
    fits program 940 us and read 140 us to its X25-M). ssdkit simulates the host link and the
    firmware separately: with ``interface.link_model = "ideal"`` and zero firmware time its QD1
    latencies equal Eq. 1-2 and 6-7 exactly (tests/x25m_latency_model.rs); with the X25-M's
    SATA link it adds the link's command, one page's data phase and the completion, 17 to 31 us
    per request (tests/x25m_host_link.rs). At queue depths above one the simulator overlaps
    requests, so the model's IOPS become a lower bound.
    """

    ch_us: float
    reg_us: float
    cell_us: float
    rho: int
    page_bytes: int

    @classmethod
    def from_config(
        cls,
        config: ConfigArg = None,
        *,
        write: bool,
        preset: str | None = None,
        overrides: Overrides = None,
    ) -> X25mParams:
        """The parameters of a configuration (a preset name, TOML file or text), for writes or
        reads: the bus's channel-switch delay, one page at the bus rate, the first cell mode's
        time, and channels x chips x dies (x planes with multi-plane operations) in flight."""
        src = _source(config, preset)
        ch, reg, cell, rho, page = _native.x25m_params(write, overrides=_override_list(overrides, {}, None), **src)
        return cls(ch, reg, cell, rho, page)

    def _eval(self, pages: Sequence[int]) -> dict[str, Any]:
        return _native.x25m_eval(self.ch_us, self.reg_us, self.cell_us, self.rho, self.page_bytes, list(pages))

    def page_us(self) -> float:
        """Eq. 1 (write) or Eq. 2 (read): one page, channel switch + register + cell."""
        return self._eval([1])["page_us"]

    def t_wait_us(self) -> float:
        """Eq. 3: how long a cycle waits for the first flash memory of the one before."""
        return self._eval([1])["t_wait_us"]

    def t_cycle_us(self) -> float:
        """Eq. 4: one full cycle of ``rho`` pages."""
        return self._eval([1])["t_cycle_us"]

    def pages(self, request_bytes: int) -> int:
        """N_page of a request: its bytes in pages, at least one."""
        return max(1, -(-int(request_bytes) // self.page_bytes))

    def record_us(self, n_pages: int) -> float:
        """Eq. 6 (write) or Eq. 7 (read): a request of ``n_pages`` pages."""
        return self._eval([n_pages])["record_us"][0]

    def iops(self, n_pages: int) -> float:
        """Requests per second at QD1."""
        return self._eval([n_pages])["iops"][0]

    def bytes_per_s(self, n_pages: int) -> float:
        """Bytes per second at QD1."""
        return self._eval([n_pages])["bytes_per_s"][0]


def x25m(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    request_bytes: Iterable[int] = DEFAULT_REQUEST_BYTES,
) -> list[dict[str, Any]]:
    """The X25-M latency model of a configuration: one row per operation (``write``, ``read``)
    and request size, with ``pages`` (N_page), ``cycles`` (N_cycle), ``latency_us`` (Eq. 6-7;
    Eq. 1-2 for one page), ``iops`` and ``mib_per_s`` at QD1, and the parameters used. See
    :class:`X25mParams` for the assumptions."""
    sizes = [int(b) for b in request_bytes]
    if not sizes or any(b < 1 for b in sizes):
        raise ValueError(f"request_bytes must be sizes of at least 1 byte, got {sizes}")
    rows = []
    for op, write in (("write", True), ("read", False)):
        p = X25mParams.from_config(config, write=write, preset=preset, overrides=overrides)
        pages = [p.pages(b) for b in sizes]
        ev = p._eval(pages)
        columns = zip(sizes, pages, ev["cycles"], ev["record_us"], ev["iops"], ev["bytes_per_s"])
        for b, n, cycles, lat, iops, bps in columns:
            rows.append(
                {
                    "op": op,
                    "request_bytes": b,
                    "pages": n,
                    "cycles": cycles,
                    "latency_us": lat,
                    "iops": iops,
                    "mib_per_s": bps / 2**20,
                    "page_us": ev["page_us"],
                    "t_wait_us": ev["t_wait_us"],
                    "ch_us": p.ch_us,
                    "reg_us": p.reg_us,
                    "cell_us": p.cell_us,
                    "rho": p.rho,
                }
            )
    return rows


def nvme(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    request_bytes: Iterable[int] = (64, 512, 4096),
    queue_depth: int = 1,
) -> list[dict[str, Any]]:
    """NVMeSim's Eq. 1 (read) and Eq. 2 (write) for a configuration at queue depth 1: one row
    per operation and request size with each term in microseconds (``db_write_us``,
    ``io_req_us``, ``io_fetch_us``, ``dma_us``, ``nvm_us``, ``cpl_submit_us``, ``msi_us``,
    ``stall_us``), ``latency_us`` (Eq. 1-2), ``overhead_us`` (Eq. 3) and ``overhead_share``.

    The T_Stall bound at ``queue_depth``: ``up_us`` and ``down_us`` are the request's packets
    in each direction of the link, and ``stall_bound_us`` the least T_Stall of ``queue_depth``
    requests in a closed loop once the link is the bottleneck, ``queue_depth x max(up_us,
    down_us) - latency_us`` (Little's law; 0 while the link keeps up). Data-link packets and the
    medium's queueing only add to the stall. Little's law holds when the latency covers the whole
    loop: with the host handling completions at once (``host.completion = "none"``, no MSI) the
    simulator's mean latency at every depth stays above the bound and comes within 0.5 % of it
    at saturation on the nvmesim presets (tests/emerging_memory.rs); with an interrupt service
    on the host, the host rather than the link may hold the loop back.

    Assumptions: one request on the link, so T_stall is 0 (the simulator measures it under load:
    the ``t_stall`` step of the latency breakdown); ssdkit's packet sizes (4-byte doorbell,
    header-only read request, the whole 64-byte command, 16-byte completion entry, 4-byte MSI)
    rather than NVMeSim's Table II; the medium is the first cell mode's time plus the request
    over the channel bus, as for one page or a DRAM-like line; firmware time and the host's
    interrupt service, which the simulator adds, are outside Eq. 1-2. With those, ssdkit's QD1
    latency on the nvmesim presets equals the sum (tests/emerging_memory.rs).
    """
    sizes = [int(b) for b in request_bytes]
    if not sizes or any(b < 1 for b in sizes):
        raise ValueError(f"request_bytes must be sizes of at least 1 byte, got {sizes}")
    if not isinstance(queue_depth, int) or queue_depth < 1:
        raise ValueError(f"queue_depth must be an integer of at least 1, got {queue_depth!r}")
    src = _source(config, preset)
    ov = _override_list(overrides, {}, None)
    rows = []
    for op, write in (("read", False), ("write", True)):
        rows += [{"op": op, **r} for r in _native.nvme_eval(write, sizes, queue_depth, overrides=ov, **src)]
    return rows


def write_amplification(
    config: ConfigArg = None,
    *,
    preset: str | None = None,
    overrides: Overrides = None,
    gc_policy: str | None = None,
    spare_factor: float | None = None,
    pages_per_block: int | None = None,
    d: int = 10,
) -> dict[str, Any]:
    """Steady-state write amplification under uniform random single-page writes.

    Either from a configuration (its ``ftl.spare_factor``, ``flash.pages_per_block`` and
    ``ftl.gc_policy``) or from explicit ``gc_policy`` (one of :data:`GC_POLICIES`; ``d`` for
    d_choices), ``spare_factor`` (in (0, 1)) and ``pages_per_block``. Returns ``wa``, ``model``
    and the inputs.

    Assumptions: uniform writes of one page; the mean-field limit of many blocks per plane; one
    write frontier. The simulator keeps ``ftl.gc_threshold`` of each plane free, which lowers its
    effective spare, so its steady state sits a little above this figure
    (tests/steady_state_wa.rs compares them); cost-benefit is modelled as greedy.
    """
    explicit = (gc_policy, spare_factor, pages_per_block)
    if config is None and preset is None:
        if None in explicit:
            raise ValueError("give a configuration, or all of gc_policy, spare_factor and pages_per_block")
        if gc_policy not in GC_POLICIES:
            raise ValueError(f"unknown gc_policy {gc_policy!r}; choose from {', '.join(GC_POLICIES)}")
        wa, model = _native.wa_steady_state(gc_policy, float(spare_factor), int(pages_per_block), int(d))
        return {
            "wa": wa,
            "model": model,
            "gc_policy": gc_policy,
            "spare_factor": spare_factor,
            "pages_per_block": pages_per_block,
        }
    if any(v is not None for v in explicit):
        raise ValueError("give either a configuration or explicit gc_policy/spare_factor/pages_per_block, not both")
    src = _source(config, preset)
    wa, model, spare, ppb = _native.wa_of_config(overrides=_override_list(overrides, {}, None), **src)
    return {"wa": wa, "model": model, "spare_factor": spare, "pages_per_block": ppb}


@dataclass(frozen=True)
class LinearFit:
    """IBM's T(n) = A + n B fitted to one access pattern: ``a_us`` (A, fixed cost per request),
    ``b_us_per_byte`` (B, cost per byte), their standard errors and ``confidence`` intervals,
    R^2 and the number of points."""

    pattern: str
    a_us: float
    b_us_per_byte: float
    se_a_us: float
    se_b_us_per_byte: float
    ci_a_us: tuple[float, float]
    ci_b_us_per_byte: tuple[float, float]
    r2: float
    points: int
    confidence: float

    def predict_us(self, request_bytes: float) -> float:
        """T(n): the time of one request of ``request_bytes`` bytes, microseconds."""
        return self.a_us + request_bytes * self.b_us_per_byte

    def throughput_bytes_per_s(self, request_bytes: float) -> float:
        """n / T(n): the throughput of back-to-back requests of ``request_bytes`` bytes."""
        return request_bytes / self.predict_us(request_bytes) * 1e6


def fit_linear(
    request_bytes: Sequence[float],
    times_us: Sequence[float],
    *,
    pattern: str = "",
    confidence: float = 0.95,
) -> LinearFit:
    """Ordinary least squares of ``times_us`` on ``request_bytes``: IBM's T(n) = A + n B.

    Needs at least three points at two or more sizes (two points leave no residual to estimate
    the errors from). The intervals use Student's t with n - 2 degrees of freedom.

    Assumptions: the time is linear in the size, with independent errors of equal variance. The
    model stops holding where a device's parallelism changes with size (a request that spans
    more dies than it did finishes in less than linear time: see the X25-M model's Eq. 6-7,
    which is linear only between multiples of rho pages) or where a write cache fills.
    """
    import numpy as np
    from scipy import stats

    x = np.asarray(request_bytes, dtype=float)
    y = np.asarray(times_us, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"request_bytes and times_us must be equal-length lists, got {x.shape} and {y.shape}")
    if len(x) < 3 or len(np.unique(x)) < 2:
        raise ValueError(
            f"pattern {pattern or '?'}: a linear fit needs at least 3 points at 2 or more sizes, got {len(x)} "
            f"at {len(np.unique(x))}"
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError(f"pattern {pattern or '?'}: sizes and times must be finite numbers")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = len(x)
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    a = float(ym - b * xm)
    resid = y - (a + b * x)
    sse = float((resid**2).sum())
    sst = float(((y - ym) ** 2).sum())
    s2 = sse / (n - 2)
    se_b = math.sqrt(s2 / sxx)
    se_a = math.sqrt(s2 * (1.0 / n + xm * xm / sxx))
    t = float(stats.t.ppf(0.5 + confidence / 2, n - 2))
    return LinearFit(
        pattern=pattern,
        a_us=a,
        b_us_per_byte=b,
        se_a_us=se_a,
        se_b_us_per_byte=se_b,
        ci_a_us=(a - t * se_a, a + t * se_a),
        ci_b_us_per_byte=(b - t * se_b, b + t * se_b),
        r2=1.0 - sse / sst if sst > 0 else 1.0,
        points=n,
        confidence=confidence,
    )


def fit_ibm(
    points: Iterable[Mapping[str, Any]],
    *,
    confidence: float = 0.95,
) -> dict[str, LinearFit]:
    """IBM's model per access pattern: ``points`` are mappings with ``pattern`` (e.g.
    ``seq-read``, ``rand-write``), ``request_bytes`` and ``latency_us`` (the mean time of one
    request at that size). Returns one :class:`LinearFit` per pattern, in the order first seen."""
    by: dict[str, tuple[list[float], list[float]]] = {}
    for i, p in enumerate(points):
        try:
            pattern, n, t = str(p["pattern"]), float(p["request_bytes"]), float(p["latency_us"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"point {i}: needs pattern, request_bytes and latency_us ({e})") from None
        xs, ys = by.setdefault(pattern, ([], []))
        xs.append(n)
        ys.append(t)
    if not by:
        raise ValueError("no points to fit")
    return {k: fit_linear(xs, ys, pattern=k, confidence=confidence) for k, (xs, ys) in by.items()}
