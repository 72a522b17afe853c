"""MQSim's random draws that an import must reproduce to run the same workload.

MQSim (CMU-SAFARI/MQSim at 7ec40e3) begins a STREAMING flow at an address drawn from the
flow's seed (`IO_Flow_Synthetic::Start_simulation`). Where a sequential stream begins decides
which of its requests share a translation page and which pages of the stream pair in
multi-plane reads, so an import that began elsewhere simulated another run (MQSim's shipped
128 KiB sequential reads: 2.2 % more mapping reads per request when begun at 0).

The generator is `Utils::RandomGenerator` over `Utils::CMRRandomGenerator`: L'Ecuyer's
MRG32k3a (Operations Research 47(1), 1999), started from the state (1, 1, 1; 1, 1, 1) and
moved to its substream with `Advance(seed / 200 + 1, seed % 200)`. MQSim computes that jump's
matrix products in signed 64-bit integers, which overflow (entries near 2^32), so the state it
reaches is not the true MRG32k3a substream (its values can be negative); the native
`mqsim_random_state` (crates/ssdkit-core/src/workload/mqsim_random.rs) repeats the overflow and
C's remainder exactly, in microseconds where Python took 2 ms. The recurrence runs in doubles, one IEEE
operation at a time in both, so Python's floats give the same bits (MQSim built with
`-march=native` on a machine with FMA could fuse `mod`'s multiply and subtract; its Makefile
does not ask for it). Checked once, when written, against MQSim's generator compiled from its
sources (3,013 seeds and ranges, equal bit for bit); tests/python/test_mqsim_random.py holds
the first addresses of MQSim's own runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _native

_M1, _M2 = 4294967087, 4294944443
_A12, _A13, _A21, _A23 = 1403580.0, -810728.0, 527612.0, -1370589.0
_NORM = 2.328306549295728e-10
_INT_MAX = 2**31 - 1
#: Flow seeds whose draw is reproduced: the address generator takes seed + 1, and a generator
#: seed below 0 makes `Advance` square its matrix about 2^32 times (`while (e-- != 0)`).
SEEDS = f"-1..{_INT_MAX - 1}"


def _mod(x: float, m: float) -> float:
    k = int(x / m)
    x -= float(k) * m
    return x + m if x < 0.0 else x


class MqsimRandom:
    """`Utils::RandomGenerator(seed)`: the doubles in (0, 1) it returns, in order."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= _INT_MAX:
            raise ValueError(f"seed {seed}: MQSim's seeds are C ints; reproduced for 0..{_INT_MAX}")
        s = _native.mqsim_random_state(seed)
        self._s = [[float(x) for x in s[0]], [float(x) for x in s[1]]]

    def next_double(self) -> float:
        """CMRRandomGenerator::NextDouble."""
        s1, s2 = self._s
        p1 = _mod(_A12 * s1[1] + _A13 * s1[0], float(_M1))
        s1[0], s1[1], s1[2] = s1[1], s1[2], p1
        p2 = _mod(_A21 * s2[2] + _A23 * s2[0], float(_M2))
        s2[0], s2[1], s2[2] = s2[1], s2[2], p2
        p = p1 - p2
        if p < 0.0:
            p += _M1
        return (p + 1) * _NORM

    def uniform_ulong(self, lo: int, hi: int) -> int:
        """RandomGenerator::Uniform_ulong: an integer in lo..hi."""
        return lo + int(float(hi - lo + 1) * self.next_double())


def flow_lha_ranges(
    geometry: Sequence[int],
    pinned: Sequence[Sequence[Sequence[int] | None]],
    blocks_per_plane: int,
    pages_per_block: int,
    sectors_per_page: int,
    overprovisioning: float,
) -> list[tuple[int, int]]:
    """Each flow's first and last logical sector, as MQSim's
    `Logical_Address_Partitioning_Unit::Allocate_logical_address_for_flows` gives them: a plane
    shared by k flows gives each the k-th part of its sectors after over-provisioning.

    `pinned[f]` holds flow f's channel, chip, die and plane indices (None: all)."""
    ids = [[list(range(count)) if sel is None else list(sel) for sel, count in zip(f, geometry)] for f in pinned]
    share: dict[tuple[int, int, int, int], int] = {}
    for chans, chips, dies, planes in ids:
        for c in chans:
            for w in chips:
                for d in dies:
                    for p in planes:
                        share[c, w, d, p] = share.get((c, w, d, p), 0) + 1
    # unsigned int in MQSim: the product wraps at 2^32.
    per_plane = float((blocks_per_plane * pages_per_block * sectors_per_page) & 0xFFFFFFFF) * (1.0 - overprovisioning)
    out, start = [], 0
    for chans, chips, dies, planes in ids:
        count = sum(
            int(per_plane * 1.0 / float(share[c, w, d, p])) for c in chans for w in chips for d in dies for p in planes
        )
        out.append((start, start + count - 1))
        start += count
    return out


def streaming_seed_reproduced(seed: int | None) -> bool:
    """Whether `streaming_start` reproduces a flow of this `<Seed>` (None: absent)."""
    return seed is not None and -1 <= seed <= _INT_MAX - 1


def working_set_end(first: int, last: int, working_set: float) -> int:
    """The last sector of the flow's working set (IO_Flow_Synthetic's constructor passes
    `start + (end - start) * ratio`, truncated, to IO_Flow_Base)."""
    return int(first + float(last - first) * working_set)


def streaming_start(seed: int, first: int, last: int, working_set: float, align: int | None) -> int:
    """The logical sector where MQSim's STREAMING flow of `seed` begins, in a flow whose
    space is first..last (`flow_lha_ranges`) and working set the fraction `working_set`
    of it; `align`: Address_Alignment_Unit when addresses are aligned, else None. Aligned
    down, it can lie before `first`, as in MQSim."""
    # IO_Flow_Synthetic's constructor: the request-type generator takes the seed, the
    # address generator the next.
    addr = MqsimRandom(seed + 1).uniform_ulong(first, working_set_end(first, last, working_set))
    if align:
        addr -= addr % align
    return addr
