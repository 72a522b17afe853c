"""`ssdkit serve` refuses bad input before it serves anything: one `ssdkit: error:` line naming
the culprit, exit status 2, no traceback, and nothing left behind (no socket, no backing file, no
result), a live server's socket and backing file untouched.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import nbd_raw as n
import pytest
from _serve import skip_unless_ssdkit_serve
from test_serve_clients import ssdkit_args
from test_serve_protocol import DEVICE, SIZE, connect, pattern, serve

BASE = [*ssdkit_args(DEVICE), "--clock", "fast"]


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def refused(cwd: Path, args: list[str], culprits: list[str]) -> str:
    """Run ``ssdkit serve ARGS`` in ``cwd``; it must exit 2 with one error line holding every
    culprit and leave ``cwd`` as it was."""
    skip_unless_ssdkit_serve("the bad-input checks")
    before = tree(cwd)
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "serve", *args],
        cwd=cwd, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert len(lines) == 1 and lines[0].startswith("ssdkit: error: "), p.stderr
    for c in culprits:
        assert c in lines[0], (c, lines[0])
    assert p.stdout == ""
    assert tree(cwd) == before
    return lines[0]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A running server with a backing file, for the cases that collide with it."""
    d = tmp_path_factory.mktemp("live")
    with serve(d, "--backing", str(d / "live.img")) as s:
        with connect(s) as c:
            assert c.write(0, pattern(1, 4096), flags=n.CMD_FLAG_FUA).error == 0
        yield s, d / "live.img"
        # After every refusal the live server still serves what it had.
        with connect(s) as c:
            assert c.read(0, 4096).data == pattern(1, 4096)


def test_socket_in_a_missing_folder(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "nope/s"], ["nope", "does not exist"])


def test_socket_in_use_by_a_live_server(tmp_path, live):
    s, _ = live
    refused(tmp_path, [*BASE, "--socket", str(s.socket)], [str(s.socket)])
    assert s.socket.exists()


def test_tcp_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused(tmp_path, [*BASE, "--listen", f"127.0.0.1:{port}"], [f"127.0.0.1:{port}"])


def test_non_loopback_without_allow_remote(tmp_path):
    refused(tmp_path, [*BASE, "--listen", "0.0.0.0:10809"], ["0.0.0.0", "--allow-remote"])


def test_backing_smaller_than_the_device(tmp_path):
    small = tmp_path / "small.img"
    small.write_bytes(b"x" * 4096)
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", "small.img"], ["small.img", "4096", str(SIZE)])
    assert small.read_bytes() == b"x" * 4096


def test_backing_is_a_directory(tmp_path):
    (tmp_path / "adir").mkdir()
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", "adir"], ["adir", "directory"])


def test_backing_on_a_path_that_cannot_be_written(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", "/proc/ssdkit.img"], ["/proc/ssdkit.img"])


def test_backing_locked_by_a_running_server(tmp_path, live):
    _, img = live
    before = img.stat()
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", str(img)], [str(img)])
    assert img.stat().st_mtime_ns == before.st_mtime_ns


def test_durable_without_backing(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "s", "--durable"], ["durable", "backing"])


def test_unknown_preset(tmp_path):
    refused(tmp_path, ["no-such-preset", "--socket", "s"], ["no-such-preset", "mqsim-paper"])


@pytest.mark.parametrize("exists", [False, True], ids=["new", "existing"])
def test_output_is_the_backing_file(tmp_path, exists):
    if exists:
        with open(tmp_path / "dev.img", "wb") as f:
            f.truncate(SIZE)
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", "dev.img", "-o", "dev.img"], ["dev.img", "backing"])


def test_latency_log_is_the_backing_file(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "s", "--backing", "d.csv", "--latency-log", "d.csv"], ["d.csv"])


def test_latency_log_is_the_output(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "s", "-o", "r.csv", "--latency-log", "r.csv"], ["r.csv", "latency log"])


def test_snapshot_of_another_device(tmp_path):
    skip_unless_ssdkit_serve("the bad-input checks")
    other = ssdkit_args({**DEVICE, "flash.blocks_per_plane": 256})
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "precondition", *other, "-o", str(tmp_path / "other.snap")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    refused(tmp_path, [*BASE, "--socket", "s", "--snapshot", "other.snap"], ["other.snap", "blocks_per_plane"])


def test_missing_snapshot(tmp_path):
    refused(tmp_path, [*BASE, "--socket", "s", "--snapshot", "gone.snap"], ["gone.snap"])


def test_listen_address_without_a_port(tmp_path):
    refused(tmp_path, [*BASE, "--listen", "127.0.0.1:notaport"], ["127.0.0.1:notaport", "HOST:PORT"])
