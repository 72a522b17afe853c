"""``ssdkit serve``: the simulated SSD as a block device that real programs use, over NBD
(the Network Block Device protocol), with its data stored and its latencies from the model.
See docs/serve.md."""

from __future__ import annotations

import json
import os
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable

from . import _json, _native, outputs
from ._columns import OPS
from ._native import ConfigError
from .api import _override_list, _path, _source, input_files
from .latency_log import WHAT as LOG_WHAT
from .latency_log import LatencyLogWriter, check_path
from .result import Result
from .serve_options import CLOCKS, DEFAULT_MEMORY_LIMIT, DEFAULT_QUEUES

if TYPE_CHECKING:
    from .api import ConfigArg, Overrides, PathArg

_STOP, _DUMP = 2, 1


class _ServeLog(LatencyLogWriter):
    """The latency log of ``ssdkit serve``: the simulated times and, beside them, when each
    request arrived and when its reply was written, on the wall clock."""

    def __init__(self, path: str, clock: str):
        super().__init__(path)
        self.clock = clock

    def _table(self, cols: dict[str, bytearray]):
        import numpy as np
        import pyarrow as pa

        a = {k: np.frombuffer(v, dtype=np.int64) for k, v in cols.items()}
        table = {
            "queue": a["queue"],
            "op": pa.array(np.array(OPS, dtype=object)[a["op"]].astype(str))
            if len(a["op"])
            else pa.array([], pa.string()),
            "offset_bytes": a["offset_bytes"],
            "bytes": a["bytes"],
            "submit_ns": a["submit_ns"],
            "complete_ns": a["complete_ns"],
            "latency_ns": a["latency_ns"],
            "arrival_ns": a["arrival_ns"],
            "reply_ns": a["reply_ns"],
            "observed_ns": a["reply_ns"] - a["arrival_ns"],
        }
        if self.clock == "real":
            # Simulated time is wall time since the server started: the reply was due at
            # complete_ns.
            table["late_ns"] = a["reply_ns"] - a["complete_ns"]
        return pa.table(table)

    def close(self) -> None:
        if self._writer is None:
            self.write(
                {
                    k: bytearray()
                    for k in (
                        "queue",
                        "op",
                        "offset_bytes",
                        "bytes",
                        "submit_ns",
                        "complete_ns",
                        "latency_ns",
                        "arrival_ns",
                        "reply_ns",
                    )
                }
            )
        super().close()


def serve(
    config: ConfigArg = None,
    *,
    socket: PathArg | None = None,
    listen: str | None = None,
    allow_remote: bool = False,
    clock: str = "real",
    queues: int = DEFAULT_QUEUES,
    preset: str | None = None,
    overrides: Overrides = None,
    seed: int | None = None,
    snapshot: PathArg | None = None,
    read_only: bool = False,
    backing: PathArg | None = None,
    durable: bool = False,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    export_name: str = "ssdkit",
    spin_us: int = 50,
    output: PathArg | None = None,
    result_every: float | None = None,
    latency_log: PathArg | None = None,
    on_ready: Callable[[str, int, int], Any] | None = None,
    stop: threading.Event | None = None,
    **kw: Any,
) -> Result:
    """Serves the configured device as an NBD export until stopped, and returns the
    :class:`Result` of everything it simulated, with ``Result.emulator`` (docs/serve.md).

    Exactly one of ``socket`` (a Unix socket path) and ``listen`` (``"HOST:PORT"``, loopback
    only unless ``allow_remote``: NBD has no authentication) says where. ``clock="real"``:
    simulated time follows the wall clock and each reply leaves at its request's arrival plus
    its simulated latency; ``"fast"``: replies leave as soon as simulated. ``queues`` queue
    pairs are built (copies of the last ``[[flow]]``), one per connection, so that many clients
    can be connected at once. The data is kept in memory up to ``memory_limit`` bytes, or in
    the sparse file ``backing`` (created with the device's size when missing); ``durable``
    makes FLUSH and FUA fdatasync it before replying.

    ``config``, ``preset``, ``overrides``, ``seed``, ``snapshot`` and keyword overrides are
    those of :func:`ssdkit.run`. ``output`` is written with the result document at the end,
    every ``result_every`` seconds, and on SIGUSR1; ``latency_log`` (``.parquet``/``.csv``)
    gets one row per request at the end. ``on_ready(uri, capacity_bytes, queues)`` is called
    once clients can connect. It stops when ``stop`` (a ``threading.Event``) is set, or, when
    called from the main thread, on SIGINT or SIGTERM: requests in flight are answered, the
    backing file flushed, the result written. Bad input raises before anything is served."""
    if (socket is None) == (listen is None):
        raise ConfigError("give exactly one of `socket` (a Unix socket path) and `listen` (HOST:PORT)")
    if clock not in CLOCKS:
        raise ConfigError(f"clock {clock!r}: allowed values are {', '.join(map(repr, CLOCKS))}")
    for name, v, lo in (("queues", queues, 1), ("memory_limit", memory_limit, 4096), ("spin_us", spin_us, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ConfigError(f"`{name}` = {v!r} must be an integer >= {lo}")
    if queues > 65535:
        raise ConfigError(f"`queues` = {queues} must be at most 65535")
    if result_every is not None and not (isinstance(result_every, (int, float)) and result_every > 0):
        raise ConfigError(f"`result_every` = {result_every!r} must be a positive number of seconds")
    if result_every is not None and output is None:
        raise ConfigError("`result_every` writes the result to `output`: give an output path too")
    if durable and backing is None:
        raise ConfigError("`durable` needs a `backing` file: the in-memory store has nothing to make durable")
    src = _source(config, preset)
    ov = _override_list(overrides, kw, seed)
    snap = None if snapshot is None else _path(snapshot, "snapshot")
    sock = None if socket is None else _path(socket, "socket")
    back = None if backing is None else _path(backing, "backing")
    out = None if output is None else _path(output, "output")
    log = None if latency_log is None else _path(latency_log, "latency_log")

    def inputs() -> list[tuple[str, str]]:
        return input_files(src, ov) + ([("snapshot file", snap)] if snap else [])

    if back is not None:
        outputs.check([("backing file", back)], inputs, stream=False, why=" (a sparse file the data is kept in)")
    outs = [("result JSON", out)] if out else []
    with_backing = lambda: inputs() + ([("backing file", back)] if back else [])
    # A backing file the server will create is an output too: -o or the latency log on the
    # same new path would be written over it at exit (outputs.check compares new paths only
    # among the outputs it is given).
    created = [("backing file", back)] if back is not None and not os.path.lexists(back) else []
    if outs:
        outputs.check(outs + created, with_backing)
    if log is not None:
        check_path(log, lambda: with_backing() + [(w, p) for w, p in outs])
        outputs.check([(LOG_WHAT, log), *outs, *created], with_backing)

    flags = {"stop": False, "dump": False}
    restore: list[tuple[int, Any]] = []
    if threading.current_thread() is threading.main_thread():

        def on_stop(signum: int, frame: Any) -> None:
            flags["stop"] = True

        def on_dump(signum: int, frame: Any) -> None:
            flags["dump"] = True

        for sig, handler in ((signal.SIGINT, on_stop), (signal.SIGTERM, on_stop), (signal.SIGUSR1, on_dump)):
            restore.append((sig, signal.signal(sig, handler)))

    def control() -> int:
        if flags["stop"] or (stop is not None and stop.is_set()):
            return _STOP
        if flags["dump"]:
            flags["dump"] = False
            return _DUMP
        return 0

    def on_result(text: str) -> None:
        if out is not None:
            # As `ssdkit run -o` writes it; replaced whole (written beside, then renamed).
            outputs.write(out, _json.dumps(json.loads(text), indent=2) + "\n", "result JSON")

    writer = _ServeLog(log, clock) if log is not None else None
    try:
        text = _native.serve(
            overrides=ov,
            snapshot=snap,
            socket=sock,
            listen=listen,
            allow_remote=allow_remote,
            clock=clock,
            queues=queues,
            read_only=read_only,
            backing=back,
            durable=durable,
            memory_limit=memory_limit,
            export_name=export_name,
            spin_us=spin_us,
            result_every=result_every,
            on_ready=on_ready,
            control=control,
            on_result=on_result,
            log_sink=None if writer is None else writer.write,
            **src,
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        for sig, old in restore:
            signal.signal(sig, old)
    if writer is not None:
        writer.close()
    on_result(text)
    return Result.from_json(text)


def size_text(n: int) -> str:
    """Bytes in binary units, as a person reads a disk's size."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} B"
