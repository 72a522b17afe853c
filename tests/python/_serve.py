"""An NBD server for a test: `ssdkit serve` or the reference, `nbdkit memory`, on a Unix socket,
started, waited for, and stopped (SIGTERM) with its exit status checked.

    with served("mqsim-paper", "--set", "flash.blocks_per_plane=128", tmp_path=tmp_path) as s:
        subprocess.run(["nbdinfo", s.uri], check=True)
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _debian import skip_unless

READY = "ssdkit serve: serving"
# Setting up a big device (a 4 TiB map) and loading the extension take seconds on a busy CI core.
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


def nbdkit_memory(size: str) -> tuple[str, ...]:
    """nbdkit's memory plugin with the block sizes `ssdkit serve` advertises (512-byte minimum,
    4 KiB preferred, 32 MiB maximum payload) and, like it, EINVAL for misaligned requests; by
    itself nbdkit memory advertises none and takes any byte offset."""
    return (
        "--filter=blocksize-policy",
        "memory",
        size,
        "blocksize-minimum=512",
        "blocksize-preferred=4096",
        "blocksize-maximum=32M",
        "blocksize-error-policy=error",
    )


@dataclass
class Served:
    uri: str
    socket: Path
    proc: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@functools.cache
def _serve_help() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ssdkit", "serve", "--help"], capture_output=True, text=True, check=False, timeout=120
    )


def ssdkit_serve_available() -> bool:
    """Whether this ssdkit has `ssdkit serve`: ``serve --help`` exits 0. A `serve` that exists
    but fails its --help is a failure, not a reason to skip."""
    p = _serve_help()
    if p.returncode == 0:
        return True
    assert "invalid choice: 'serve'" in p.stderr, (
        f"`ssdkit serve --help` exited with status {p.returncode}:\n{p.stderr}"
    )
    return False


def skip_unless_ssdkit_serve(what: str) -> None:
    if not ssdkit_serve_available():
        pytest.skip(f"this ssdkit has no `ssdkit serve` (`python -m ssdkit serve --help` failed): {what} did not run")


def uri_of(sock: Path) -> str:
    return f"nbd+unix:///?socket={sock}"


def peak_rss_bytes(pid: int) -> int:
    """The peak resident set size of a running process (VmHWM of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            value, unit = line.split()[1:3]
            assert unit == "kB", line
            return int(value) * 1024
    raise AssertionError(f"/proc/{pid}/status has no VmHWM line")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a running process so far (/proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
        return True


def _wait_ready(proc: subprocess.Popen[bytes], ready, stderr_path: Path, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with status {proc.returncode} before serving:\n{stderr_path.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"{what} did not start serving within {timeout:.0f} s:\n{stderr_path.read_text()}")
        time.sleep(0.05)


def _stop(s: Served, what: str, check: bool) -> None:
    if s.proc.poll() is None:
        s.proc.send_signal(signal.SIGTERM)
    try:
        s.proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        s.proc.kill()
        s.proc.wait()
        if check:
            pytest.fail(f"{what} did not stop within {STOP_TIMEOUT_S:.0f} s of SIGTERM:\n{s.stderr()}")
    if check and s.proc.returncode != 0:
        pytest.fail(f"{what} exited with status {s.proc.returncode} after SIGTERM:\n{s.stderr()}")


@contextlib.contextmanager
def served(
    *args: str,
    tmp_path: Path,
    server: str = "ssdkit",
    size: str = "64M",
    name: str = "s",
    ready_timeout: float = READY_TIMEOUT_S,
) -> Iterator[Served]:
    """Serve on the Unix socket ``tmp_path/name``. With ``server="ssdkit"``: ``python -m ssdkit
    serve ARGS --socket ...``, ready when it prints its ``ssdkit serve: serving`` line, and its
    exit status after SIGTERM must be 0. With ``server="nbdkit"``: ``nbdkit -f -U ... ARGS``,
    ARGS defaulting to :func:`nbdkit_memory`, ready when the socket accepts."""
    sock = tmp_path / name
    stderr_path = tmp_path / f"{name}.stderr"
    if server == "ssdkit":
        skip_unless_ssdkit_serve("this check against ssdkit serve")
        cmd = [sys.executable, "-m", "ssdkit", "serve", *args, "--socket", str(sock)]
        what = "ssdkit serve"

        def ready() -> bool:
            return any(line.startswith(READY) for line in stderr_path.read_text(errors="replace").splitlines())

    elif server == "nbdkit":
        nbdkit = skip_unless("nbdkit", "nbdkit", "this check against the reference server (nbdkit memory)")
        cmd = [nbdkit, "-f", "-U", str(sock), *(args or nbdkit_memory(size))]
        what = "nbdkit"

        def ready() -> bool:
            return _accepts(sock)

    else:
        raise ValueError(f"server must be 'ssdkit' or 'nbdkit', not {server!r}")
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    s = Served(uri_of(sock), sock, proc, stderr_path)
    try:
        _wait_ready(proc, ready, stderr_path, ready_timeout, what)
        yield s
    except BaseException:
        _stop(s, what, check=False)
        raise
    _stop(s, what, check=server == "ssdkit")
