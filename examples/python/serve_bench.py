"""How fast `ssdkit serve` serves, side by side with the reference NBD server, `nbdkit memory`:
fio's nbd engine, 4 KiB random reads at QD32 for ``--seconds`` each, on a Unix socket; IOPS,
fio's mean latency, and the server process's CPU time per request (user + system, from
/proc/PID/stat, over the fio run only).

    python examples/python/serve_bench.py                         # nbdkit, then ssdkit --clock fast
    python examples/python/serve_bench.py --seconds 30 --json
    python examples/python/serve_bench.py --servers nbdkit,ssdkit-fast,ssdkit-real

``ssdkit-real`` serves with ``--clock real`` while fio paces its reads at ``--rate`` IOPS
(10,000 by default), and reports how late the server released replies (observed minus target
time, p99) from the ``emulator`` record of the result written at exit, when there is one.

``floor`` measures the machine, not ssdkit: nbdkit serves fio paced at ``--rate`` while a bare
timer loop in this process waits for a deadline every 1/``--rate`` seconds exactly as the real
clock's simulator thread does (timer slack 1 ns, sleep, spin the last 50 us) and reports how
late it woke, p99. Nothing the server does can release replies more punctually than that.
Every row also gives the CPU time the hypervisor took from this machine during the run
(steal, from /proc/stat), which is what makes both figures large on a shared virtual machine.

By default the device is ``mqsim-paper`` with 128 blocks per plane (32 GB, the MQSim paper's
timing); ``--config`` and ``--set`` change it. The nbdkit export has the same size. Needs fio,
nbdkit and Linux's /proc (Debian packages fio and nbdkit).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVERS = ("nbdkit", "ssdkit-fast", "ssdkit-real", "floor")
FLOOR_SPIN_US = 50
READY = "ssdkit serve: serving"


class BenchError(Exception):
    pass


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command name, which may hold spaces: utime and stime are 14 and 15.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
        return True


def start(server: str, args: argparse.Namespace, size: int, work: Path) -> tuple[subprocess.Popen[bytes], Path]:
    sock = work / f"{server}.sock"
    err = work / f"{server}.stderr"
    if server in ("nbdkit", "floor"):
        cmd = ["nbdkit", "-f", "-U", str(sock), "memory", str(size)]
        ready = lambda: _accepts(sock)
    else:
        clock = server.split("-")[1]
        cmd = [sys.executable, "-m", "ssdkit", "serve", args.config, "--socket", str(sock), "--clock", clock]
        cmd += [a for kv in args.set for a in ("--set", kv)]
        cmd += ["-o", str(work / f"{server}.json")]
        ready = lambda: READY in err.read_text(errors="replace")
    with err.open("wb") as f:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f)
    deadline = time.monotonic() + 120
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise BenchError(f"{server} did not start serving: {err.read_text(errors='replace').strip()[-2000:]}")
        time.sleep(0.05)
    return proc, sock


def stop(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def fio(sock: Path, args: argparse.Namespace, out: Path, rate: int | None) -> dict:
    cmd = ["fio", "--name=bench", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}", "--rw=randread"]
    cmd += [f"--bs={args.bs}", f"--iodepth={args.iodepth}", f"--runtime={args.seconds}", "--time_based"]
    cmd += ["--output-format=json", f"--output={out}"]
    if rate:
        cmd.append(f"--rate_iops={rate}")
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=out.parent)
    if p.returncode != 0:
        raise BenchError(f"fio exited with status {p.returncode}: {p.stderr.strip()[-2000:]}")
    [job] = json.loads(out.read_text())["jobs"]
    if job["error"]:
        raise BenchError(f"fio's job failed with error {job['error']}")
    return job["read"]


def cpu_ticks() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs so far, from /proc/stat's ``cpu`` line."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    # user nice system idle iowait irq softirq steal; guest time is already inside user.
    return fields[7], sum(fields[:8])


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[round((len(ordered) - 1) * q)]) if ordered else 0.0


def lateness_p99_us(result: Path) -> float | None:
    """``emulator.lateness.p99`` of the result: the p99 of how late replies left after their
    target time (arrival plus simulated latency), in microseconds; None without it."""
    try:
        late = (json.loads(result.read_text()).get("emulator") or {}).get("lateness") or {}
    except (OSError, ValueError):
        return None
    return late.get("p99")


def bench(server: str, args: argparse.Namespace, size: int, work: Path) -> dict:
    proc, sock = start(server, args, size, work)
    floor: list[int] = []
    timer = None
    try:
        rate = args.rate if server in ("ssdkit-real", "floor") else None
        if server == "floor":
            from ssdkit import _native

            period_us = max(1, round(1e6 / args.rate))
            timer = threading.Thread(
                target=lambda: floor.extend(_native.timer_floor(period_us, FLOOR_SPIN_US, args.seconds))
            )
            timer.start()
        cpu0, t0, ticks0 = cpu_seconds(proc.pid), time.monotonic(), cpu_ticks()
        read = fio(sock, args, work / f"{server}.fio.json", rate)
        cpu, wall, ticks1 = cpu_seconds(proc.pid) - cpu0, time.monotonic() - t0, cpu_ticks()
        if timer is not None:
            timer.join()
    finally:
        status = stop(proc)
    if server.startswith("ssdkit") and status != 0:
        raise BenchError(f"{server} exited with status {status}: {(work / f'{server}.stderr').read_text()[-2000:]}")
    n = read["total_ios"]
    row = {
        "server": server,
        "requests": n,
        "iops": read["iops"],
        "mean_latency_us": read["lat_ns"]["mean"] / 1e3,
        "p99_latency_us": read["clat_ns"]["percentile"].get("99.000000", 0) / 1e3,
        "cpu_us_per_request": cpu / n * 1e6 if n else None,
        "server_cpu_fraction": cpu / wall,
        "steal_fraction": (ticks1[0] - ticks0[0]) / max(1, ticks1[1] - ticks0[1]),
    }
    if server == "ssdkit-real":
        row["rate_iops"] = args.rate
        row["lateness_p99_us"] = lateness_p99_us(work / f"{server}.json")
    if server == "floor":
        row["rate_iops"] = args.rate
        row["lateness_p99_us"] = percentile(floor, 0.99) / 1e3 if floor else None
    return row


def device_size(args: argparse.Namespace) -> int:
    import ssdkit

    return ssdkit.Device(args.config, overrides=args.set).capacity_bytes


def ssdkit_errors() -> type[Exception]:
    import ssdkit

    return ssdkit.SsdkitError


def table(rows: list[dict]) -> str:
    lines = [
        f"{'server':<12} {'IOPS':>9} {'mean us':>8} {'p99 us':>8} {'CPU us/req':>10} {'CPU':>5} {'steal':>6}  late p99 us"
    ]
    for r in rows:
        late = r.get("lateness_p99_us")
        lines.append(
            f"{r['server']:<12} {r['iops']:>9.0f} {r['mean_latency_us']:>8.1f} {r['p99_latency_us']:>8.1f}"
            f" {r['cpu_us_per_request']:>10.2f} {r['server_cpu_fraction']:>5.0%} {r['steal_fraction']:>6.1%}"
            f"  {'' if 'lateness_p99_us' not in r else 'n/a' if late is None else f'{late:.1f}'}"
        )
    by = {r["server"]: r for r in rows}
    if "nbdkit" in by and "ssdkit-fast" in by and by["nbdkit"]["iops"]:
        lines.append(
            f"ssdkit --clock fast serves {by['ssdkit-fast']['iops'] / by['nbdkit']['iops']:.0%} of nbdkit's IOPS"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10, help="fio's run time per server (default 10)")
    ap.add_argument(
        "--servers",
        default="nbdkit,ssdkit-fast",
        help=f"comma-separated, of {', '.join(SERVERS)} (default %(default)s)",
    )
    ap.add_argument("--iodepth", type=int, default=32, help="fio's queue depth (default 32)")
    ap.add_argument("--bs", default="4k", help="fio's block size (default 4k)")
    ap.add_argument("--rate", type=int, default=10000, help="IOPS fio asks of ssdkit-real (default 10000)")
    ap.add_argument("--config", default="mqsim-paper", help="preset name or TOML file (default mqsim-paper)")
    ap.add_argument("--set", action="append", default=None, metavar="KEY=VALUE", help="configuration override")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args(argv)
    if args.set is None:
        args.set = ["flash.blocks_per_plane=128"]
    servers = [s for s in args.servers.split(",") if s]
    unknown = sorted(set(servers) - set(SERVERS))
    if unknown or not servers:
        ap.error(f"--servers: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(SERVERS)}")
    if args.seconds < 1:
        ap.error("--seconds must be at least 1")
    for exe, package in (("fio", "fio"), ("nbdkit", "nbdkit")):
        if (exe == "fio" or {"nbdkit", "floor"} & set(servers)) and shutil.which(exe) is None:
            ap.error(f"{exe} is not installed (Debian package {package})")
    try:
        size = device_size(args)
    except ssdkit_errors() as e:
        print(f"serve_bench: error: {e}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
            rows = [bench(s, args, size, Path(tmp)) for s in servers]
    except BenchError as e:
        print(f"serve_bench: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(rows, indent=2) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
