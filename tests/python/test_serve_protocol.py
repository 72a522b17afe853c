"""`ssdkit serve` against the NBD spec (NetworkBlockDevice/nbd, doc/proto.md), byte by byte:
the fixed newstyle handshake and its options, the transmission commands and their error
values, DISC, read-only and snapshot exports, several connections as several flows, and the
queue-pair limit. A pure-Python client (nbd_raw) sends exactly what each test says; libnbd with
its strict mode off sends the malformed requests a real client library can send.

The device is the mqsim-paper timing on TINY's geometry (59.5 MiB), served with `--clock fast`:
these tests are about bytes and replies, not timing, and a server starts in under a second.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbd_raw as n
import pytest
from _debian import skip_unless
from _serve import READY, served
from conftest import TINY
from test_serve_clients import capacity, ssdkit_args

DEVICE = dict(TINY)
KiB = 1 << 10
MiB = 1 << 20
SIZE = capacity(DEVICE)
MAX_PAYLOAD = 32 * MiB


def serve(tmp_path: Path, *extra: str, name: str = "s", device: dict = DEVICE):
    return served(*ssdkit_args(device), "--clock", "fast", *extra, tmp_path=tmp_path, name=name)


def connect(s, go: bool = True) -> n.Client:
    c = n.Client.connect(str(s.socket))
    c.handshake()
    if go:
        c.go("")
    return c


def pattern(seed: int, length: int) -> bytes:
    return random.Random(seed).randbytes(length)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("protocol")) as s:
        yield s


# ---------------------------------------------------------------------------------------------
# Handshake


def test_greeting_bytes_are_fixed_newstyle(server):
    with n.Client.connect(str(server.socket)) as c:
        greeting = c.recv_exact(18)
        # NBDMAGIC, IHAVEOPT, then FIXED_NEWSTYLE | NO_ZEROES and nothing more.
        assert greeting == b"NBDMAGIC" + b"IHAVEOPT" + struct.pack(">H", 3)


def test_list_names_the_export(server):
    with connect(server, go=False) as c:
        assert c.list_exports() == ["ssdkit"]
        # The session goes on: GO after LIST works.
        assert c.go("").size == SIZE


@pytest.mark.parametrize("option", [n.OPT_INFO, n.OPT_GO])
def test_info_and_go_advertise_size_and_block_sizes(server, option):
    with connect(server, go=False) as c:
        e = c._info(option, "", (n.INFO_BLOCK_SIZE,))
        assert e.size == SIZE
        assert (e.min_block, e.preferred_block, e.max_payload) == (512, 4096, MAX_PAYLOAD)
        assert e.flags & n.TFLAG_HAS_FLAGS and e.flags & n.TFLAG_SEND_FLUSH and e.flags & n.TFLAG_SEND_FUA
        assert e.flags & n.TFLAG_SEND_TRIM and e.flags & n.TFLAG_SEND_WRITE_ZEROES
        assert not e.flags & n.TFLAG_READ_ONLY
        # NAME and DESCRIPTION only when asked.
        assert e.name is None and e.description is None
        assert [r.type for r in e.replies][-1] == n.REP_ACK
        if option == n.OPT_INFO:
            # INFO leaves the session in negotiation: ask again, with the name and description.
            e2 = c.info("ssdkit", (n.INFO_NAME, n.INFO_DESCRIPTION, n.INFO_BLOCK_SIZE))
            assert e2.name == "ssdkit" and "mqsim-paper" in e2.description
            assert e2.size == SIZE
        else:
            # GO moved to transmission: a write and a read work.
            assert c.write(0, pattern(1, 4096)).error == 0
            assert c.read(0, 4096).data == pattern(1, 4096)


@pytest.mark.parametrize("no_zeroes", [True, False])
def test_export_name(server, no_zeroes):
    with n.Client.connect(str(server.socket)) as c:
        c.handshake(n.CLIENT_FIXED_NEWSTYLE | (n.CLIENT_NO_ZEROES if no_zeroes else 0))
        size, flags, pad = c.export_name("ssdkit")
        assert size == SIZE and flags & n.TFLAG_HAS_FLAGS
        assert pad == (b"" if no_zeroes else bytes(124))
        assert c.read(8192, 4096).error == 0


def test_unknown_options_are_refused_and_the_session_goes_on(server):
    with connect(server, go=False) as c:
        for option, expected in (
            (99, n.REP_ERR_UNSUP),
            (n.OPT_STARTTLS, n.REP_ERR_POLICY),
            (n.OPT_STRUCTURED_REPLY, n.REP_ERR_UNSUP),
        ):
            [r] = c.option(option)
            assert (r.option, r.type) == (option, expected), r
        [r] = c.option(n.OPT_GO, n.info_request("nope"))
        assert r.type == n.REP_ERR_UNKNOWN and "nope" in r.message
        assert c.list_exports() == ["ssdkit"]
        assert c.go("ssdkit").size == SIZE


def test_abort_is_acknowledged_then_closed(server):
    with connect(server, go=False) as c:
        r = c.abort()
        assert (r.option, r.type, r.data) == (n.OPT_ABORT, n.REP_ACK, b"")
        assert c.at_eof()


# ---------------------------------------------------------------------------------------------
# Transmission


def test_round_trips_pipelined(server):
    with connect(server) as c:
        blocks = {i: pattern(100 + i, 4096 * (1 + i % 3)) for i in range(16)}
        offs = {i: 1 * MiB + i * 16 * KiB for i in blocks}
        cookies = {c.send(n.CMD_WRITE, offs[i], data=d): i for i, d in blocks.items()}
        replies = [c.reply() for _ in cookies]
        assert sorted(r.cookie for r in replies) == sorted(cookies) and all(r.error == 0 for r in replies)
        reads = {c.send(n.CMD_READ, offs[i], len(blocks[i])): i for i in blocks}
        for _ in reads:
            r = c.reply()
            assert r.error == 0 and r.data == blocks[reads[r.cookie]]


def test_never_written_reads_zeros(server):
    with connect(server) as c:
        r = c.read(SIZE - 64 * KiB, 64 * KiB)
        assert r.error == 0 and r.data == bytes(64 * KiB)


@pytest.mark.parametrize(
    "how",
    ["trim", "write_zeroes", "write_zeroes_no_hole", "write_zeroes_fua"],
)
def test_trim_and_write_zeroes_read_back_zeros(server, how):
    off = {"trim": 4, "write_zeroes": 5, "write_zeroes_no_hole": 6, "write_zeroes_fua": 7}[how] * MiB
    with connect(server) as c:
        data = pattern(7, 256 * KiB)
        assert c.write(off, data).error == 0
        # A part in the middle, unaligned to the 4 KiB page but aligned to 512 bytes.
        lo, ln = 8 * KiB + 512, 64 * KiB
        if how == "trim":
            assert c.trim(off + lo, ln).error == 0
        else:
            flags = {"write_zeroes": 0, "write_zeroes_no_hole": n.CMD_FLAG_NO_HOLE, "write_zeroes_fua": n.CMD_FLAG_FUA}
            assert c.write_zeroes(off + lo, ln, flags=flags[how]).error == 0
        r = c.read(off, len(data))
        assert r.error == 0
        assert r.data == data[:lo] + bytes(ln) + data[lo + ln :]


def test_flush_and_fua(server):
    with connect(server) as c:
        assert c.write(9 * MiB, pattern(9, 8192), flags=n.CMD_FLAG_FUA).error == 0
        assert c.flush().error == 0
        assert c.read(9 * MiB, 8192, flags=n.CMD_FLAG_FUA).error == 0


def test_disc_answers_outstanding_requests_then_closes(server):
    with connect(server) as c:
        data = pattern(10, 64 * KiB)
        cookies = [c.send(n.CMD_WRITE, 10 * MiB + i * 64 * KiB, data=data) for i in range(8)]
        cookies.append(c.send(n.CMD_READ, 10 * MiB, 64 * KiB))
        c.disc()
        replies = [c.reply() for _ in cookies]
        assert sorted(r.cookie for r in replies) == sorted(cookies)
        assert all(r.error == 0 for r in replies)
        assert c.at_eof()


# ---------------------------------------------------------------------------------------------
# Errors


def test_error_values(server):
    with connect(server) as c:
        cases = [
            ((n.CMD_READ, 100, 512), n.EINVAL),  # misaligned offset
            ((n.CMD_READ, 0, 100), n.EINVAL),  # misaligned length
            ((n.CMD_WRITE, 512, 100), n.EINVAL),
            ((n.CMD_READ, SIZE - 512, 1024), n.EINVAL),  # past the end
            ((n.CMD_TRIM, SIZE - 512, 1024), n.EINVAL),
            ((n.CMD_WRITE, SIZE - 512, 1024), n.ENOSPC),
            ((n.CMD_WRITE_ZEROES, SIZE, 512), n.ENOSPC),
            ((42, 0, 512), n.EINVAL),  # unknown command
        ]
        for (cmd, off, ln), errno in cases:
            data = bytes(ln) if cmd == n.CMD_WRITE else b""
            r = c.call(cmd, off, ln, data=data)
            assert r.error == errno, (cmd, off, ln, r)
        # An unknown flag.
        assert c.call(n.CMD_READ, 0, 512, flags=1 << 10).error == n.EINVAL
        # NO_HOLE means nothing on TRIM: the spec makes it an error.
        assert c.call(n.CMD_TRIM, 0, 512, flags=n.CMD_FLAG_NO_HOLE).error == n.EINVAL
        # Still usable.
        assert c.read(0, 4096).error == 0


def test_oversize_read_and_write(server):
    with connect(server) as c:
        assert c.read(0, MAX_PAYLOAD + 4096).error == n.EINVAL
        # An oversize write's payload is read and thrown away; then the connection still works.
        big = pattern(11, MAX_PAYLOAD + 4096)
        r = c.call(n.CMD_WRITE, 12 * MiB, data=big)
        assert r.error == n.EINVAL
        assert c.read(12 * MiB, 4096).data == bytes(4096)
        assert c.write(12 * MiB, big[:4096]).error == 0
        assert c.read(12 * MiB, 4096).data == big[:4096]


def test_bad_request_magic_closes_only_that_connection(server):
    with connect(server) as other, connect(server) as bad:
        assert other.write(13 * MiB, pattern(13, 4096)).error == 0
        bad.send(n.CMD_READ, 0, 4096, magic=0x12345678)
        assert bad.at_eof()
        assert other.read(13 * MiB, 4096).data == pattern(13, 4096)
    with connect(server) as again:
        assert again.read(13 * MiB, 4096).data == pattern(13, 4096)


LIBNBD_SCRIPT = r"""
import errno, sys, nbd
h = nbd.NBD()
h.set_strict_mode(0)
h.connect_uri(sys.argv[1])
size = h.get_size()
out = {}
for what, f in (
    ("misaligned_pread", lambda: h.pread(512, 100)),
    ("misaligned_len_pread", lambda: h.pread(100, 0)),
    ("past_end_pread", lambda: h.pread(1024, size - 512)),
    ("past_end_pwrite", lambda: h.pwrite(bytes(1024), size - 512)),
    ("misaligned_pwrite", lambda: h.pwrite(bytes(512), 3)),
):
    try:
        f()
        out[what] = 0
    except nbd.Error as e:
        # libnbd gives the errno's name (EINVAL), as the server's reply carried its number.
        out[what] = e.errno if isinstance(e.errno, str) else errno.errorcode[e.errno]
out["after"] = h.pread(4096, size - 4096) == bytes(4096)
h.shutdown()
print(__import__("json").dumps(out))
"""


def test_libnbd_without_strict_mode(server):
    skip_unless("nbdinfo", "libnbd-bin", "the libnbd checks")
    py = "/usr/bin/python3"
    probe = subprocess.run([py, "-c", "import nbd"], capture_output=True, check=False) if os.path.exists(py) else None
    if probe is None or probe.returncode != 0:
        pytest.skip("Debian's python3-libnbd (import nbd in /usr/bin/python3) is not installed: libnbd checks skipped")
    p = subprocess.run([py, "-c", LIBNBD_SCRIPT, server.uri], capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {
        "misaligned_pread": "EINVAL",
        "misaligned_len_pread": "EINVAL",
        "past_end_pread": "EINVAL",
        "past_end_pwrite": "ENOSPC",
        "misaligned_pwrite": "EINVAL",
        "after": True,
    }


# ---------------------------------------------------------------------------------------------
# Export variants


def test_read_only(tmp_path):
    with serve(tmp_path, "--read-only") as s, connect(s, go=False) as c:
        e = c.go("")
        assert e.flags & n.TFLAG_READ_ONLY
        assert c.write(0, bytes(4096)).error == n.EPERM
        assert c.trim(0, 4096).error == n.EPERM
        assert c.write_zeroes(0, 4096).error == n.EPERM
        r = c.read(0, 4096)
        assert r.error == 0 and r.data == bytes(4096)


def read_mean_us(result: dict) -> float:
    reads = [f["stats"]["read"] for f in result["flows"] if f["stats"]["read"]["count"]]
    total = sum(r["count"] for r in reads)
    return sum(r["latency_us"]["mean"] * r["count"] for r in reads) / total


def test_snapshot_from_precondition(tmp_path):
    """Both servers are told to start empty (`precondition.mode=empty`); the one given the
    snapshot of a full device (the preset's own preconditioning) starts from it instead, so its
    reads find their pages mapped and go to the flash, where the empty one's finish at once."""
    snap = tmp_path / "dev.snap"
    p = subprocess.run(
        [sys.executable, "-m", "ssdkit", "precondition", *ssdkit_args(DEVICE), "-o", str(snap)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    means = {}
    for label, extra in (("fresh", ()), ("snap", ("--snapshot", str(snap)))):
        out = tmp_path / f"{label}.json"
        args = (*extra, "--set", "precondition.mode=empty", "-o", str(out))
        with serve(tmp_path, *args, name=label) as s, connect(s) as c:
            for i in range(32):
                r = c.read(i * 1 * MiB, 4096)
                # The snapshot holds the simulator's state, not data: still zeros.
                assert r.error == 0 and r.data == bytes(4096)
        means[label] = read_mean_us(json.loads(out.read_text()))
    assert means["snap"] > 2 * means["fresh"], means


def test_four_connections_are_four_flows(tmp_path):
    out = tmp_path / "o.json"
    with serve(tmp_path, "--queues", "4", "-o", str(out)) as s:
        clients = [connect(s) for _ in range(4)]
        for i, c in enumerate(clients):
            for j in range(i + 1):
                assert c.write(i * MiB + j * 4096, pattern(i * 10 + j, 4096)).error == 0
        for c in clients:
            c.close()
    result = json.loads(out.read_text())
    writes = [f["stats"]["write"]["count"] for f in result["flows"]]
    assert sorted(writes) == [1, 2, 3, 4], writes
    assert result["emulator"]["connections_total"] == 4
    assert {c["queue"] for c in result["emulator"]["connections"]} == {0, 1, 2, 3}


def test_64_clients_at_once_and_the_65th_refused(tmp_path):
    with serve(tmp_path, "--queues", "64") as s:
        clients = [connect(s) for _ in range(64)]
        try:
            with connect(s, go=False) as extra:
                [r] = extra.option(n.OPT_GO, n.info_request(""))
                assert r.type == n.REP_ERR_POLICY, r
            errors: list[BaseException] = []

            def work(i: int, c: n.Client) -> None:
                try:
                    for j in range(4):
                        off = (i * 4 + j) * 64 * KiB
                        assert c.write(off, pattern(i * 1000 + j, 16 * KiB)).error == 0
                    for j in range(4):
                        off = (i * 4 + j) * 64 * KiB
                        assert c.read(off, 16 * KiB).data == pattern(i * 1000 + j, 16 * KiB)
                except BaseException as e:  # noqa: BLE001 (handed to the main thread)
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not errors, errors[:3]
        finally:
            for c in clients:
                c.close()
        # A queue pair freed by a closed connection is taken again.
        with connect(s) as c:
            assert c.read(0, 16 * KiB).data == pattern(0, 16 * KiB)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_signal_with_a_client_connected(tmp_path, sig):
    """SIGTERM or SIGINT (Ctrl-C) while a client is connected: exit 0, its connection closed,
    the socket gone."""
    with serve(tmp_path) as s:
        c = connect(s)
        assert c.write(0, pattern(3, 4096)).error == 0
        s.proc.send_signal(sig)
        assert s.proc.wait(30) == 0
        assert c.at_eof()
        c.close()
        assert not s.socket.exists()


def test_replies_leave_out_of_order_as_each_completes(tmp_path):
    """Under the real clock a write (765 us on this flash) sent before reads of other pages
    (90 us) is answered after the reads that do not wait for its die: replies are released as
    requests complete, not in the order they came. (The reads on the write's die wait for the
    program, so four reads over consecutive pages, which span both dies, are sent.)"""
    with served(*ssdkit_args(DEVICE), "--clock", "real", tmp_path=tmp_path) as s, connect(s) as c:
        w = c.send(n.CMD_WRITE, 20 * MiB, data=pattern(20, 4096))
        reads = [c.send(n.CMD_READ, k * 4096, 4096) for k in range(1, 5)]
        replies = [c.reply() for _ in range(5)]
        assert all(r.error == 0 for r in replies)
        assert sorted(r.cookie for r in replies) == sorted([w, *reads])
        assert replies[0].cookie != w, [r.cookie for r in replies]


def test_tcp_on_loopback(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [sys.executable, "-m", "ssdkit", "serve", *ssdkit_args(DEVICE), "--clock", "fast"]
    err = tmp_path / "err"
    with err.open("wb") as e:
        proc = subprocess.Popen([*args, "--listen", f"127.0.0.1:{port}"], stderr=e)
    try:
        deadline = time.monotonic() + 60
        while READY not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"nbd://127.0.0.1:{port}" in err.read_text()
        with n.Client.connect(("127.0.0.1", port)) as c:
            c.handshake()
            assert c.go("").size == SIZE
            assert c.write(0, pattern(5, 4096)).error == 0
            assert c.read(0, 4096).data == pattern(5, 4096)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def test_unknown_export_names(server):
    with connect(server, go=False) as c:
        [r] = c.option(n.OPT_INFO, n.info_request("nope"))
        assert r.type == n.REP_ERR_UNKNOWN
        assert c.info("").size == SIZE
    # EXPORT_NAME has no error reply: the spec's answer to an unknown name is to close.
    with connect(server, go=False) as c:
        c.send_option(n.OPT_EXPORT_NAME, b"nope")
        assert c.at_eof()


def test_export_name_option(tmp_path):
    with serve(tmp_path, "--export-name", "disk0") as s, connect(s, go=False) as c:
        assert c.list_exports() == ["disk0"]
        assert c.info("disk0", (n.INFO_NAME,)).name == "disk0"
        [r] = c.option(n.OPT_GO, n.info_request("ssdkit"))
        assert r.type == n.REP_ERR_UNKNOWN
        assert c.go("").size == SIZE
