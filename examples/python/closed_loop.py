"""A closed-loop host written in Python against ``ssdkit.Device``: keep ``--qd`` random
requests outstanding, and answer every completion with a new request, until ``--requests``
have completed; print IOPS and mean latency.

    python examples/python/closed_loop.py --requests 20000 --qd 16
    python examples/python/closed_loop.py --requests 5000 --qd 4 --read-fraction 0.7 --compare

The host steps simulated time in slices of ``--step-ns``: ``run_until(now + step)``, then
``drain()``. Time only moves forward, so the answer to a completion is submitted at the end
of the slice in which it completed (within ``step`` of the completion time), as a host
polling its completion queue every ``step`` would. With ``--compare`` the same workload also
runs as a closed-loop flow of ``ssdkit.run``, which answers at the completion's picosecond;
the two agree to within that reaction delay.

By default the device is the ``mqsim-paper`` preset shrunk to 128 blocks per plane (same
timing, a sixteenth of the capacity, set up in well under a second); ``--set`` adds overrides.
Its flow 0 is set to the workload, so that preconditioning builds the steady state of these
writes (the flow's workload itself is not run by a Device).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import ssdkit


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=20000, help="requests to complete (default 20000)")
    ap.add_argument("--qd", type=int, default=16, help="requests kept outstanding (default 16)")
    ap.add_argument("--bytes", type=int, default=4096, help="request size, multiple of 512 (default 4096)")
    ap.add_argument("--read-fraction", type=float, default=1.0, help="probability of a read (default 1)")
    ap.add_argument("--step-ns", type=int, default=1000, help="polling interval of the host (default 1000 ns)")
    ap.add_argument("--config", default="mqsim-paper", help="preset name or TOML file (default mqsim-paper)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="configuration override")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", action="store_true", help="also run the workload as a batch closed-loop flow")
    args = ap.parse_args(argv)
    if args.requests < 1 or args.qd < 1 or args.step_ns < 1:
        ap.error("--requests, --qd and --step-ns must be at least 1")

    # The flow describes the workload to the device too: fast preconditioning builds the steady
    # state of the configured flows' random writes (a read-only flow leaves GC idle), and its
    # keys other than those are unused by a Device. --compare runs this flow as it is.
    overrides = [
        "flash.blocks_per_plane=128",
        f"flow.0.queue_depth={args.qd}",
        f"flow.0.requests={args.requests}",
        f"flow.0.read_fraction={args.read_fraction}",
        f"flow.0.request_bytes={args.bytes}",
        'flow.0.pattern="random"',
        *args.set,
    ]
    rng = random.Random(args.seed)
    wall = time.perf_counter()
    with ssdkit.Device(args.config, overrides=overrides, seed=args.seed) as dev:
        slots = dev.capacity_bytes // args.bytes

        def submit(t: int) -> None:
            op = "read" if rng.random() < args.read_fraction else "write"
            dev.submit(t, op, rng.randrange(slots) * args.bytes, args.bytes)

        issued = min(args.qd, args.requests)
        for _ in range(issued):
            submit(0)
        done = latency_sum = last_ns = 0
        while done < args.requests:
            dev.run_until(dev.now() + args.step_ns)
            for c in dev.drain():
                done += 1
                latency_sum += c.latency_ns
                last_ns = c.complete_ns
                if issued < args.requests:
                    submit(dev.now())  # the completion's answer, at the end of this slice
                    issued += 1
        result = dev.result()
    wall = time.perf_counter() - wall

    iops = done / (last_ns * 1e-9)
    print(f"device: {args.config} {' '.join(o for o in overrides if not o.startswith('flow.'))}")
    print(f"host loop: {done:,} requests at QD {args.qd}, polled every {args.step_ns:,} ns")
    print(f"  IOPS {iops:,.0f}   mean latency {latency_sum / done / 1000:,.1f} us")
    print(f"  simulated {last_ns / 1e6:,.3f} ms in {wall:.2f} s wall")
    print(f"  result(): {result.device.stats.all.count:,} reads and writes, GC runs {result.device.ftl.gc_runs:,}")
    if args.compare:
        batch = ssdkit.run(args.config, overrides=overrides, seed=args.seed)
        s = batch.device.stats.all
        print(f"batch closed loop: IOPS {s.iops:,.0f}   mean latency {s.latency.mean:,.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
