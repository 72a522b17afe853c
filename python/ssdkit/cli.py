"""The ``ssdkit`` command. User mistakes end with one ``ssdkit: error: ...`` line on stderr and
exit status 2 (argparse's convention), never a traceback; tracebacks are left for bugs."""

from __future__ import annotations

import argparse
import errno
import gettext
import io
import os
import sys
from collections.abc import Sequence

# The C module that `signal` wraps: the same functions and numbers, without the enums the
# wrapper builds when imported (0.3 ms of every command's start).
try:
    import _signal as signal
except ImportError:  # pragma: no cover - CPython has it
    import signal

from . import outputs
from ._lazy import _Lazy
from ._native import ConfigError, SsdkitError, __version__
from .serve_options import CLOCKS, DEFAULT_MEMORY_LIMIT, DEFAULT_QUEUES

api = _Lazy("api")
bench = _Lazy("bench")
fio = _Lazy("fio")
tomltext = _Lazy("_tomltext")
models = _Lazy("models")
mqsim = _Lazy("mqsim")
c_api = _Lazy("c")
cal = _Lazy("calibrate")
probe_mod = _Lazy("probe")
serve_mod = _Lazy("serve")
latency_log = _Lazy("latency_log")
plot = _Lazy("plot")
report_mod = _Lazy("report")
sweep_mod = _Lazy("sweep")

PROG = "ssdkit"
EXIT_USAGE = 2


class UserError(Exception):
    """A mistake in the command line or its files, reported without a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    # Building and preconditioning a device run in Rust without the GIL and do not poll for
    # signals, so there Ctrl-C takes its default action and stops the process at once (no file
    # exists yet: outputs are written after the run). Once the simulation loop runs it lets
    # Python handle signals every 100 ms, and ssdkit.run switches to Python's handler so that
    # Ctrl-C raises KeyboardInterrupt there and the latency log being written is removed.
    _set_sigint(signal.SIG_DFL)
    words = sys.argv[1:] if argv is None else list(argv)
    # Only the command given is built; every one for the top-level help.
    parser = _parser(None if not words or words[0] in ("-h", "--help") else words[0])
    args = parser.parse_args(words)
    real_stdout = sys.stdout
    sys.stdout = _Stdout(real_stdout)
    try:
        rc = args.func(args)
        sys.stdout.flush()  # a full disk shows up here for short outputs, so report it here
        return rc
    except (SsdkitError, UserError) as e:
        _error(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _error("interrupted; no output written")
        return 128 + signal.SIGINT
    except _StdoutError as e:
        _silence_stdout()
        if e.errno == errno.EPIPE:
            # The reader (e.g. `| head`) went away: nothing more to say, to anyone.
            return 1
        _error(f"cannot write to standard output: {e.strerror or e}")
        return EXIT_USAGE
    finally:
        sys.stdout = real_stdout


# Set by a command whose process has nothing left to do once it returns (`_cmd_run` outside
# --fairness, which leaves no thread, child process or exit handler behind).
_exit_at_once = False


def _set_sigint(handler) -> None:
    """SIGINT's handler, where this is the main thread (only it may set one); elsewhere, as
    for a program that runs `main` in a thread, the program's handler stays. Not through
    `threading`, whose import costs every command a millisecond."""
    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:
        pass


def entry() -> None:
    """The `ssdkit` executable: runs `main` and exits with its status. After a one-shot command
    (`run`) the process leaves without the interpreter's teardown, which frees every imported
    module one by one: about 7 ms of a 75 ms `ssdkit run` of a 100,000-request MQSim file
    (measured), where the operating system reclaims the memory at once."""
    rc = main()
    if _exit_at_once:
        exit_now(rc)
    sys.exit(rc)


def exit_now(rc: int) -> None:
    """Ends the process with status `rc` once standard output and error are flushed; where
    either cannot be, leaves through `sys.exit`, so Python reports it as it would."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(rc)
    os._exit(rc)


class _StdoutError(Exception):
    def __init__(self, e: OSError):
        super().__init__(str(e))
        self.errno, self.strerror = e.errno, e.strerror


class _Stdout:
    """Standard output whose write errors (ENOSPC on `> /dev/full`, EPIPE on a closed pipe)
    are told apart from the OSErrors of input files, so each gets its own message."""

    def __init__(self, f):
        self._f = f

    def write(self, s: str) -> int:
        try:
            return self._f.write(s)
        except OSError as e:
            raise _StdoutError(e) from None

    def flush(self) -> None:
        try:
            self._f.flush()
        except OSError as e:
            raise _StdoutError(e) from None

    def __getattr__(self, name: str):
        return getattr(self._f, name)


def _silence_stdout() -> None:
    # Python flushes what is still buffered at exit and would print a second complaint (and a
    # traceback for EPIPE); the buffer goes to /dev/null instead.
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
    except (OSError, ValueError):
        pass


def _error(msg: str) -> None:
    # One line, so scripts and `grep` see the whole message; some core messages carry a
    # trailing context line (e.g. "\nin `flash`").
    flat = " ".join(part.strip() for part in str(msg).splitlines() if part.strip())
    print(f"{PROG}: error: {flat}", file=sys.stderr)


class _Unbuilt:
    """The parser of a command this process does not run: every call that would build it is
    accepted and ignored (argparse takes about 8 ms to build every command's arguments, a tenth
    of a short `ssdkit run`)."""

    def __getattr__(self, name: str):
        return self._ignore

    def _ignore(self, *args, **kw) -> _Unbuilt:
        return self


class _Commands:
    """The command subparsers, with only ``command``'s arguments built (every command's
    with None, as for ``ssdkit --help``); the others are listed with their help line when
    ``list_others``, else left out (each listed one is a parser of its own: the fourteen
    took about 1.1 ms of every command's start, and parsing a command's words looks at its
    parser alone)."""

    def __init__(self, sub, command: str | None, list_others: bool):
        self._sub, self._command, self._list_others = sub, command, list_others
        self.found = False

    def add_parser(self, name: str, **kw):
        if self._command in (None, name):
            self.found = True
            return self._sub.add_parser(name, **kw)
        if self._list_others:
            self._sub.add_parser(name, help=kw.get("help"))
        return _Unbuilt()


def _translate_once() -> None:
    """argparse translates each of its strings with ``gettext.gettext``, which looks for the
    message catalogue on disk at every call: 48 calls, 2.3 ms of a command's start. The
    catalogue cannot change while the command runs, so argparse gets the one found now
    (no catalogue: the strings as they are, as gettext gives them)."""
    domain = gettext.textdomain()
    localedir = gettext.bindtextdomain(domain)
    t = gettext.NullTranslations()
    # No catalogue folder, no catalogue (as gettext would find), without the `locale` import
    # its search starts with (1 ms of every command).
    if os.path.isdir(localedir):
        try:
            t = gettext.translation(domain, localedir)
        except OSError:
            pass
    argparse._ = t.gettext  # type: ignore[attr-defined]
    argparse.ngettext = t.ngettext  # type: ignore[attr-defined]


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, the same rules (``COLUMNS``, then standard
    output's terminal, then 80), without importing shutil and the compression modules it
    pulls in (2.3 ms of every command's start)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found by :func:`_terminal_columns`. argparse
    makes one for every argument it adds (to check the argument's metavar), and each would
    otherwise import shutil for the width."""

    def __init__(self, *args, **kw):
        if len(args) < 4 and kw.get("width") is None:
            kw["width"] = _terminal_columns() - 2
        super().__init__(*args, **kw)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help is laid out by :class:`_Formatter`; its subcommands'
    parsers are of this class too (argparse makes them of the parent's class)."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kw)


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser, with the arguments of ``command`` only (every command's
    when None). A word that names no command (an option such as ``--version``, a misspelt
    command) gets every command listed, for argparse's choices and messages."""
    _translate_once()
    p, sub = _build_parser(command, list_others=False)
    if not sub.found:
        p, sub = _build_parser(command, list_others=True)
    return p


def _build_parser(command: str | None, list_others: bool) -> tuple[argparse.ArgumentParser, _Commands]:
    p = _Parser(prog=PROG, description="Discrete-event SSD simulator.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = _Commands(p.add_subparsers(dest="command", metavar="COMMAND", required=True), command, list_others)

    def config_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("config", nargs="?", metavar="CONFIG", help="preset name or TOML file")
        sp.add_argument(
            "--preset",
            metavar="NAME",
            help="built-in preset (see `ssdkit presets`); with a TOML file CONFIG, the device it runs on "
            "(its tables over the preset's, its flows instead of the preset's)",
        )
        sp.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override one key, e.g. flash.channels=4 or flow.0.queue_depth=32 (repeatable)",
        )
        sp.add_argument("--seed", type=int, metavar="N", help="shortcut for --set run.seed=N")

    r = sub.add_parser(
        "run",
        help="run a simulation and print a summary",
        description=(
            "Run a simulation. The configuration is a preset or TOML file; with --fio the flows come from a "
            "fio job file (the device from CONFIG, default preset mqsim-paper), with --mqsim device and flows "
            "come from MQSim's ssdconfig.xml and workload.xml."
        ),
    )
    config_args(r)
    r.add_argument(
        "--fio",
        metavar="JOB.fio",
        help="take the flows from this fio job file (see `ssdkit fio2toml` and docs/fio.md)",
    )
    r.add_argument(
        "--mqsim",
        nargs="+",
        metavar="XML",
        help="ssdconfig.xml [workload.xml]: run an MQSim configuration (see `ssdkit import mqsim`)",
    )
    r.add_argument("--scenario", type=_positive_int, metavar="K", help="with --mqsim: the IO_Scenario to run (1-based)")
    r.add_argument("--trace-dir", metavar="DIR", help="with --mqsim: folder of the trace files of trace flows")
    r.add_argument(
        "--mqsim-compat",
        action="store_true",
        help=(
            "with --mqsim: turn on the MQSim behaviours ssdkit does otherwise (one die operation at a time per "
            "chip, whole-request host transfers), listed on stderr; --set switches any back off"
        ),
    )
    r.add_argument("-o", "--output", metavar="OUT.json", help="also write the result JSON here")
    r.add_argument("--json", action="store_true", help="print the result JSON instead of the summary")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    r.add_argument(
        "--latency-log",
        metavar="FILE",
        help="write every request (id, flow, op, offset_bytes, bytes, submit_ns, complete_ns, latency_ns) to FILE "
        "as the run goes: Parquet for .parquet/.pq, CSV for .csv; the file appears only if the run succeeds",
    )
    r.add_argument(
        "--timeseries",
        type=float,
        metavar="MS",
        help="record the time series (per-flow IOPS, bandwidth, latency, queue depth; device free blocks, GC, write "
        "amplification) in windows of MS milliseconds: shortcut for --set run.timeseries_window_ms=MS",
    )
    r.add_argument(
        "--steady-state",
        action="store_true",
        help="run in rounds of simulated time (steady_state.round_ms, default 50 ms; at most steady_state.max_rounds, "
        "default 25), report each round's IOPS and mean/p99 latency, and whether the steady-state criteria of the "
        "SNIA Solid State Storage Performance Test Specification hold over the last five rounds (IOPS range <= 20 %% "
        "and least-squares change <= 10 %% of their average); the workload stops at steady state: shortcut for "
        "--set steady_state.enabled=true (keys: docs/results.md)",
    )
    r.add_argument(
        "--snapshot",
        metavar="DEVICE.snap",
        help="start from this saved device state (see `ssdkit precondition`) instead of preconditioning",
    )
    r.add_argument(
        "--fairness",
        action="store_true",
        help="also run each flow alone on the same starting device (same snapshot and seed), then report each "
        "flow's slowdown S = RT_shared / RT_alone, fairness F = min S / max S and weighted speedup WS = sum of "
        "1 / S (the MQSim paper, FAST'18, section 3.1); needs two flows or more; the runs go on --workers threads",
    )
    r.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="with --fairness: runs at once (default: the machine's cores)",
    )
    r.set_defaults(func=_cmd_run)

    pc = sub.add_parser(
        "precondition",
        help="precondition a device once and save it as a snapshot for `run --snapshot`",
        description=(
            "Bring the configured device to its starting state as its [precondition] section says "
            "(mode fast, write, sequential or empty) and save that state to a snapshot file."
        ),
    )
    config_args(pc)
    pc.add_argument("-o", "--output", required=True, metavar="DEVICE.snap", help="snapshot file to write")
    pc.add_argument("--json", action="store_true", help="print the preconditioning record as JSON")
    pc.set_defaults(func=_cmd_precondition)

    sv = sub.add_parser(
        "serve",
        help="serve the simulated SSD as an NBD block device (data stored, latencies simulated)",
        description=(
            "Expose the configured SSD as an NBD export that real programs use (fio, qemu-img, nbdcopy, "
            "nbdfuse + a file system). Each connection gets its own NVMe queue pair. With --clock real "
            "(default) each reply leaves at its request's arrival plus its simulated latency; with "
            "--clock fast as soon as it is simulated. NBD has no authentication: serve on a Unix socket "
            "or a loopback address. Stop with Ctrl-C or SIGTERM; SIGUSR1 writes the result (-o) now. "
            "See docs/serve.md."
        ),
    )
    config_args(sv)
    where = sv.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", metavar="PATH", help="listen on this Unix socket (URI nbd+unix:///?socket=PATH)")
    where.add_argument("--listen", metavar="HOST:PORT", help="listen on TCP (loopback only unless --allow-remote)")
    sv.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --listen address: anyone who reaches it can read and write the export",
    )
    sv.add_argument(
        "--clock",
        choices=CLOCKS,
        default="real",
        help="real: replies leave at arrival + simulated latency (default); fast: as soon as simulated",
    )
    sv.add_argument(
        "--queues",
        type=_positive_int,
        default=DEFAULT_QUEUES,
        metavar="N",
        help=f"queue pairs: one per connection, so the most clients at once (default {DEFAULT_QUEUES}); "
        "copies of the last [[flow]]",
    )
    sv.add_argument("--snapshot", metavar="DEVICE.snap", help="start from a device saved by `ssdkit precondition`")
    sv.add_argument("--read-only", action="store_true", help="refuse writes and TRIMs (EPERM)")
    sv.add_argument(
        "--backing",
        metavar="FILE",
        help="keep the data in this sparse file (created with the device's size if missing; holes punched on "
        "TRIM) instead of memory: devices far larger than RAM",
    )
    sv.add_argument(
        "--durable", action="store_true", help="with --backing: FLUSH and FUA fdatasync the file before replying"
    )
    sv.add_argument(
        "--memory-limit",
        type=_positive_int,
        default=DEFAULT_MEMORY_LIMIT,
        metavar="BYTES",
        help=f"without --backing: bytes of data kept in memory at most (default {DEFAULT_MEMORY_LIMIT}); "
        "writes beyond get ENOSPC",
    )
    sv.add_argument(
        "--export-name",
        default="ssdkit",
        metavar="NAME",
        help="the export's name (default ssdkit; the empty name reaches it too)",
    )
    sv.add_argument(
        "-o",
        "--output",
        metavar="OUT.json",
        help="write the result here at exit, on SIGUSR1 and every --result-every seconds",
    )
    sv.add_argument("--result-every", type=float, metavar="SECONDS", help="rewrite -o this often while serving")
    sv.add_argument(
        "--latency-log",
        metavar="FILE",
        help="per-request log (.parquet or .csv): simulated and observed latency, written at exit",
    )
    sv.add_argument(
        "--spin-us",
        type=int,
        default=50,
        metavar="US",
        help="real clock: spin (not sleep) this long before each reply's time (default 50)",
    )
    sv.add_argument(
        "--run",
        metavar="CMD",
        help="once serving, run the shell command CMD (environment: $uri, the export's NBD URI; $nbd_socket), "
        "then stop; the exit status is CMD's",
    )
    sv.add_argument("--json", action="store_true", help="print the final result as JSON on stdout")
    sv.set_defaults(func=_cmd_serve)

    ps = sub.add_parser("presets", help="list built-in presets, or show one")
    ps_sub = ps.add_subparsers(dest="presets_command", metavar="show")
    show = ps_sub.add_parser("show", help="print a preset's TOML")
    show.add_argument("name", metavar="NAME")
    ps.set_defaults(func=_cmd_presets)

    c = sub.add_parser("config", help="show a resolved configuration or the schema")
    c_sub = c.add_subparsers(dest="config_command", metavar="{show,schema}", required=True)
    cs = c_sub.add_parser("show", help="print the validated configuration with every default")
    config_args(cs)
    cs.set_defaults(func=_cmd_config_show)
    c_sub.add_parser("schema", help="print the configuration's JSON Schema").set_defaults(func=_cmd_config_schema)

    fx = sub.add_parser(
        "fio2toml",
        help="convert a fio job file to an ssdkit configuration (TOML)",
        description=(
            "Print the ssdkit configuration `ssdkit run --fio JOB.fio` runs: the device of CONFIG (default "
            "preset mqsim-paper) with one [[flow]] per fio job (numjobs=N: N flows). Options ssdkit cannot "
            "reproduce are refused; see docs/fio.md."
        ),
    )
    fx.add_argument("job", metavar="JOB.fio", help="fio job file")
    config_args(fx)
    fx.add_argument("-o", "--output", metavar="OUT.toml", help="write the TOML here instead of printing it")
    fx.set_defaults(func=_cmd_fio2toml)

    im = sub.add_parser("import", help="convert another simulator's input files to ssdkit configurations")
    im_sub = im.add_subparsers(dest="import_command", metavar="mqsim", required=True)
    mq = im_sub.add_parser(
        "mqsim",
        help="convert MQSim's ssdconfig.xml (and workload.xml) to TOML",
        description=(
            "Convert MQSim's ssdconfig.xml and workload.xml: one configuration per IO_Scenario (MQSim runs "
            "each on a fresh device). Parameters ssdkit cannot reproduce are listed as `# unmapped:` / "
            "`# approximated:` lines at the top of the TOML and on stderr; see docs/mqsim.md."
        ),
    )
    mq.add_argument("ssdconfig", metavar="ssdconfig.xml")
    mq.add_argument("workload", nargs="?", metavar="workload.xml")
    mq.add_argument(
        "-o",
        "--output",
        metavar="OUT.toml",
        help="write here; several scenarios go to OUT_scenario_<k>.toml (default: print one scenario)",
    )
    mq.add_argument("--scenario", type=_positive_int, metavar="K", help="convert only this IO_Scenario (1-based)")
    mq.add_argument("--trace-dir", metavar="DIR", help="folder of the trace files (default: beside workload.xml)")
    mq.add_argument(
        "--mqsim-compat",
        action="store_true",
        help=(
            "also set the MQSim behaviours ssdkit does otherwise (one die operation at a time per chip, "
            "whole-request host transfers), listed in the TOML's header and on stderr"
        ),
    )
    mq.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one key of the result, e.g. flow.0.requests=1000 (repeatable)",
    )
    mq.set_defaults(func=_cmd_import_mqsim)

    b = sub.add_parser("bench", help="measure simulator speed on standard workloads")
    b.add_argument(
        "--requests", type=_positive_int, default=1_000_000, metavar="N", help="requests per case (default 1000000)"
    )
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="workloads run at once, each a process of one thread (default: the machine's cores; "
        "side by side they share memory bandwidth and cache, so 1 gives the quietest figures)",
    )
    b.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change the device for every case, e.g. flash.blocks_per_plane=128 for a quick check (repeatable)",
    )
    b.set_defaults(func=_cmd_bench)

    sw = sub.add_parser(
        "sweep",
        help="run a configuration over a grid of keys and gather one table (Parquet)",
        description="Runs a sweep described by a TOML file: `config` (preset or TOML file), "
        '`mode` ("cartesian", "zip" or "random" with `samples`), `repeats`, `seed`, [set] '
        "(overrides for every point), [grid] (key = [values]) and [[workload]] tables. Writes one "
        "row per point, flow and operation to the Parquet file; an interrupted sweep resumes from "
        "the part files in <output>.parts/.",
    )
    sw.add_argument("sweep_file", help="the sweep description (TOML)")
    sw.add_argument("-o", "--output", required=True, help="the table to write (Parquet)")
    sw.add_argument("--workers", type=_positive_int, default=None, metavar="N", help="processes (default: every core)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.set_defaults(func=_cmd_sweep)

    pl = sub.add_parser("plot", help="draw a result's latency CDF, percentiles, time series, ... to an image")
    pl.add_argument("result", help="a result JSON file (ssdkit run -o)")
    pl.add_argument(
        "--kind",
        default="cdf",
        choices=plot.KINDS,
        help="what to draw (default cdf)",
    )
    pl.add_argument("-o", "--output", required=True, help="the image to write (.png, .svg, .pdf)")
    pl.set_defaults(func=_cmd_plot)

    rp = sub.add_parser("report", help="write one self-contained HTML report of a result or a sweep")
    rp.add_argument("source", help="a result JSON file (ssdkit run -o) or a sweep's table (.parquet)")
    rp.add_argument("-o", "--output", required=True, help="the HTML file to write")
    rp.set_defaults(func=_cmd_report)

    md = sub.add_parser(
        "model",
        help="print a paper's analytical model of a configuration (x25m, nvme, wa)",
        description="Print an analytical model of the configured device. x25m: the X25-M latency model of "
        "multi-channel, multi-way SSDs (Eq. 1-2 single page, Eq. 3-7 multi-page), latency, IOPS and bandwidth at "
        "queue depth 1 with no garbage collection. nvme: NVMeSim's Eq. 1-3, the NVMe handshake's packets on the "
        "PCIe link, the DMA and the medium at queue depth 1, and the handshake's share. wa: the steady-state write amplification under uniform random "
        "writes for the device's spare factor, pages per block and GC policy (FIFO closed form, Desnoyers 2012; "
        "mean-field greedy, d-choices and random, Van Houdt, SIGMETRICS 2013). docs/models.md says where each "
        "model stops holding.",
    )
    md.add_argument("model", choices=MODELS, metavar="NAME", help=f"the model: {', '.join(MODELS)}")
    config_args(md)
    md.add_argument(
        "--request-bytes",
        metavar="N[,N...]",
        help="x25m, nvme: request sizes in bytes (suffixes k, m for KiB, MiB; default 4k to 512k by doubling "
        "for x25m, 64, 512 and 4k for nvme)",
    )
    md.add_argument(
        "--queue-depth",
        type=int,
        default=1,
        metavar="Q",
        help="nvme: the queue depth of the T_stall bound (default 1)",
    )
    md.add_argument("--json", action="store_true", help="print the model's rows as JSON")
    md.set_defaults(func=_cmd_model)

    pr = sub.add_parser(
        "probe",
        help="measure a drive, a file or an NBD export with fio: IBM's microbenchmarks and a queue-depth sweep",
        description="Run microbenchmarks against TARGET with fio (direct I/O): IBM's method (sequential and random "
        "reads and writes at request sizes from 512 B to 1 MiB at queue depth 1, in an odd number of zones of the "
        "device) and a queue-depth sweep of 4 KiB random reads, and write every point with the estimates drawn from "
        "them (IBM's T(n) = A + n B per pattern, 4 KiB read and write latency, internal parallelism) to a JSON "
        "file (docs/probe.md). TARGET is a block device, a file, or an NBD URI (nbd+unix:///?socket=PATH). A path "
        "that does not exist is created, filled, measured and removed; anything else is written only with "
        "--destructive. Ctrl-C keeps the points measured so far.",
    )
    pr.add_argument("target", metavar="TARGET", help="block device, file, or nbd:// / nbd+unix:// URI")
    pr.add_argument("-o", "--output", required=True, metavar="POINTS.json", help="the points file to write")
    pr.add_argument(
        "--destructive", action="store_true", help="allow writing to a block device, existing file or export"
    )
    pr.add_argument("--reads-only", action="store_true", help="measure the read patterns only (nothing is written)")
    pr.add_argument("--sizes", metavar="N[,N...]", help="request sizes (default 512,4k,16k,64k,256k,1m)")
    pr.add_argument("--queue-depths", metavar="Q[,Q...]", help="the sweep's queue depths (default 1,2,4,...,64)")
    pr.add_argument("--zones", type=int, default=3, metavar="N", help="odd number of zones (default 3)")
    pr.add_argument("--zone-bytes", metavar="N", default="64m", help="bytes each zone spans (default 64m)")
    pr.add_argument("--seconds", type=float, default=1.0, metavar="S", help="length of each run (default 1)")
    pr.add_argument("--create-bytes", metavar="N", default="1g", help="size of a file the probe creates (default 1g)")
    pr.add_argument(
        "--page-sizes",
        metavar="N[,N...]",
        help="the page-size test's random-read sizes (default 512,1k,2k,4k,8k,16k,32k; 'none' skips it)",
    )
    pr.add_argument("--page-iodepth", type=int, default=64, metavar="Q", help="the page-size test's depth (default 64)")
    pr.add_argument(
        "--sustained-bytes",
        metavar="N",
        help="bytes of each sustained write, sequential (a write cache's cliff) then random (GC's onset), over "
        "the whole target (default: the target's size, at most 1g; 0 skips them)",
    )
    pr.add_argument(
        "--sustained",
        metavar="P[,P]",
        default="seq-write,rand-write",
        help="which sustained writes run: seq-write (a write cache's cliff), rand-write (GC's onset); default both",
    )
    pr.add_argument(
        "--sustained-seconds",
        type=float,
        default=600.0,
        metavar="S",
        help="longest time of each sustained write (default 600); it stops at --sustained-bytes or here",
    )
    pr.add_argument(
        "--log-ms", type=int, default=100, metavar="MS", help="the sustained writes' bandwidth log interval"
    )
    pr.add_argument(
        "--transport-us",
        type=float,
        default=0.0,
        metavar="US",
        help="a transport's time measured apart (an NBD connection to nbdkit memory, ...), removed from the "
        "latencies the estimates use",
    )
    pr.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    pr.set_defaults(func=_cmd_probe)

    cb = sub.add_parser(
        "calibrate",
        help="fit configuration keys so that simulated points match measured ones (probe or fio JSON)",
        description="Fit configuration keys of a base configuration so that its simulated mean latencies match "
        "measured points: `ssdkit probe`'s points file or fio's JSON output (--output-format=json; one of read, "
        "randread, write, randwrite per job). Each point runs as one flow (its pattern, request size, queue depth "
        "and range) on the base device; scipy's least_squares minimises the squared log-ratios of simulated to "
        "measured latency within the keys' bounds, from starting values given by the X25-M latency model; "
        "integer keys (channel counts, ...) are enumerated. Prints each point's error and writes the base "
        "configuration with the fitted values to -o, a file `ssdkit run` accepts (docs/calibrate.md).",
    )
    cb.add_argument("points", metavar="POINTS", help="ssdkit probe's points file, or fio's JSON output")
    cb.add_argument("--base", required=True, metavar="CONFIG", help="preset name or TOML file to start from")
    cb.add_argument(
        "--fit",
        action="append",
        required=True,
        metavar="KEY[:LO:HI]",
        help="a key to fit, e.g. flash.read_us or flash.bus.rate_mts:10:100 (repeatable). Without bounds a "
        "continuous key ranges over 1/4 to 4 times its base value, an integer key over 1/2 to 2 times; a list "
        "(flash.read_us = [LSB, MSB]) is scaled keeping its ratios, its first entry bounded",
    )
    cb.add_argument("-o", "--output", required=True, metavar="FITTED.toml", help="the configuration to write")
    cb.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of the base (repeatable); it stays in the fitted file",
    )
    cb.add_argument(
        "--requests", type=int, default=2000, metavar="N", help="requests per simulated point (default 2000)"
    )
    cb.add_argument("--seed", type=int, default=1, metavar="N", help="the seed of every simulated point (default 1)")
    cb.add_argument("--jobs", type=int, metavar="N", help="processes simulating points (default: every core)")
    cb.add_argument(
        "--max-evaluations",
        type=int,
        default=30,
        metavar="N",
        help="most least-squares iterations per fit (default 30); a fit that stops there is reported as not "
        "converged, with the best point found written",
    )
    cb.add_argument(
        "--subtract-us",
        type=float,
        default=0.0,
        metavar="US",
        help="subtract this from every measured latency first: a transport's overhead measured apart (NBD, ...)",
    )
    cb.add_argument("--json", action="store_true", help="print the fit as JSON instead of a table")
    cb.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    cb.set_defaults(func=_cmd_calibrate)

    cf = sub.add_parser(
        "c-flags",
        help="print the compiler and linker flags for the C API (libssdkit, ssdkit.h) of this install",
        description="Prints the flags that build a C program against this install's libssdkit and ssdkit.h: "
        "`cc -std=c11 prog.c $(ssdkit c-flags) -o prog`. The linker flags carry a run path to the library's "
        "folder, so the program runs without LD_LIBRARY_PATH.",
    )
    cf.add_argument("--cflags", action="store_true", help="only the compiler's flags (-I)")
    cf.add_argument("--libs", action="store_true", help="only the linker's flags (-L, -l, run path)")
    cf.set_defaults(func=_cmd_c_flags)
    return p, sub


MODELS = ("x25m", "nvme", "wa")


def _request_sizes(text: str) -> list[int]:
    sizes = []
    for item in text.split(","):
        t = item.strip().lower().removesuffix("ib").removesuffix("b")
        scale = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(t[-1:], 1)
        digits = t[:-1] if scale > 1 else t
        if not digits.isdigit() or int(digits) < 1:
            raise UserError(f"--request-bytes: {item.strip()!r} is not a size in bytes (e.g. 4096, 4k, 1m, 1g)")
        sizes.append(int(digits) * scale)
    return sizes


def _sizes_arg(text: str, what: str) -> list[int]:
    try:
        return _request_sizes(text)
    except UserError as e:
        raise UserError(str(e).replace("--request-bytes", what)) from None


def _cmd_probe(args: argparse.Namespace) -> int:
    plan = probe_mod.Plan(
        zones=args.zones,
        zone_bytes=_sizes_arg(args.zone_bytes, "--zone-bytes")[0],
        seconds=args.seconds,
    )
    if args.sizes:
        plan.sizes = _sizes_arg(args.sizes, "--sizes")
    if args.queue_depths:
        try:
            plan.queue_depths = [int(q) for q in args.queue_depths.split(",")]
        except ValueError:
            raise UserError(f"--queue-depths: {args.queue_depths!r} is not a list of integers") from None
    if args.reads_only:
        plan.patterns = [p for p in probe_mod.PATTERNS if p.endswith("read")]
    if args.page_sizes:
        plan.page_sizes = [] if args.page_sizes == "none" else _sizes_arg(args.page_sizes, "--page-sizes")
    plan.page_iodepth = args.page_iodepth
    if args.sustained_bytes is not None:
        plan.sustained_bytes = (
            0 if args.sustained_bytes.strip() == "0" else _sizes_arg(args.sustained_bytes, "--sustained-bytes")[0]
        )
    plan.log_ms = args.log_ms
    plan.sustained_seconds = args.sustained_seconds
    plan.sustained_patterns = [p.strip() for p in args.sustained.split(",") if p.strip()]
    plan.transport_us = args.transport_us
    bar = None
    if not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=0, unit="run", file=sys.stderr)

    def progress(i: int, n: int, run: dict) -> None:
        if bar is not None:
            bar.total = n
            bar.n = i
            bar.set_description(f"{run['pattern']} {run['request_bytes']} B QD{run['iodepth']}")
            bar.refresh()

    # Ctrl-C keeps the points measured so far: Python's handler raises KeyboardInterrupt
    # between fio's runs, where main() had left the default action.
    _set_sigint(signal.default_int_handler)
    try:
        doc = probe_mod.probe(
            args.target,
            args.output,
            plan=plan,
            destructive=args.destructive,
            create_bytes=_sizes_arg(args.create_bytes, "--create-bytes")[0],
            progress=progress,
        )
    except KeyboardInterrupt:
        print(f"ssdkit probe: interrupted; the points measured so far are in {args.output}", file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
    est = doc["estimates"]
    print(f"{len(doc['points'])} points of {args.target} in {args.output}")
    for name in ("read_latency_4k_qd1", "write_latency_4k_qd1"):
        e = est[name]
        if "value_us" in e:
            print(f"  {name.replace('_', ' ')}: {e['value_us']:.2f} +- {e['stderr_us']:.2f} us")
    par = est["parallelism"]
    if "value" in par:
        print(f"  parallelism: {par['value']:.1f} +- {par['stderr']:.1f} (knee at QD{par['knee_iodepth']})")
    pg = est["page_size"]
    if "value_bytes" in pg:
        print(f"  page size: {pg['value_bytes']} B (below {pg['range_bytes'][1]} B)")
    pl = est["program_latency"]
    if "value_us" in pl:
        print(f"  program latency: {pl['value_us']:.2f} +- {pl['stderr_us']:.2f} us ({pl['method']})")
    for name, what in (("write_cache", "write cache"), ("gc_onset", "GC onset")):
        e = est[name]
        if "value_bytes" in e:
            lower = (
                f" (at least {e['lower_bytes'] / 2**20:.1f} MiB if it drains while filling)"
                if "lower_bytes" in e
                else ""
            )
            print(f"  {what}: {e['value_bytes'] / 2**20:.1f} MiB +- {e['resolution_bytes'] / 2**20:.1f} MiB{lower}")
        elif "none_within_bytes" in e:
            print(f"  {what}: none seen in {e['none_within_bytes'] / 2**20:.0f} MiB")
    for pattern, f in est["ibm_linear_model"].items():
        if "a_us" in f:
            print(
                f"  {pattern}: T(n) = {f['a_us']:.2f} us + n x {f['b_us_per_byte'] * 1e3:.4f} ns/B (R^2 {f['r2']:.4f})"
            )
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    overrides = {}
    for o in args.overrides:
        k, eq, v = o.partition("=")
        if not eq or not k.strip():
            raise UserError(f"--set {o!r}: give KEY=VALUE")
        overrides[k.strip()] = tomltext.parse_override_value(v.strip())
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}")
    if args.max_evaluations < 1:
        raise UserError(f"--max-evaluations must be at least 1, got {args.max_evaluations}")
    inputs = [("points file", args.points)] + api.config_inputs(args.base, overrides)
    outputs.check([("fitted configuration", args.output)], inputs)
    fit = cal.calibrate(
        args.points,
        args.base,
        args.fit,
        overrides=overrides,
        requests=args.requests,
        seed=args.seed,
        jobs=args.jobs,
        max_evaluations=args.max_evaluations,
        subtract_us=args.subtract_us,
        log=None if args.quiet else cal._stderr,
    )
    text = cal.fitted_toml(args.base, fit, overrides=overrides, origin=os.path.basename(args.points))
    outputs.write(args.output, text, "fitted configuration")
    if args.json:
        import json

        print(json.dumps(fit.document(), indent=2))
    else:
        print(cal.table(fit))
        print(f"fitted configuration written to {args.output}")
    if not fit.converged:
        _error(f"the fit did not converge ({fit.message}); {args.output} holds the best point found")
        return 1
    return 0


def _cmd_model(args: argparse.Namespace) -> int:
    if args.config is None and args.preset is None:
        raise UserError("ssdkit model: give a configuration (a preset name or TOML file)")
    kw = {"preset": args.preset, "overrides": _overrides_with_seed(args)}
    try:
        sized = {} if not args.request_bytes else {"request_bytes": _request_sizes(args.request_bytes)}
        if args.model == "x25m":
            rows = models.x25m(args.config, **sized, **kw)
        elif args.model == "nvme":
            rows = models.nvme(args.config, **sized, queue_depth=args.queue_depth, **kw)
        else:
            if args.request_bytes:
                raise UserError("--request-bytes applies to the x25m and nvme models only")
            rows = [models.write_amplification(args.config, **kw)]
        if args.queue_depth != 1 and args.model != "nvme":
            raise UserError("--queue-depth applies to the nvme model only")
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.json:
        import json

        print(json.dumps(rows, indent=2))
        return 0
    name = args.config if args.config is not None else args.preset
    if args.model == "wa":
        r = rows[0]
        print(f"steady-state write amplification of {name}: {r['wa']:.4f}")
        print(
            f"  {r['model']}; spare factor {r['spare_factor']:g}, {r['pages_per_block']} pages per block, "
            "uniform random single-page writes"
        )
        return 0
    if args.model == "nvme":
        print(f"NVMeSim's Eq. 1-3 on {name}'s PCIe link: queue depth 1 (T_stall 0), times in us")
        head = (
            "op",
            "bytes",
            "DB-Write",
            "I/O-Req",
            "I/O-Fetch",
            "DMA",
            "NVM",
            "CPL",
            "MSI",
            "Eq. 1-2",
            "Eq. 3",
            "share",
        )
        print(f"{head[0]:<6} {head[1]:>8}" + "".join(f" {h:>9}" for h in head[2:-1]) + f" {head[-1]:>7}")
        keys = ("db_write_us", "io_req_us", "io_fetch_us", "dma_us", "nvm_us", "cpl_submit_us", "msi_us")
        for r in rows:
            terms = "".join(f" {r[k]:>9.4f}" for k in (*keys, "latency_us", "overhead_us"))
            print(f"{r['op']:<6} {r['request_bytes']:>8}{terms} {r['overhead_share']:>7.2%}")
        qd = args.queue_depth
        print(f"T_stall at queue depth {qd} once the link is the bottleneck, at least (Little's law), us:")
        for r in rows:
            print(
                f"  {r['op']:<6} {r['request_bytes']:>8} B: up {r['up_us']:.4f} + down {r['down_us']:.4f} per request;"
                f" T_stall >= {r['stall_bound_us']:.4f}"
            )
        return 0
    print(f"X25-M latency model of {name}: queue depth 1, no garbage collection")
    for op, sym in (("write", "W"), ("read", "R")):
        r = next(x for x in rows if x["op"] == op)
        eq = "Eq. 1" if op == "write" else "Eq. 2"
        print(
            f"  {op}: {sym}_ch {r['ch_us']:g} + {sym}_reg {r['reg_us']:g} + {sym}_cell {r['cell_us']:g} = "
            f"{sym}_page {r['page_us']:g} us ({eq}); rho {r['rho']} pages in flight; t_wait {r['t_wait_us']:g} us "
            "(Eq. 3)"
        )
    print(f"{'op':<6} {'bytes':>9} {'pages':>6} {'cycles':>6} {'latency us':>11} {'IOPS':>10} {'MiB/s':>8}")
    for r in rows:
        print(
            f"{r['op']:<6} {r['request_bytes']:>9} {r['pages']:>6} {r['cycles']:>6} {r['latency_us']:>11.1f} "
            f"{r['iops']:>10.1f} {r['mib_per_s']:>8.1f}"
        )
    return 0


def _cmd_c_flags(args: argparse.Namespace) -> int:
    both = not args.cflags and not args.libs
    print(c_api.flags(compile=both or args.cflags, link=both or args.libs))
    return 0


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _config_kwargs(args: argparse.Namespace) -> dict:
    return {"preset": args.preset, "overrides": list(args.overrides), "seed": args.seed}


def _cmd_run(args: argparse.Namespace) -> int:
    out = args.output
    outs = [("result JSON", out)] if out else []
    if args.latency_log:
        outs.append((latency_log.WHAT, args.latency_log))  # its suffix is checked by ssdkit.run, before the run
    if args.timeseries is not None:
        args.overrides.append(f"run.timeseries_window_ms={args.timeseries!r}")
    if args.steady_state:
        args.overrides.append("steady_state.enabled=true")
    inputs = [("snapshot file", args.snapshot)] if args.snapshot else []
    if args.fio or args.mqsim:
        if args.fairness or args.workers is not None:
            raise UserError(
                "--fairness goes with a preset or TOML configuration; convert first (`ssdkit fio2toml`, "
                "`ssdkit import mqsim`) and run the TOML"
            )
        result = _run_converted(args, inputs, outs)
    else:
        for opt in ("scenario", "trace_dir"):
            if getattr(args, opt) is not None:
                raise UserError(f"--{opt.replace('_', '-')} goes with --mqsim")
        if args.mqsim_compat:
            raise UserError("--mqsim-compat goes with --mqsim")
        # Checked before the run, not after minutes of it; the inputs are only looked up when an
        # output exists (a new file cannot be one of them).
        outputs.check(
            outs,
            lambda: inputs + api.input_files(api._source(args.config, args.preset), _overrides_with_seed(args)),
        )
        if args.workers is not None and not args.fairness:
            raise UserError("--workers goes with --fairness")
        if args.fairness and args.latency_log:
            raise UserError("--latency-log does not go with --fairness")
        result = api.run(
            args.config,
            progress=not args.no_progress and not args.fairness,
            snapshot=args.snapshot,
            latency_log=args.latency_log,
            fairness=args.fairness,
            workers=args.workers,
            **_config_kwargs(args),
        )
    _report_detection(result)
    global _exit_at_once
    _exit_at_once = not args.fairness
    # The document's text only where it goes: a summary alone does not pay for it.
    text = result._document_text() if out or args.json else ""
    if out:
        outputs.write(out, text + "\n", "result JSON")
    print(text if args.json else result.summary())
    return 0


def _report_detection(result) -> None:
    """Says on stderr how each auto-detected trace was read, and why."""
    for f in result.flows:
        why = (f.trace or {}).get("detection")
        if why:
            print(f"{PROG}: trace of flow {f.index} ({f.trace.get('path')}): {why}", file=sys.stderr)


def _overrides_with_seed(args: argparse.Namespace) -> list[str]:
    ov = list(args.overrides)
    if getattr(args, "seed", None) is not None:
        ov.append(f"run.seed={args.seed}")
    return ov


def _run_converted(args: argparse.Namespace, inputs: list[tuple[str, str]], outs: list[tuple[str, str]]):
    """`run --fio` / `run --mqsim`: convert, then run; the overrides go to the core."""
    ov = _overrides_with_seed(args)
    base_text = None
    origin = ""
    if args.mqsim:
        if len(args.mqsim) > 2:
            raise UserError("--mqsim takes ssdconfig.xml and at most one workload.xml")
        if args.config is not None or args.preset is not None:
            raise UserError("--mqsim gives the device; drop CONFIG / --preset")
        ssdconfig, workload = args.mqsim[0], (args.mqsim[1] if len(args.mqsim) > 1 else None)
        if args.fio and workload:
            raise UserError("give either workload.xml or --fio for the flows, not both")
        if not args.fio and workload is None:
            raise UserError("--mqsim needs workload.xml for the flows (or --fio JOB.fio)")
        inputs.append(("MQSim ssdconfig.xml", ssdconfig))
        if workload:
            inputs.append(("MQSim workload.xml", workload))
        scs = mqsim.import_mqsim(
            ssdconfig,
            workload,
            trace_dir=args.trace_dir,
            overrides=ov,
            apply_overrides=False,
            mqsim_compat=args.mqsim_compat,
        )
        sc = mqsim.pick_scenario(scs, None if args.fio else args.scenario, workload or ssdconfig)
        _warn_unmapped(sc.unmapped)
        if args.mqsim_compat:
            _warn_compat()
        origin = f"MQSim {workload or ssdconfig}" + (f" scenario {sc.index}" if sc.index else "")
        base_text = sc.toml
    elif args.scenario is not None or args.trace_dir is not None or args.mqsim_compat:
        raise UserError("--scenario, --trace-dir and --mqsim-compat go with --mqsim")
    if args.fio:
        inputs.append(("fio job file", args.fio))
        if base_text is None:
            inputs += _config_file(args)
        conv = fio.convert_fio(
            args.fio,
            base_text if base_text is not None else args.config,
            preset=args.preset,
            overrides=ov,
            apply_overrides=False,
        )
        text, origin = conv.toml, f"fio job file {args.fio}"
    else:
        text = base_text  # type: ignore[assignment]
    tool = f"ssdkit fio2toml {args.fio}" if args.fio else "ssdkit import mqsim ..."

    def converted_inputs() -> list[tuple[str, str]]:
        try:
            return inputs + api.input_files(api._source(text, None), ov)
        except SsdkitError as e:
            raise type(e)(f"{e} (configuration converted from {origin}; `{tool}` shows it)") from None

    outputs.check(outs, converted_inputs)
    try:
        return api.run(
            text, progress=not args.no_progress, snapshot=args.snapshot, overrides=ov, latency_log=args.latency_log
        )
    except SsdkitError as e:
        raise type(e)(f"{e} (configuration converted from {origin}; `{tool}` shows it)") from None


def _warn_unmapped(entries) -> None:
    lines = list(dict.fromkeys(e.line() for e in entries))
    if not lines:
        return
    print(
        f"{PROG}: warning: {len(lines)} MQSim parameters are not reproduced exactly "
        "(also listed at the top of the converted TOML):",
        file=sys.stderr,
    )
    for line in mqsim.warning_lines(entries):
        print(f"  {line}", file=sys.stderr)


def _config_file(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The configuration file CONFIG names, as an input of the run (none for a preset)."""
    if args.config is None or args.preset is not None:
        return []
    origin = api._source(args.config, None).get("origin", "<string>")
    return [] if origin == "<string>" else [("configuration file", origin)]


def _cmd_fio2toml(args: argparse.Namespace) -> int:
    if args.output:
        outputs.check([("TOML", args.output)], [("fio job file", args.job), *_config_file(args)])
    text = fio.fio_to_toml(args.job, args.config, preset=args.preset, overrides=_overrides_with_seed(args))
    if args.output:
        outputs.write(args.output, text, "TOML")
    else:
        sys.stdout.write(text)
    return 0


def _warn_compat() -> None:
    sys.stderr.write("ssdkit: MQSim behaviours on (--mqsim-compat):\n")
    for line in mqsim.compat_lines():
        sys.stderr.write(f"  {line}\n")


def _cmd_import_mqsim(args: argparse.Namespace) -> int:
    out = args.output
    if out:
        outputs.check([("TOML", out)])  # before converting; every scenario's file is checked below
    rel = os.path.dirname(os.path.abspath(out)) if out else None
    scs = mqsim.import_mqsim(
        args.ssdconfig,
        args.workload,
        trace_dir=args.trace_dir,
        overrides=args.overrides,
        relative_to=rel,
        mqsim_compat=args.mqsim_compat,
    )
    if args.mqsim_compat:
        _warn_compat()
    if args.scenario is not None:
        scs = [mqsim.pick_scenario(scs, args.scenario, args.workload or args.ssdconfig)]
    elif len(scs) > 1 and not out:
        raise UserError(
            f"{args.workload} has {len(scs)} scenarios: write them with -o OUT.toml "
            f"(OUT_scenario_<k>.toml) or pick one with --scenario 1..{len(scs)}"
        )
    for sc in scs:
        mqsim.validate(sc)
    if not out:
        _warn_unmapped([e for sc in scs for e in sc.unmapped])
        sys.stdout.write(scs[0].toml)
        return 0
    if len(scs) == 1:
        files = [(out, scs[0].toml)]
    else:
        stem, ext = os.path.splitext(out)
        files = [(f"{stem}_scenario_{sc.index}{ext or '.toml'}", sc.toml) for sc in scs]
    inputs = [("MQSim ssdconfig.xml", args.ssdconfig)]
    if args.workload:
        inputs.append(("MQSim workload.xml", args.workload))
    for sc in scs:
        for i, f in enumerate(sc.doc.get("flow", [])):
            if f.get("trace"):
                # Written relative to the output's folder (see `relative_to` above).
                inputs.append((f"trace file of scenario {sc.index} flow {i}", os.path.join(rel, f["trace"])))
    outputs.check([("TOML", p) for p, _ in files], inputs)
    _warn_unmapped([e for sc in scs for e in sc.unmapped])
    outputs.write_all([("TOML", p, text) for p, text in files])
    for path, _ in files:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _cmd_precondition(args: argparse.Namespace) -> int:
    # api.precondition checks the output (ssdkit.outputs) before preconditioning; the core
    # writes the snapshot (beside a regular file, then renamed).
    rec = api.precondition(args.config, args.output, **_config_kwargs(args))
    print(rec.to_json() if args.json else rec.summary())
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import subprocess  # here: only `serve --run` starts a child, and the import costs every command 4 ms
    import threading

    stop = threading.Event()
    child: list[subprocess.Popen] = []

    def ready(uri: str, capacity: int, queues: int) -> None:
        print(
            f"ssdkit serve: serving {serve_mod.size_text(capacity)} ({capacity} bytes) on {uri} "
            f"({queues} queue pairs, clock {args.clock}); "
            + ("running --run" if args.run else "stop with Ctrl-C or SIGTERM"),
            file=sys.stderr,
            flush=True,
        )
        if args.run:
            # As nbdkit's --run: a captive server for one command.
            env = {**os.environ, "uri": uri, "nbd_socket": os.path.abspath(args.socket) if args.socket else ""}
            child.append(subprocess.Popen(["/bin/sh", "-c", args.run], env=env))
            threading.Thread(target=lambda: (child[0].wait(), stop.set()), daemon=True).start()

    if args.result_every is not None and args.result_every <= 0:
        raise UserError(f"--result-every {args.result_every}: give a positive number of seconds")
    result = serve_mod.serve(
        args.config,
        socket=args.socket,
        listen=args.listen,
        allow_remote=args.allow_remote,
        clock=args.clock,
        queues=args.queues,
        snapshot=args.snapshot,
        read_only=args.read_only,
        backing=args.backing,
        durable=args.durable,
        memory_limit=args.memory_limit,
        export_name=args.export_name,
        spin_us=args.spin_us,
        output=args.output,
        result_every=args.result_every,
        latency_log=args.latency_log,
        on_ready=ready,
        stop=stop,
        **_config_kwargs(args),
    )
    em = result.emulator or {}
    n, conns = em.get("requests", 0), em.get("connections_total", 0)
    print(
        f"ssdkit serve: stopped after {n} request{'' if n == 1 else 's'} on {conns} "
        f"connection{'' if conns == 1 else 's'} ({em.get('errors', 0)} answered with an error)",
        file=sys.stderr,
    )
    if args.json:
        print(result.to_json())
    for path in (args.output, args.latency_log):
        if path:
            print(f"wrote {path}", file=sys.stderr)
    if child:
        code = child[0].wait()
        if code != 0:
            print(f"ssdkit serve: --run command exited with status {code}", file=sys.stderr)
        return code if code >= 0 else 128 - code
    return 0


def _cmd_presets(args: argparse.Namespace) -> int:
    if args.presets_command == "show":
        sys.stdout.write(api.preset_toml(args.name))
        return 0
    entries = api.presets()
    width = max(len(n) for n, _ in entries)
    for name, desc in entries:
        print(f"{name:<{width}}  {desc}")
    return 0


def _cmd_config_show(args: argparse.Namespace) -> int:
    sys.stdout.write(api.resolve_config(args.config, **_config_kwargs(args)))
    return 0


def _cmd_config_schema(args: argparse.Namespace) -> int:
    print(api.config_schema())
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    # Before drawing, as is the output check; a pipe or device (/dev/stdout) gets PNG.
    fmt = plot.image_format(args.output, "png" if outputs.kind(args.output, "image") == outputs.STREAM else None)
    outputs.check([("image", args.output)], [("result JSON", args.result)])
    try:
        fig = plot.plot_file(args.result, args.kind)
    except FileNotFoundError:
        raise UserError(f"cannot read `{args.result}`: no such file") from None
    except (ValueError, KeyError) as e:
        raise UserError(f"`{args.result}`: {e}") from None
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    outputs.write(args.output, buf.getvalue(), "image")
    print(f"{args.kind} -> {args.output}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    try:
        report_mod.report(args.source, args.output)
    except FileNotFoundError:
        raise UserError(f"cannot read `{args.source}`: no such file") from None
    except (ValueError, KeyError) as e:
        raise UserError(f"`{args.source}`: not an ssdkit result or sweep table ({e})") from None
    print(f"report -> {args.output}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:

    spec = sweep_mod.load_sweep_file(args.sweep_file)
    # ssdkit.sweep checks the output against the configuration and its traces; the sweep file
    # is only known here.
    outputs.check([("sweep table", args.output)], [("sweep file", args.sweep_file)])
    try:
        table = sweep_mod.sweep(
            spec.pop("config"), output=args.output, workers=args.workers, progress=not args.no_progress, **spec
        )
    except ConfigError as e:  # a key or value of the sweep file: say which file
        raise UserError(f"{args.sweep_file}: {e}") from None
    failed = table["error"].notna().groupby(table["point"]).any().sum()
    points = table["point"].nunique()
    print(f"{points} points, {len(table)} rows -> {args.output}" + (f"; {failed} failed" if failed else ""))
    return 1 if failed == points else 0


def _cmd_bench(args: argparse.Namespace) -> int:
    doc = bench.run_bench(
        args.requests, log=None if args.json else sys.stdout, overrides=args.overrides, jobs=args.jobs
    )
    if args.json:
        import json

        print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
