"""Writes a configuration of N small closed-loop flows (default 1,000) on a 64 MiB device, to
measure what `ssdkit run FILE --fairness` costs with many flows (docs/fairness.md):

    python examples/python/many_flows.py 1000 > many_flows.toml
    ssdkit run many_flows.toml --fairness --no-progress

Each flow issues 20 requests of 4 KiB at queue depth 1 (even flows, random reads) or 2 (odd
flows, 70 % reads). The device has the mqsim-paper timing on two dies of 128 blocks of
64 pages, the whole map in DRAM and no data cache, so preconditioning takes milliseconds."""

import sys

HEAD = """# {n} small closed-loop flows on a 64 MiB device (examples/python/many_flows.py)
[ftl.cmt]
mode = "ideal"

[cache]
mode = "off"

[flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 128
pages_per_block = 64
page_size_bytes = 4096
"""

FLOW = """
[[flow]]
queue_depth = {qd}
read_fraction = {reads}
requests = 20
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    out = [HEAD.format(n=n)]
    out += [FLOW.format(qd=1 + k % 2, reads=0.7 if k % 2 else 1.0) for k in range(n)]
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
