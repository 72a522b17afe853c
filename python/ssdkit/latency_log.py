"""The per-request latency log written as the run goes (``ssdkit run --latency-log FILE``,
``ssdkit.run(..., latency_log=FILE)``): the core hands completions over in batches of at most
65,536 and each batch is appended to the file, so memory stays bounded however long the run.

The format follows the suffix: ``.parquet`` (or ``.pq``) for Parquet, ``.csv`` for CSV, both
through pyarrow. The file appears only when the run succeeds: batches go to a temporary file
beside it, renamed over the path at the end and removed on any error or interrupt."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from . import outputs
from ._columns import NATIVE_COLUMNS, _arrays, _breakdown_ns
from ._native import ConfigError, SsdkitIoError

WHAT = "latency log"

#: Columns of the log, in order; with ``run.latency_breakdown`` one ``<step>_ns`` column
#: per response-time step follows (``ssdkit.device.BREAKDOWN_STEPS``), summing to
#: ``latency_ns``.
COLUMNS = ("id", "flow", "op", "offset_bytes", "bytes", "submit_ns", "complete_ns", "latency_ns")

_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


def log_format(path: str) -> str:
    """``"parquet"`` or ``"csv"`` from the suffix of ``path`` (CSV for a pipe or device with
    none, such as ``/dev/stdout``); anything else raises :class:`ConfigError` naming the
    allowed suffixes."""
    suffix = os.path.splitext(path)[1].lower()
    if not suffix and outputs.kind(path, WHAT) == outputs.STREAM:
        return "csv"
    try:
        return _FORMATS[suffix]
    except KeyError:
        raise ConfigError(
            f"latency log `{path}`: unknown suffix `{suffix}`; allowed: .parquet or .pq (Parquet), .csv (CSV)"
        ) from None


def check_path(path: str, inputs: outputs.Inputs = ()) -> None:
    """Refuses, before the run, a path whose format is unknown (:class:`ConfigError`) or that
    :func:`ssdkit.outputs.check` refuses (:class:`SsdkitIoError`): one of ``inputs``, a
    directory, a socket, a missing or unwritable folder. A FIFO or character device is
    written in place, in either format (CSV without a suffix)."""
    log_format(path)
    outputs.check([(WHAT, path)], inputs)


class LatencyLogWriter:
    """Appends batches of the native log columns to a Parquet or CSV file; :meth:`close`
    publishes it, :meth:`abort` removes what was written. Use as a context manager: an
    exception (KeyboardInterrupt included) aborts."""

    def __init__(self, path: str):
        log_format(path)  # the path itself is checked by the caller, with the run's inputs (check_path)
        try:
            import pyarrow  # noqa: F401 - checked here so the error comes before the run
        except ImportError:
            raise SsdkitIoError(
                f"latency log `{path}`: writing Parquet or CSV needs pyarrow (pip install pyarrow)"
            ) from None
        self.path = path
        self.format = log_format(path)
        # Opened at the first batch, once the run can be interrupted cleanly (see ssdkit.run).
        self._out: outputs.Output | None = None
        self._file: Any = None
        self._writer: Any = None
        self.rows = 0

    def _table(self, cols: dict[str, bytearray]):
        import pyarrow as pa

        a = _arrays(cols)
        return pa.table(
            {
                "id": a["id"],
                "flow": a["queue"],
                "op": pa.array(a["op"].astype(str)),
                "offset_bytes": a["offset_bytes"],
                "bytes": a["bytes"],
                "submit_ns": a["submit_ns"],
                "complete_ns": a["complete_ns"],
                "latency_ns": a["latency_ns"],
                **_breakdown_ns(a),
            }
        )

    def write(self, cols: dict[str, bytearray]) -> None:
        """Appends one batch (the columns the core hands over)."""
        table = self._table(cols)
        try:
            if self._writer is None:
                self._out = outputs.Output(self.path, WHAT)
                # A Python file, not a path: pyarrow's own files seek to learn their position,
                # which a pipe cannot do.
                self._file = self._out.open("wb")
                if self.format == "parquet":
                    import pyarrow.parquet as pq

                    self._writer = pq.ParquetWriter(self._file, table.schema)
                else:
                    import pyarrow.csv as pcsv

                    self._writer = pcsv.CSVWriter(self._file, table.schema)
            self._writer.write_table(table)
        except OSError as e:
            self.abort()
            raise SsdkitIoError(f"cannot write {WHAT} `{self.path}`: {e.strerror or e}") from None
        self.rows += table.num_rows

    def close(self) -> None:
        """Finishes the file and moves it to its path (an empty log still gets its header)."""
        try:
            if self._writer is None:
                self.write({name: bytearray() for name in NATIVE_COLUMNS})
            self._writer.close()
            self._writer = None
            self._file.close()
        except OSError as e:
            self.abort()
            raise SsdkitIoError(f"cannot write {WHAT} `{self.path}`: {e.strerror or e}") from None
        out, self._out = self._out, None
        out.commit()

    def abort(self) -> None:
        for closing in (self._writer, self._file):
            if closing is not None:
                with contextlib.suppress(Exception):
                    closing.close()
        self._writer = self._file = None
        if self._out is not None:
            self._out.abort()
            self._out = None

    def __enter__(self) -> LatencyLogWriter:  # noqa: PYI034 - no typing_extensions dependency
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
