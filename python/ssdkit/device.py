"""``ssdkit.Device``: a simulated SSD that a Python program drives one request at a time (the
integrated, execution-driven mode a full-system simulator needs), instead of a workload
described in the configuration.

>>> import ssdkit
>>> with ssdkit.Device("mqsim-paper", overrides={"flash.blocks_per_plane": 128}) as dev:
...     rid = dev.submit(0, "read", 0, 4096)
...     dev.run_to_idle()
...     [c] = dev.drain()
...     print(c.id == rid, c.latency_ns)

Units: times are integer **nanoseconds** (a submission at ``t`` is at ``t * 1000`` ps exactly,
the core's clock counting picoseconds); completion times are the exact picoseconds floored to
nanoseconds (:meth:`Device.drain_arrays` also gives the exact ``submit_ps`` and
``complete_ps``). Offsets and sizes are bytes, multiples of the sector (``interface.sector_bytes``, 512 by
default).
"""

from __future__ import annotations

import numbers
import os
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from . import _native

# The request log's columns live in _columns (the run API and the latency log read them too);
# their names stay importable from here.
from ._columns import BREAKDOWN_STEPS, NATIVE_COLUMNS, OPS, _arrays, _breakdown_ns  # noqa: F401
from ._native import RequestError
from .api import _override_list, _path, _source
from .result import Result

if TYPE_CHECKING:
    from types import TracebackType

    import numpy as np
    from numpy.typing import ArrayLike
    from typing_extensions import Self

    from .api import Overrides

_OP_CODES = {name: code for code, name in enumerate(OPS)}
_INT64_MAX = 2**63 - 1
# numpy is imported by the functions that need it, not with ssdkit: `import ssdkit` stays fast
# for a command line run that never touches an array.

IntArg = Union[int, "np.integer[Any]"]


class Completion(NamedTuple):
    """One finished request, as :meth:`Device.drain` returns it."""

    #: The id :meth:`Device.submit` returned (0, 1, ... in submission order).
    id: int
    #: The queue pair it was submitted on.
    queue: int
    #: ``"read"``, ``"write"``, ``"trim"`` or ``"flush"``.
    op: str
    offset_bytes: int
    bytes: int
    #: Submission time (exact: submissions are in whole nanoseconds).
    submit_ns: int
    #: Completion time: the exact picoseconds floored to nanoseconds.
    complete_ns: int
    #: ``complete_ns - submit_ns``: the exact latency floored to nanoseconds. Counted from
    #: submission, so it includes any wait in the host for room in a full submission queue.
    latency_ns: int


class Device:
    """A simulated SSD driven step by step. The same simulator as :func:`ssdkit.run`, with the
    configured flows' workloads replaced by the program's submissions: each ``[[flow]]`` of
    the configuration is one NVMe queue pair (its priority, arbitration weight and plane
    pinning still apply), numbered from 0, and the program picks the queue of each request.

    ``config``, ``preset``, ``overrides``, ``seed`` and ``__`` keyword overrides are taken as
    :func:`ssdkit.run` takes them (preset name, TOML file path or TOML text); the device is
    preconditioned as the configuration says, or loaded from ``snapshot`` (a file written by
    :func:`ssdkit.precondition`). Errors in them are those of :func:`ssdkit.run`. Fast
    preconditioning builds the steady state of the configured flows' random writes, so describe
    the workload to come in the flows (``flow.0.read_fraction``, ``pattern``, ranges) for the
    device to start in the state it reaches under it; their other workload keys are unused.
    ``queues=N`` gives the device N queue pairs, the last ``[[flow]]`` repeated (named
    ``queue<i>``) up to N, for a host that opens queues as it goes (``ssdkit serve`` gives each
    NBD connection one); per-flow ``shares`` must then name all N.

    Time only moves forward: :meth:`submit` first processes every event before its time,
    :meth:`run_until` every event up to and including its time. A request stream submitted
    here completes at the same picoseconds as the same stream replayed as a trace by
    :func:`ssdkit.run`. A queue holds at most ``interface.io_queue_depth`` outstanding
    requests; later ones wait in the host, their latency counting from their submission.

    A bad request (a time before :meth:`now`, a negative, misaligned or out-of-range offset or
    size, an unknown op or queue) raises :class:`ssdkit.RequestError` naming the problem and
    changes nothing: the device stays usable. An argument of the wrong kind (a float time, an
    op that is not a str) raises TypeError. Use the device as a context manager or call
    :meth:`close` to free its memory at once; a closed device raises :class:`ssdkit.SsdkitError`.

    Calls release the GIL while the simulator runs; calls from several threads are serialised.
    """

    __slots__ = ("_dev",)

    def __init__(
        self,
        config: str | os.PathLike[str] | None = None,
        *,
        preset: str | None = None,
        overrides: Overrides = None,
        seed: int | None = None,
        snapshot: str | os.PathLike[str] | None = None,
        queues: int | None = None,
        **kw: Any,
    ) -> None:
        src = _source(config, preset)
        snap = None if snapshot is None else _path(snapshot, "snapshot")
        if queues is not None and (isinstance(queues, bool) or not isinstance(queues, int)):
            raise TypeError(f"queues must be an int, not {type(queues).__name__}")
        if queues is not None and not 1 <= queues <= 65535:
            raise ValueError(f"queues={queues}: give 1..=65535 queue pairs")
        self._dev = _native.Device(overrides=_override_list(overrides, kw, seed), snapshot=snap, queues=queues, **src)

    # -- one request at a time ---------------------------------------------------------------

    def submit(self, time_ns: IntArg, op: str, offset_bytes: IntArg, nbytes: IntArg, queue: IntArg = 0) -> int:
        """Queues a request at ``time_ns`` (not before :meth:`now`) on queue pair ``queue`` and
        returns its id (0, 1, ... in submission order). ``op`` is ``"read"``, ``"write"``,
        ``"trim"`` (deallocate) or ``"flush"`` (which takes no range: ``offset_bytes`` and
        ``nbytes`` 0). Events before ``time_ns`` are processed first."""
        return self._dev.submit(time_ns, op, offset_bytes, nbytes, queue)

    def run_until(self, time_ns: IntArg) -> None:
        """Processes every event up to and including ``time_ns`` (not before :meth:`now`, at most
        18446744073709551 ns: the clock counts 64-bit picoseconds, about 213 days); the clock is
        then ``time_ns``."""
        self._dev.run_until(time_ns)

    def run_to_idle(self) -> None:
        """Runs until every submitted request has completed (and what GC started meanwhile is
        done); the clock then stands at the next whole nanosecond at or after the last event.
        A device that cannot finish raises :class:`ssdkit.SimulationError` naming its state."""
        self._dev.run_to_idle()

    def drain(self) -> list[Completion]:
        """The requests completed since the last drain, in completion order (each returned
        once)."""
        return [Completion._make(t) for t in self._dev.drain()]

    def now(self) -> int:
        """Current simulated time in nanoseconds. Between calls the clock is always on a whole
        nanosecond, so this is exact, and a submission at ``now()`` is always accepted."""
        return self._dev.now_ns()

    def now_ps(self) -> int:
        """Current simulated time in picoseconds."""
        return self._dev.now_ps()

    def next_event(self) -> int | None:
        """Time in nanoseconds of the earliest pending event (a completion, the end of a flash
        operation, a controller timer), rounded up so that :meth:`run_until` of it processes
        the event; ``None`` when nothing is scheduled. A driver that follows the wall clock
        sleeps until then, or until its next submission if that comes first."""
        return self._dev.next_event_ns()

    def next_event_ps(self) -> int | None:
        """:meth:`next_event` in picoseconds, exact."""
        return self._dev.next_event_ps()

    def outstanding(self) -> int:
        """Requests submitted and not completed yet (including those waiting in the host for
        room in their submission queue)."""
        return self._dev.outstanding()

    @property
    def capacity_bytes(self) -> int:
        """Logical capacity: every request's range must lie inside it."""
        return self._dev.capacity_bytes

    @property
    def sector_bytes(self) -> int:
        """Bytes per logical sector (``interface.sector_bytes``, default 512): offsets and sizes
        are multiples of it."""
        return self._dev.sector_bytes

    @property
    def queues(self) -> int:
        """Number of queue pairs (one per configured ``[[flow]]``), numbered from 0."""
        return self._dev.queues

    def result(self) -> Result:
        """The :class:`ssdkit.Result` of everything so far, the document a batch run gives:
        per queue pair, the ``flows`` of the result; flushes are counted in ``stats.flush``."""
        return Result.from_json(self._dev.result_json())

    # -- batches -----------------------------------------------------------------------------

    def submit_many(
        self,
        time_ns: ArrayLike,
        ops: ArrayLike,
        offset_bytes: ArrayLike,
        nbytes: ArrayLike,
        queues: ArrayLike | None = None,
    ) -> np.ndarray:
        """Submits a batch of requests, in order, as :meth:`submit` would one by one (the
        result is the same), and returns their ids as an int64 array (consecutive).

        Each argument is a 1-D array (or list) of integers, or a scalar applied to every
        request; ``time_ns`` must be non-decreasing. ``ops`` holds op names (``"read"``,
        ``"write"``, ``"trim"``, ``"flush"``) or codes ``0`` read, ``1`` write, ``2`` trim, ``3``
        flush (not MQSim's trace codes). ``queues`` defaults to 0. Every request is checked
        before any is submitted: a bad one raises :class:`ssdkit.RequestError` naming its index,
        and nothing is submitted."""
        import numpy as np

        cols = [
            _int_array(time_ns, "time_ns"),
            _op_codes(ops),
            _int_array(offset_bytes, "offset_bytes"),
            _int_array(nbytes, "nbytes"),
            _int_array(0 if queues is None else queues, "queues"),
        ]
        try:
            cols = np.broadcast_arrays(*cols)
        except ValueError:
            shapes = ", ".join(
                f"{n} {c.shape}" for n, c in zip(("time_ns", "ops", "offset_bytes", "nbytes", "queues"), cols)
            )
            raise RequestError(
                f"submit_many: the arrays must have one length (or be scalars); got shapes {shapes}"
            ) from None
        if cols[0].ndim > 1:
            raise TypeError(f"submit_many takes 1-D arrays, not {cols[0].ndim}-D")
        cols = [np.ascontiguousarray(c.reshape(-1), dtype=np.int64) for c in cols]
        n = len(cols[0])
        if n == 0:
            return np.empty(0, dtype=np.int64)
        first = self._dev.submit_many(*(c.tobytes() for c in cols))
        return np.arange(first, first + n, dtype=np.int64)

    def drain_arrays(self) -> dict[str, np.ndarray]:
        """Like :meth:`drain`, as numpy arrays (one entry per completed request, in completion
        order): ``id``, ``queue``, ``offset_bytes``, ``bytes``, ``submit_ns``, ``complete_ns``,
        ``latency_ns`` (int64), ``op`` (object array of the names ``"read"``, ...), ``op_code`` (uint8, the codes of
        :meth:`submit_many`), and the exact times ``submit_ps``, ``complete_ps`` (uint64)."""
        return _arrays(self._dev.drain_columns())

    # -- life cycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the device. Later calls raise :class:`ssdkit.SsdkitError` (``capacity_bytes``
        and ``queues`` stay readable); closing again does nothing."""
        self._dev.close()

    @property
    def closed(self) -> bool:
        return self._dev.closed

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return f"<ssdkit.Device closed, {self.queues} queue(s), {self.capacity_bytes:,} bytes>"
        return (
            f"<ssdkit.Device {self.queues} queue(s), {self.capacity_bytes:,} bytes,"
            f" now {self.now():,} ns, {self.outstanding():,} outstanding>"
        )


def _int_array(x: Any, what: str) -> np.ndarray:
    """``x`` as an int64 array. Non-integers raise TypeError; values beyond int64 raise
    :class:`RequestError`; negative values are refused (with their index) by the core."""
    import numpy as np

    a = np.asarray(x)
    kind = a.dtype.kind
    if kind == "O":
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in a.reshape(-1)):
            raise TypeError(f"`{what}` must hold integers")
        try:
            return a.astype(np.int64)
        except OverflowError:
            raise RequestError(f"`{what}` holds a value outside the 64-bit integer range") from None
    if kind == "u":
        if a.size and int(a.max()) > _INT64_MAX:
            raise RequestError(f"`{what}` holds {int(a.max())}: too large (at most {_INT64_MAX})")
        return a.astype(np.int64)
    if kind == "i":
        return a.astype(np.int64)
    if a.size == 0 and kind == "f":
        return a.astype(np.int64)  # an empty list
    raise TypeError(f"`{what}` must hold integers, not {a.dtype}")


def _op_codes(ops: Any) -> np.ndarray:
    """Op names or codes as an int64 array of codes; an unknown name raises
    :class:`RequestError` naming it and its first index."""
    import numpy as np

    a = np.asarray(ops)
    kind = a.dtype.kind
    if kind == "O" and not all(isinstance(v, str) for v in a.reshape(-1)):
        kind = "i" if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in a.reshape(-1)) else "?"
    if kind in "iu" or (kind == "f" and a.size == 0):
        return _int_array(a, "ops")
    if kind not in "UO":
        what = a.dtype if kind != "?" else "a mix of other objects"
        raise TypeError(f"`ops` must hold op names ({', '.join(OPS)}) or integer codes 0-3, not {what}")
    names, inverse = np.unique(a, return_inverse=True)
    codes = []
    for name in names:
        code = _OP_CODES.get(str(name))
        if code is None:
            where = int(np.flatnonzero(a.reshape(-1) == name)[0])
            raise RequestError(
                f"ops[{where}]: unknown op {str(name)!r}: allowed values are {', '.join(map(repr, OPS))}"
                " (or codes 0 read, 1 write, 2 trim, 3 flush)"
            )
        codes.append(code)
    return np.asarray(codes, dtype=np.int64)[inverse].reshape(a.shape)
