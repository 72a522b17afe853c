"""Where ssdkit writes: one check of every output path, run before any work, and one writer.

Every command that writes a file (``run -o`` and ``--latency-log``, ``precondition -o``,
``sweep -o``, ``plot -o``, ``report -o``, ``import mqsim -o``, ``fio2toml -o``) and the Python
functions behind them go through here, so they all refuse the same things with the same words
(:class:`SsdkitIoError`):

- an output that is the same file as one of the command's inputs or as another of its outputs,
  however it is named (``..``, symbolic or hard links: same device and inode);
- a directory, a socket, a block device (ssdkit never writes onto a disk), or a path under
  something that is not a directory;
- a folder that does not exist or cannot be written (probed by creating and removing a file,
  so a read-only file system and root on one are caught too).

A regular file (or a new one) is written to a temporary file beside it (beside a symbolic
link's target, which is what gets replaced) and renamed over it only once whole, so an error
or Ctrl-C leaves the old file as it was and no temporary behind. A pipe (FIFO) or a character
device (``/dev/stdout``, ``/dev/null``) is written in place, never replaced: that is how a
result is streamed to another program. Outputs that cannot go to a pipe say so
(``stream=False``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence

from ._native import SsdkitIoError

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import IO, Union

    PathArg = Union[str, "os.PathLike[str]"]
    #: ``(what, path)``: what the file is to the command ("result JSON", "sweep file", ...)
    #: and its path; messages name both.
    Named = tuple[str, PathArg]
    Inputs = Union[Iterable[Named], Callable[[], Iterable[Named]]]

NEW, FILE, STREAM = "new", "file", "stream"


def kind(path: PathArg, what: str = "output") -> str:
    """``"new"`` (nothing there yet), ``"file"`` (a regular file, to be replaced) or ``"stream"``
    (a pipe or character device, written in place); anything else raises :class:`SsdkitIoError`."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return NEW
    except NotADirectoryError:
        raise _error(what, p, "a folder on its path is not a directory") from None
    except OSError as e:
        raise _error(what, p, e.strerror or str(e)) from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return STREAM
    if stat.S_ISDIR(mode):
        raise _error(what, p, "it is a directory")
    if stat.S_ISSOCK(mode):
        raise _error(what, p, "it is a socket (give a file, a FIFO or a character device such as /dev/stdout)")
    if stat.S_ISBLK(mode):
        raise _error(what, p, "it is a block device; ssdkit does not write onto disks")
    raise _error(what, p, "it is neither a file, a FIFO nor a character device")


def check(outputs: Sequence[Named], inputs: Inputs = (), *, stream: bool = True, why: str = "") -> None:
    """Refuses, before any work, each ``(what, path)`` of ``outputs`` that cannot be written
    (see the module's notes), that is the same file as one of ``inputs`` (``(what, path)``
    pairs, or a callable giving them: it is called only when an output already exists, since
    a new file cannot be an input) or as another output. ``stream=False`` refuses pipes and
    devices too, with ``why`` as the reason."""
    outs = [(what, os.fspath(path)) for what, path in outputs]
    kinds = []
    for what, path in outs:
        k = kind(path, what)
        if k == STREAM:
            if not stream:
                raise _error(what, path, f"it is a pipe or device, and this output must be a regular file{why}")
            if not os.access(path, os.W_OK):
                raise _error(what, path, "permission denied")
        else:
            _probe_folder(what, path)
        kinds.append(k)
    # Character devices are left out: /dev/stdout and /dev/stdin may both be the terminal,
    # and two outputs to /dev/null harm nothing.
    idents = [None if k == STREAM and _is_chr(p) else _identity(p, k) for (_, p), k in zip(outs, kinds)]
    for i, (what, path) in enumerate(outs):
        for j in range(i):
            if idents[i] is not None and idents[i] == idents[j]:
                other_what, other = outs[j]
                raise _same(what, path, other_what, other)
    if all(k == NEW for k in kinds):
        return
    for what, path in _inputs(inputs):
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue  # a missing or unreadable input is reported by whoever reads it
        if stat.S_ISCHR(st.st_mode):
            continue
        ident = ("inode", st.st_dev, st.st_ino)
        for (out_what, out), oid in zip(outs, idents):
            if oid == ident:
                raise _same(out_what, out, what, os.fspath(path))


def _inputs(inputs: Inputs) -> list[tuple[str, str]]:
    got = inputs() if callable(inputs) else inputs
    return [(what, os.fspath(path)) for what, path in got if path is not None]


def _identity(path: str, k: str) -> tuple:
    if k == NEW:
        # Two new outputs are one file when their resolved paths are (through symlinks too).
        return ("path", os.path.normcase(os.path.realpath(path)))
    st = os.stat(path)
    return ("inode", st.st_dev, st.st_ino)


def _is_chr(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def _same(what: str, path: str, other_what: str, other: str) -> SsdkitIoError:
    return SsdkitIoError(
        f"refusing to write {what} `{path}`: it is the same file as the {other_what} `{other}`; "
        "choose another output path"
    )


def _error(what: str, path: str, reason: str) -> SsdkitIoError:
    return SsdkitIoError(f"cannot write {what} `{path}`: {reason}")


def _probe_folder(what: str, path: str) -> None:
    final = os.path.realpath(path)
    folder = os.path.dirname(final)
    if not os.path.isdir(folder):
        if os.path.exists(folder):
            raise _error(what, path, f"`{folder}` is not a directory")
        raise _error(what, path, f"directory `{folder}` does not exist")
    # os.access says yes to root on a read-only folder and knows nothing of some file
    # systems: creating a file is the one test that holds.
    probe = _temp_name(final)
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as e:
        raise _error(what, path, f"directory `{folder}` is not writable ({e.strerror or e})") from None
    try:
        os.unlink(probe)
    except OSError:
        pass


def _temp_name(final: str) -> str:
    # os.urandom rather than secrets: the same bytes without importing hashlib at every start.
    return os.path.join(os.path.dirname(final), f".{os.path.basename(final)}.{os.urandom(4).hex()}.tmp")


class Output:
    """One output being written: :attr:`target` is where the bytes go (a temporary file beside
    a regular file, the path itself for a pipe or device); :meth:`commit` moves a temporary
    over the path, :meth:`abort` removes it. As a context manager it commits on success and
    aborts on any exception (KeyboardInterrupt too); an OSError while writing or committing
    becomes :class:`SsdkitIoError` naming the output."""

    def __init__(self, path: PathArg, what: str = "output"):
        self.path = os.fspath(path)
        self.what = what
        self.stream = kind(self.path, what) == STREAM
        self.final = self.path if self.stream else os.path.realpath(self.path)
        self.target = self.final
        self._tmp: str | None = None
        if not self.stream:
            self._tmp = _temp_name(self.final)
            # Created exclusively (never someone else's file); 0o666 lets the umask decide the
            # mode, as for a plain open().
            try:
                os.close(os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except OSError as e:
                raise self.error(e) from None
            self.target = self._tmp

    def open(self, mode: str = "wb") -> IO:
        """The target opened for writing (``"wb"`` or ``"w"``, UTF-8)."""
        try:
            if "b" in mode:
                return open(self.target, mode)
            return open(self.target, mode, encoding="utf-8")
        except OSError as e:
            raise self.error(e) from None

    def commit(self) -> None:
        if self._tmp is None:
            return
        try:
            fd = os.open(self._tmp, os.O_RDONLY)
            try:
                os.fsync(fd)  # the data is on disk before the name points at it
            finally:
                os.close(fd)
            os.replace(self._tmp, self.final)
        except OSError as e:
            self.abort()
            raise self.error(e) from None
        self._tmp = None

    def abort(self) -> None:
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None

    def error(self, e: OSError) -> SsdkitIoError:
        return _error(self.what, self.path, e.strerror or str(e))

    def __enter__(self) -> Output:  # noqa: PYI034 - no typing_extensions dependency
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
            return
        self.abort()
        if isinstance(exc, OSError) and not isinstance(exc, SsdkitIoError):
            raise self.error(exc) from None


def writing(path: PathArg, what: str = "output", mode: str = "wb") -> AbstractContextManager[IO]:
    """``with writing(path) as f:`` a file to write ``path``'s new content to, put in place
    when the block ends without an error (see :class:`Output`)."""
    # Imported here: `ssdkit run` writes its result through `write`, and contextlib is 0.3 ms
    # of every command's start.
    import contextlib

    return contextlib.contextmanager(_writing)(path, what, mode)


def _writing(path: PathArg, what: str, mode: str) -> Iterator[IO]:
    with Output(path, what) as out, out.open(mode) as f:
        try:
            yield f
        except OSError as e:
            raise out.error(e) from None


def write_all(outputs: Sequence[tuple[str, PathArg, str | bytes]]) -> None:
    """Writes every ``(what, path, data)``, all or nothing as far as the file system allows:
    the temporaries of regular files are all written before any is renamed, so one that fails
    leaves every old file intact. Pipes and devices are written in place, after the
    temporaries and before the renames."""
    opened: list[Output] = []
    try:
        for what, path, _ in outputs:
            opened.append(Output(path, what))
        order = [o for o in opened if not o.stream] + [o for o in opened if o.stream]
        data = {id(o): d for o, (_, _, d) in zip(opened, outputs)}
        for o in order:
            d = data[id(o)]
            try:
                with o.open("wb") as f:
                    f.write(d.encode("utf-8") if isinstance(d, str) else d)
            except OSError as e:
                raise o.error(e) from None
        for o in opened:
            o.commit()
    except BaseException:
        for o in opened:
            o.abort()
        raise


def write(path: PathArg, data: str | bytes, what: str = "output") -> None:
    """Writes one document to ``path`` (see :func:`write_all`)."""
    write_all([(what, path, data)])
