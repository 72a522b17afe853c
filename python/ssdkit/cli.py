"""The ``ssdkit`` command. User mistakes end with one ``ssdkit: error: ...`` line on stderr and
exit status 2 (argparse's convention), never a traceback; tracebacks are left for bugs."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import sys
import threading
from collections.abc import Sequence

from . import api
from ._native import SsdkitError, __version__

PROG = "ssdkit"
EXIT_USAGE = 2


class UserError(Exception):
    """A mistake in the command line or its files, reported without a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    # The simulation runs in Rust without the GIL, where Python's SIGINT handler only sets a
    # flag that is read after the run; the default action makes Ctrl-C stop a long run at once.
    # No output file can be half-written: it is only created after the run succeeds.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (SsdkitError, UserError) as e:
        _error(str(e))
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; Python would otherwise complain again when it
        # flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _error(msg: str) -> None:
    # One line, so scripts and `grep` see the whole message; some core messages carry a
    # trailing context line (e.g. "\nin `flash`").
    flat = " ".join(part.strip() for part in str(msg).splitlines() if part.strip())
    print(f"{PROG}: error: {flat}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Discrete-event SSD simulator.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def config_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("config", nargs="?", metavar="CONFIG", help="preset name or TOML file")
        sp.add_argument("--preset", metavar="NAME", help="built-in preset (see `ssdkit presets`)")
        sp.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override one key, e.g. flash.channels=4 or flow.0.queue_depth=32 (repeatable)",
        )
        sp.add_argument("--seed", type=int, metavar="N", help="shortcut for --set run.seed=N")

    r = sub.add_parser("run", help="run a simulation and print a summary")
    config_args(r)
    r.add_argument("-o", "--output", metavar="OUT.json", help="also write the result JSON here")
    r.add_argument("--json", action="store_true", help="print the result JSON instead of the summary")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    r.add_argument(
        "--snapshot",
        metavar="DEVICE.snap",
        help="start from this saved device state (see `ssdkit precondition`) instead of preconditioning",
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

    b = sub.add_parser("bench", help="measure simulator speed on standard workloads")
    b.add_argument(
        "--requests", type=_positive_int, default=1_000_000, metavar="N", help="requests per case (default 1000000)"
    )
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
    b.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change the device for every case, e.g. flash.blocks_per_plane=128 for a quick check "
        "(the targets are for the unmodified preset; repeatable)",
    )
    b.set_defaults(func=_cmd_bench)
    return p


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
    if args.output:
        _check_writable_dir(args.output)  # fail before the run, not after minutes of it
    result = api.run(args.config, progress=not args.no_progress, snapshot=args.snapshot, **_config_kwargs(args))
    text = result.to_json()
    if args.output:
        _write_atomic(args.output, text + "\n")
    print(text if args.json else result.summary())
    return 0


def _cmd_precondition(args: argparse.Namespace) -> int:
    _check_writable_dir(args.output)  # fail before preconditioning; the core writes atomically
    rec = api.precondition(args.config, args.output, **_config_kwargs(args))
    print(rec.to_json() if args.json else rec.summary())
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


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    doc = bench.run_bench(args.requests, log=None if args.json else sys.stdout, overrides=args.overrides)
    if args.json:
        print(json.dumps(doc, indent=2))
    return 0


def _check_writable_dir(path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UserError(f"cannot write `{path}`: directory `{d}` does not exist")
    if not os.access(d, os.W_OK):
        raise UserError(f"cannot write `{path}`: directory `{d}` is not writable")


def _write_atomic(path: str, text: str) -> None:
    """Writes through a temporary file in the same directory and renames it over ``path``, so
    readers never see half a document and an interrupted write leaves the old file intact."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, f".{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
    try:
        # os.open with 0o666 lets the umask decide the final mode, as for a plain open().
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UserError(f"cannot write `{path}`: {e.strerror or e}") from None
        raise


if __name__ == "__main__":
    sys.exit(main())
