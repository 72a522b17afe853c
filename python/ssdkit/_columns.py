"""The columns of the request log as the core hands them over (:meth:`ssdkit.Device.drain_arrays`,
a run's request log, the latency log): their names, element types and numpy views."""

from __future__ import annotations

from . import _native

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that need it: `import ssdkit` stays fast for a command
# line run that never touches an array.

#: Op names by code: the small integers :meth:`Device.submit_many` also takes.
OPS = ("read", "write", "trim", "flush")

# The columns the core hands over (Device.drain_arrays, _native.run_with_log, a run's log
# sink), by element type.
_INT64_COLUMNS = ("id", "queue", "offset_bytes", "bytes", "submit_ns", "complete_ns", "latency_ns")
_UINT64_COLUMNS = ("submit_ps", "complete_ps")
#: Every native column: the int64 and uint64 ones, and ``op`` (uint8 codes).
NATIVE_COLUMNS = (*_INT64_COLUMNS, *_UINT64_COLUMNS, "op")
#: The response-time steps of the latency breakdown (``run.latency_breakdown``), in path
#: order, as the core names them; it adds ``<step>_ps`` (uint64) columns when it is on.
BREAKDOWN_STEPS: tuple[str, ...] = tuple(_native.BREAKDOWN_STEPS)


def _arrays(cols: dict[str, bytearray]) -> dict[str, np.ndarray]:
    """The native columns (native-endian buffers) as numpy arrays, without copying."""
    import numpy as np

    out = {}
    for name in _INT64_COLUMNS:
        out[name] = np.frombuffer(cols[name], dtype=np.int64)
    codes = np.frombuffer(cols["op"], dtype=np.uint8)
    # object dtype: a column of references to the four op names, 8 bytes per request.
    out["op"] = np.array(OPS, dtype=object)[codes]
    out["op_code"] = codes
    for name in _UINT64_COLUMNS:
        out[name] = np.frombuffer(cols[name], dtype=np.uint64)
    for step in BREAKDOWN_STEPS:
        if f"{step}_ps" in cols:
            out[f"{step}_ps"] = np.frombuffer(cols[f"{step}_ps"], dtype=np.uint64)
    return out


def _breakdown_ns(a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The breakdown's step columns, if the log has them, as ``<step>_ns`` (float64)."""
    return {f"{s}_ns": a[f"{s}_ps"] / 1000.0 for s in BREAKDOWN_STEPS if f"{s}_ps" in a}
